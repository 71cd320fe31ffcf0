// The built-in demo's alerts as the Alerts page shows them: ~74 alerts, most of them one
// bucket near its limit again and again, read as a few grouped rows (issue 18.5), with the
// application GUIDs out of the names (18.4). The whole demo through the same Analysis the
// dashboard uses, then the AlertsModel.
#include "engine/analysis.h"
#include "live/simulator.h"
#include "models/alertsmodel.h"
#include "models/displaynames.h"

#include <QAbstractItemModelTester>
#include <QSet>
#include <QTest>

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
};

QTEST_GUILESS_MAIN(TestDemoAlerts)
#include "tst_demoalerts.moc"
