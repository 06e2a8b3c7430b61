// storage/open_checks.h: what Engine::Open checks about a directory before
// RocksDB touches it.
//
//  - DirectoryClaim: one open per directory per process, whatever the path
//    spelling. RocksDB's own in-process lock table is keyed by the path
//    string, and POSIX record locks do not conflict within one process, so
//    `tdb` and `./tdb` would otherwise both open and corrupt each other.
//  - CheckDirectoryAccess: permission problems reported as such, naming the
//    path, before they surface as a misleading RocksDB or marker error.
//  - CheckDirectoryEntries: no symlinks, FIFOs, devices or sockets where
//    rockdoc or RocksDB read files (a FIFO or /dev/zero hangs the open).
//
// Thread safety: all functions are thread-safe.
#ifndef ROCKDOC_STORAGE_OPEN_CHECKS_H_
#define ROCKDOC_STORAGE_OPEN_CHECKS_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "rockdoc/status.h"

namespace rockdoc::internal {

// A process-wide claim on a database directory, identified by device and
// inode. Held for an engine's life; released by Release() or destruction.
class DirectoryClaim {
 public:
  // Claims the existing directory at `path`. DBPathInUse (98) when this
  // process already holds it (under any spelling); FileNotOpen (38) when it
  // cannot be examined.
  static StatusOr<DirectoryClaim> Acquire(const std::string& path);

  DirectoryClaim() = default;  // holds nothing
  DirectoryClaim(DirectoryClaim&& other) noexcept;
  DirectoryClaim& operator=(DirectoryClaim&& other) noexcept;
  DirectoryClaim(const DirectoryClaim&) = delete;
  DirectoryClaim& operator=(const DirectoryClaim&) = delete;
  ~DirectoryClaim() { Release(); }

  void Release();

 private:
  bool held_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// FileNotOpen (38) naming the path and saying "permission denied" (or
// "read-only file system") when this process cannot read, write and search
// the directory, read a file in it, or write its LOCK file. Without
// `for_writing` (a read-only open), reading and searching are enough.
Status CheckDirectoryAccess(const std::string& path, bool for_writing = true);

// UnsupportedFormat (12) naming the entry when the directory holds a
// symlink, FIFO, device or socket, or a subdirectory under a name rockdoc or
// RocksDB uses for a file. Other subdirectories (lost+found) are allowed.
Status CheckDirectoryEntries(const std::string& path);

// True for a name rockdoc or RocksDB reads or writes as a file in a
// database directory (ROCKDOC, CURRENT, MANIFEST-*, *.sst, *.log, ...).
bool IsDatabaseFileName(std::string_view name);

// A FileNotOpen status for a failed system call on `what` with `err`
// (errno), phrased "permission denied" / "read-only file system" for those.
Status FileError(const std::string& action, const std::string& what, int err);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_OPEN_CHECKS_H_
