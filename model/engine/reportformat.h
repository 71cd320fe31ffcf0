#pragma once
// The two faces of a report: the JSON contract of docs/report-json.md, which scripts and
// tests rely on, and a text account written for an operator.

#include "engine/reportdata.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>

namespace ts {

QByteArray reportToJson(const ReportData &report);
// The report's "advice" array on its own (whatif prints it too).
QByteArray adviceToJson(const QList<PaceAdvice> &advice);
QString reportToText(const ReportData &report);

// How many of a breaker's latest transitions the text report prints under it.
inline constexpr int kTextTimelineTransitions = 5;

// Each breaker's transitions (report.breakerTransitions of its scope and source) in time
// order, by breakerTimelineKey(): what `breakers[].timeline` lists. The pointers refer into
// `report`.
QHash<QString, QList<const BreakerTransition *>> breakerTimelines(const ReportData &report);
QString breakerTimelineKey(const QString &scope, const QString &source);
QString breakerTimelineKey(const BreakerSummary &breaker);

} // namespace ts
