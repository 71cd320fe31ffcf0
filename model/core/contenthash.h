#pragma once
// The content fingerprint shared by imports (store/) and the file tailer (live/): a file is
// recognised by the hash of its first bytes, whatever its name or inode.

#include <QByteArray>
#include <QByteArrayView>
#include <QCryptographicHash>

namespace ts {

// Hex SHA-1 of `bytes` (40 characters).
inline QByteArray headHashOf(QByteArrayView bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha1).toHex();
}

} // namespace ts
