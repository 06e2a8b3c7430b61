// storage/file_system.h: the RocksDB FileSystem rockdoc opens its directory
// through.
//
// A thin layer over the real file system (or, in the fault-injection tests,
// over a fault-injecting one) that changes two things RocksDB does by default:
//
//  - The info log (the LOG file) is best effort: a line that cannot be
//    written (disk full, I/O error) is dropped. RocksDB's own logger writes
//    through a WritableFileWriter, which after one failed write asserts on
//    the next (`WritableFileWriter::AssertFalseAndGetStatusForPrevError`),
//    and Debian builds librocksdb.a and librocksdb.so alike with assertions
//    live: a full disk aborted the process on the first write after the
//    failure and again on every reopen. The data files' own errors are
//    unaffected and reach the caller as before.
//  - Write-ahead log preallocation is capped at kMaxWalPreallocationBytes.
//    RocksDB reserves 1.1 x write_buffer_size per log (70 MiB with our
//    64 MiB buffers) with fallocate as soon as the log is created, so a
//    database on a disk with little room failed its first writes with most
//    of that reservation unused. The log still grows without limit; it is
//    only reserved a step at a time.
//
// Thread safety: as the wrapped FileSystem (RocksDB calls it from many
// threads).
#ifndef ROCKDOC_STORAGE_FILE_SYSTEM_H_
#define ROCKDOC_STORAGE_FILE_SYSTEM_H_

#include <rocksdb/file_system.h>

#include <cstddef>
#include <memory>

namespace rockdoc::internal {

// How much of a write-ahead log is reserved ahead of what is written.
inline constexpr size_t kMaxWalPreallocationBytes = size_t{4} << 20;

// `base` with the two changes above; `base` == nullptr means the real file
// system (rocksdb::FileSystem::Default()).
std::shared_ptr<rocksdb::FileSystem> NewRockdocFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_FILE_SYSTEM_H_
