#pragma once
// The two faces of a report: the JSON contract of docs/report-json.md, which scripts and
// tests rely on, and a text account written for an operator.

#include "engine/reportdata.h"

#include <QByteArray>
#include <QString>

namespace ts {

QByteArray reportToJson(const ReportData &report);
// The report's "advice" array on its own (whatif prints it too).
QByteArray adviceToJson(const QList<PaceAdvice> &advice);
QString reportToText(const ReportData &report);

} // namespace ts
