// The built-in demo's alerts as the Alerts page shows them: ~74 alerts, most of them one
// bucket near its limit again and again, read as a few grouped rows (issue 18.5), with the
// application GUIDs out of the names (18.4). The whole demo through the same Analysis the
// dashboard uses, then the AlertsModel.
#include "engine/alertdetector.h"
#include "engine/analysis.h"
#include "live/simulator.h"
#include "models/alertsmodel.h"
#include "models/displaynames.h"
#include "signals/throttlesignals.h"

#include <QAbstractItemModelTester>
#include <QSet>
#include <QTest>

#include <algorithm>

using namespace ts;

class TestDemoAlerts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void demoAlertsAreGrouped()
    {
        live::SimulationOptions options;
        options.scenario = QStringLiteral("demo");
        QString error;
        auto simulation = live::Simulation::create(options, &error);
        QVERIFY2(simulation, qPrintable(error));
        QList<RequestEvent> events;
        simulation->advanceTo(simulation->endMs(), &events);
        Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        analysis.onEvents(std::vector<RequestEvent>(events.begin(), events.end()));
        const QList<Alert> alerts = analysis.report().alerts;
        QVERIFY2(alerts.size() >= 50, qPrintable(QString::number(alerts.size())));

        models::AlertsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setAlerts(alerts);
        // Rows: one per kind and key, and their counts add up to every alert.
        QSet<QString> groups;
        for (const Alert &alert : alerts)
            groups.insert(models::AlertsModel::groupKey(alert.kind, alert.key));
        QCOMPARE(model.rowCount(), int(groups.size()));
        QVERIFY2(model.rowCount() * 3 <= alerts.size(),
                 qPrintable(QStringLiteral("%1 rows for %2 alerts")
                                .arg(model.rowCount())
                                .arg(alerts.size())));
        int total = 0;
        int largestNearLimit = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const int count = model.index(row, 0).data(models::AlertsModel::CountRole).toInt();
            total += count;
            if (model.groupAt(row).kind == u"near-limit")
                largestNearLimit = std::max(largestNearLimit, count);
            // No GUID-laden key on screen: an application id is abbreviated or moved out.
            const QString shown = model.index(row, models::AlertsModel::KeyColumn).data().toString();
            QVERIFY2(shown.size() <= 40, qPrintable(shown));
            QCOMPARE(model.index(row, models::AlertsModel::KeyColumn)
                         .data(models::FullTextRole)
                         .toString(),
                     model.groupAt(row).key);
        }
        QCOMPARE(total, int(alerts.size()));
        QVERIFY2(largestNearLimit >= 10, qPrintable(QString::number(largestNearLimit)));
        qInfo("demo: %d alerts in %d rows, largest near-limit group %d", int(alerts.size()),
              model.rowCount(), largestNearLimit);
    }

    // Issue 30.1: the Fabric deployment watched live (the dashboard looks after every second of
    // log). Its RequestBlocked answers carry Retry-After and every operation is retried until
    // it succeeds: no operation may be called lost while its retry is still due. Once the log
    // has ended, what is still unresolved is pending, not lost.
    void liveFabricDeploymentCallsNothingLost()
    {
        live::SimulationOptions options;
        options.scenario = QStringLiteral("fabric-deployment");
        QString error;
        auto simulation = live::Simulation::create(options, &error);
        QVERIFY2(simulation, qPrintable(error));
        AlertParameters parameters;
        parameters.lostWorkMaxNamed = 1'000'000; // every lost operation named
        AlertDetector detector(parameters);
        QSet<QString> calledLost;
        QHash<QString, qint64> lastSuccess;
        qint64 checks = 0;
        for (qint64 t = simulation->startMs(); !simulation->finished(); t += 1000) {
            QList<RequestEvent> events;
            simulation->advanceTo(t, &events);
            for (const RequestEvent &event : events) {
                detector.add(event, throttle::extract(event));
                if (!event.operationId.isEmpty() && event.status >= 200 && event.status < 400)
                    lastSuccess[event.operationId] = event.tsMs;
            }
            if (events.isEmpty())
                continue;
            ++checks;
            for (const Alert &alert : detector.alerts()) {
                if (alert.kind != u"lost-work")
                    continue;
                const QString names = alert.detail.section(QStringLiteral("): "), 1);
                for (const QString &name : names.split(QStringLiteral(", ")))
                    calledLost.insert(name.section(QLatin1Char('.'), 0, 0).trimmed());
            }
        }
        QVERIFY(checks > 50); // seconds with traffic: the workers wait out long blocks
        QStringList laterSucceeded;
        for (const QString &name : std::as_const(calledLost)) {
            if (lastSuccess.contains(name))
                laterSucceeded.append(name);
        }
        QVERIFY2(laterSucceeded.isEmpty(),
                 qPrintable(QStringLiteral("called lost, then succeeded: ") +
                            laterSucceeded.join(QStringLiteral(", "))));
        const QList<Alert> atEnd = detector.alerts();
        QVERIFY(std::none_of(atEnd.begin(), atEnd.end(),
                             [](const Alert &alert) { return alert.kind == u"lost-work"; }));
    }
};

QTEST_GUILESS_MAIN(TestDemoAlerts)
#include "tst_demoalerts.moc"
