#pragma once
// Shared by the workspace tests: reads the file itself, not through the code under test.

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

namespace ts::testutil {

// One value from an SQL query on its own short-lived connection (an invalid QVariant when the
// file cannot be opened or the query returns no row).
inline QVariant sqlScalar(const QString &databasePath, const QString &sql)
{
    static int serial = 0;
    const QString name = QStringLiteral("tst-sql-scalar-%1").arg(++serial);
    QVariant value;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(databasePath);
        if (db.open()) {
            QSqlQuery query(db);
            if (query.exec(sql) && query.next())
                value = query.value(0);
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return value;
}

} // namespace ts::testutil
