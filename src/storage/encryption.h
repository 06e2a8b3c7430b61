// storage/encryption.h: encryption at rest, AES-256 in CTR mode through
// OpenSSL's EVP, under RocksDB's encrypted file system.
//
// With ClientOptions::encryption_key set, every file RocksDB writes under the
// database directory (table files, write-ahead logs, the MANIFEST, CURRENT,
// OPTIONS, the info log, spill runs in _tmp/, and the files of a checkpoint)
// goes through rocksdb::NewEncryptedFS with the provider below. Each file
// starts with a 4096-byte plain prefix:
//
//   bytes  0..16  "rockdoc-aes256\0\0" (the mark of a rockdoc-encrypted file)
//   bytes 16..48  the key's id: SHA-256("rockdoc encryption key id" || key),
//                 which names the key without revealing it
//   bytes 48..64  the file's initial counter block, random (getrandom)
//   the rest      zeros
//
// and the bytes after it are AES-256-CTR of the data under that key and
// counter, block i of the data using counter + i. CTR gives confidentiality,
// not integrity: RocksDB's own checksums (blocks, log records, the MANIFEST)
// are what detect a damaged or altered file. The ROCKDOC marker (the format
// version) and ROCKDOC.owner (the owner's pid and program) are written by
// rockdoc itself, in plain text, and hold no data.
//
// The key never touches the directory. Before RocksDB opens it, the engine
// reads the prefix of every file (CheckDirectoryEncryption), so that a
// missing or wrong key is InvalidOptions naming what the directory needs, and
// nothing in the directory is written.
//
// Keys are rotated offline (RotateDirectoryKey): each file under another key
// (or plain, to encrypt a database; or to the plain form, to decrypt one) is
// rewritten to a temporary file under the new key, synced, and renamed over
// the original, so a crash part-way leaves each file whole under one key or
// the other: the directory then opens with both (previous_encryption_keys),
// and running the rotation again finishes it.
//
// Thread safety: the file system and its provider are used by RocksDB from
// many threads: the key ring is immutable after construction, and each
// encryption call uses a cipher context of its own.
#ifndef ROCKDOC_STORAGE_ENCRYPTION_H_
#define ROCKDOC_STORAGE_ENCRYPTION_H_

#include <rocksdb/file_system.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rockdoc/options.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// An AES-256 key: 32 bytes.
inline constexpr size_t kEncryptionKeyBytes = 32;
// The plain prefix of every encrypted file.
inline constexpr size_t kEncryptionPrefixBytes = 4096;

// BadValue unless `key` is kEncryptionKeyBytes long.
Status CheckEncryptionKey(const std::string& key, const char* what);

// The key in a file as mongod's --encryptionKeyFile holds it: the base64 of
// 32 bytes (surrounding whitespace ignored). BadValue for a file that does
// not hold one, or whose permissions let its group or others read it
// (mongod's "permissions on <file> are too open"); the errno's message for
// one that cannot be read.
StatusOr<std::string> ReadEncryptionKeyFile(const std::string& path);

// `base` (nullptr: the real file system) with every file encrypted under
// `write_key` and readable under it or any of `read_keys`.
std::shared_ptr<rocksdb::FileSystem> NewEncryptedFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base, const std::string& write_key,
    const std::vector<std::string>& read_keys);

// What the files of a database directory say of their encryption, read from
// their prefixes (the ROCKDOC marker, ROCKDOC.owner, LOCK and files shorter
// than a prefix aside). `key` empty: the directory must hold no encrypted
// file. Otherwise no plain file, and no file under a key other than `key`
// and `previous_keys`. InvalidOptions (72) naming the first file that does
// not fit, and what the open needs; nothing is written.
Status CheckDirectoryEncryption(const std::string& path, const std::string& key,
                                const std::vector<std::string>& previous_keys);

// Rewrites every file of the directory `path` that is not under `new_key`
// (empty: to plain files) from `old_key` (empty: from plain files; files
// already under new_key are kept, so that a rotation that stopped part-way
// runs again to its end). The directory must not be open (RocksDB's LOCK is
// taken: DBPathInUse otherwise). `after_each_file` (tests) runs after each
// rewrite and stops the rotation when it returns an error, as a crash would.
Status RotateDirectoryKey(const std::string& path, const std::string& old_key,
                          const std::string& new_key, KeyRotationReport* report,
                          const std::function<Status()>& after_each_file = nullptr);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_ENCRYPTION_H_
