#pragma once
// A streaming JSON writer whose output is byte for byte what QJsonDocument::toJson(Indented)
// prints for the same document: the report contract (docs/report-json.md) was first
// written through QJsonDocument, and scripts compare reports as text.
//
// Why not QJsonDocument: building a QJsonObject inserts every member into a sorted CBOR
// container and toJson() walks it again; for the ~1 MB report of a million-line log that was
// ~100 million instructions (~25 ms) on one core after all the parallel work was done, the
// largest serial step of `report`. Writing straight into the output costs a tenth of that.

#include <QByteArray>
#include <QString>
#include <QStringView>

#include <vector>

namespace ts {

class JsonWriter
{
public:
    // Appends to `out`, which must outlive the writer.
    explicit JsonWriter(QByteArray &out) : m_out(out) {}

    void beginObject() { open('{'); }
    void endObject() { close('}'); }
    void beginArray() { open('['); }
    void endArray() { close(']'); }

    // An object member's name; its value follows. QJsonObject keeps members sorted by name
    // (UTF-16 order) and so must the caller: debug builds assert it.
    void key(QStringView name);

    void string(QStringView text);
    void integer(qint64 number);
    // As QJsonDocument prints a double: shortest round-trip form, and null when not finite.
    void number(double value);
    void boolean(bool value);
    void null();

    // A member with a scalar value: key() followed by the value.
    void stringMember(QStringView name, QStringView text)
    {
        key(name);
        string(text);
    }
    void integerMember(QStringView name, qint64 value)
    {
        key(name);
        integer(value);
    }
    void numberMember(QStringView name, double value)
    {
        key(name);
        number(value);
    }
    void booleanMember(QStringView name, bool value)
    {
        key(name);
        boolean(value);
    }

    // Appends `text` escaped as a JSON string body (no quotes): control characters, '"' and
    // '\' escaped, the rest as UTF-8, an unpaired surrogate as \uXXXX, exactly as Qt does.
    static void appendEscaped(QByteArray &out, QStringView text);

private:
    struct Level
    {
        bool empty = true;
#ifndef QT_NO_DEBUG
        QString lastKey; // to assert the member order
#endif
    };
    void open(char bracket);
    void close(char bracket);
    void beforeValue();
    void indent(qsizetype levels);

    QByteArray &m_out;
    std::vector<Level> m_levels;
    bool m_afterKey = false; // a key was written and its value is next
};

} // namespace ts
