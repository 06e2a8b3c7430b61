// storage/wal_check.h: telling a torn tail of the write-ahead log from
// damage that would silently drop acknowledged writes.
//
// RocksDB's recovery modes each get one case wrong for rockdoc:
// kPointInTimeRecovery (what rockdoc opened with) stops at the first damage
// and drops every later record without an error; kTolerateCorruptedTailRecords
// and kAbsoluteConsistency refuse a checksum mismatch in the last record (a
// power loss during the last, unacknowledged write); and no mode reports a
// zeroed region that starts on a record boundary (the reader takes zeros for
// preallocated space). track_and_verify_wals_in_manifest catches a missing or
// shortened *closed* log only: the live one is not in the MANIFEST.
//
// So before the real open, the logs are replayed read-only (nothing in the
// directory is written: RocksDB's info log goes to memory, no table file is
// flushed) with kSkipAnyCorruptedRecords, so that the reader goes on past
// damage, and a WalFilter checks that the sequence numbers of the records it
// sees are contiguous. Damage after which no record follows is a torn tail:
// fine, and kPointInTimeRecovery then drops exactly it. Damage followed by a
// record whose sequence number is not the next one means intact, later
// writes survive an earlier loss: the open is refused. A MANIFEST that
// expects a log at least as new as the newest present means the live log
// was deleted.
//
// Thread safety: ScanWriteAheadLogs may run concurrently for different
// directories.
#ifndef ROCKDOC_STORAGE_WAL_CHECK_H_
#define ROCKDOC_STORAGE_WAL_CHECK_H_

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "rockdoc/status.h"

namespace rockdoc::internal {

struct WalScan {
  // What the reader dropped, one line each ("000004.log: dropping 14704
  // bytes; Corruption: checksum mismatch"), torn tails included.
  std::vector<std::string> findings;
  // Empty when replaying the logs keeps every intact record; otherwise what
  // is wrong beyond the findings ("sequence numbers 452 to 478 are missing,
  // and intact records follow in 000004.log"; "the live write-ahead log is
  // missing: ...").
  std::string damage;
  // Intact log records (write batches: one transaction, or several that
  // concurrent writers committed together) that follow the first hole.
  int64_t records_after_damage = 0;
  // The log files in which something was dropped or found missing.
  std::set<std::string> damaged_files;
};

// Replays the logs of the database at `path` read-only as described above,
// holding RocksDB's LOCK meanwhile (DBPathInUse when another process has the
// directory). `options` and `families` are those of the real open. An error
// status when RocksDB itself refuses (a missing closed log, a damaged
// MANIFEST: DataCorruptionDetected).
StatusOr<WalScan> ScanWriteAheadLogs(const std::string& path, const rocksdb::Options& options,
                                     const std::vector<rocksdb::ColumnFamilyDescriptor>& families);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_WAL_CHECK_H_
