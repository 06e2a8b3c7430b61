#include "storage/open_checks.h"

#include "common/mutex.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace rockdoc::internal {

namespace {

// The directories this process has open: (device, inode) -> the path as
// the first opener spelled it (for the message).
Mutex registry_mu;
std::map<std::pair<dev_t, ino_t>, std::string>& Registry() {
  static auto* registry = new std::map<std::pair<dev_t, ino_t>, std::string>();
  return *registry;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

const char* KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

}  // namespace

bool IsDatabaseFileName(std::string_view name) {
  for (std::string_view exact :
       {"ROCKDOC", "ROCKDOC.tmp", "ROCKDOC.owner", "CURRENT", "IDENTITY", "LOCK", "LOG"}) {
    if (name == exact) return true;
  }
  for (std::string_view prefix : {"LOG.old.", "MANIFEST-", "OPTIONS-"}) {
    if (StartsWith(name, prefix)) return true;
  }
  for (std::string_view suffix : {".log", ".sst", ".ldb", ".blob", ".dbtmp"}) {
    if (EndsWith(name, suffix)) return true;
  }
  return false;
}

Status FileError(const std::string& action, const std::string& what, int err) {
  std::string reason = err == EACCES || err == EPERM ? "permission denied"
                       : err == EROFS                ? "read-only file system"
                                                     : std::strerror(err);
  return Status(ErrorCode::kFileNotOpen, "cannot " + action + " " + what + ": " + reason);
}

StatusOr<DirectoryClaim> DirectoryClaim::Acquire(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return FileError("examine", path, errno);
  MutexLock g(&registry_mu);
  auto [it, inserted] = Registry().emplace(std::make_pair(st.st_dev, st.st_ino), path);
  if (!inserted) {
    return Status(ErrorCode::kDBPathInUse, "the database directory " + path +
                                               " is locked: this process already has it open (as " +
                                               it->second + ")");
  }
  DirectoryClaim claim;
  claim.held_ = true;
  claim.dev_ = st.st_dev;
  claim.ino_ = st.st_ino;
  return claim;
}

DirectoryClaim::DirectoryClaim(DirectoryClaim&& other) noexcept
    : held_(std::exchange(other.held_, false)), dev_(other.dev_), ino_(other.ino_) {}

DirectoryClaim& DirectoryClaim::operator=(DirectoryClaim&& other) noexcept {
  if (this != &other) {
    Release();
    held_ = std::exchange(other.held_, false);
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

void DirectoryClaim::Release() {
  if (!held_) return;
  held_ = false;
  MutexLock g(&registry_mu);
  Registry().erase({dev_, ino_});
}

namespace {

// Calls `visit(name, st)` with the lstat of each entry of `path` (but "."
// and ".."), until it returns an error.
template <typename Visit>
Status ForEachEntry(const std::string& path, Visit visit) {
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return FileError("read the database directory", path, errno);
  int dir_fd = ::dirfd(d);
  Status result = Status::OK();
  while (result.ok()) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) {
      if (errno != 0) result = FileError("read the database directory", path, errno);
      break;
    }
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) result = FileError("examine", path + "/" + name, errno);
      continue;  // removed meanwhile
    }
    result = visit(name, st);
  }
  ::closedir(d);
  return result;
}

}  // namespace

Status CheckDirectoryAccess(const std::string& path, bool for_writing) {
  // The effective ids decide, as they will for RocksDB's open() calls.
  if (::faccessat(AT_FDCWD, path.c_str(), for_writing ? (R_OK | W_OK | X_OK) : (R_OK | X_OK),
                  AT_EACCESS) != 0) {
    return FileError("open the database directory",
                     path + (for_writing ? " (it needs read, write and search access)"
                                         : " (it needs read and search access)"),
                     errno);
  }
  return ForEachEntry(path, [&](const std::string& name, const struct stat& st) {
    // Non-files are CheckDirectoryEntries' business. RocksDB only renames
    // or deletes the info logs and leftovers of interrupted writes, which
    // takes the directory's permissions alone.
    if (!S_ISREG(st.st_mode) || !IsDatabaseFileName(name) || name == "LOG" ||
        StartsWith(name, "LOG.old.") || name == "ROCKDOC.tmp" || EndsWith(name, ".dbtmp")) {
      return Status::OK();
    }
    // Every file is read; the LOCK file is opened for writing as well.
    std::string file = path + "/" + name;
    int mode = name == "LOCK" && for_writing ? (R_OK | W_OK) : R_OK;
    if (::faccessat(AT_FDCWD, file.c_str(), mode, AT_EACCESS) != 0) {
      return FileError(mode & W_OK ? "write" : "read", file, errno);
    }
    return Status::OK();
  });
}

Status CheckDirectoryEntries(const std::string& path) {
  return ForEachEntry(path, [&](const std::string& name, const struct stat& st) {
    if (S_ISREG(st.st_mode) || (S_ISDIR(st.st_mode) && !IsDatabaseFileName(name))) {
      return Status::OK();
    }
    // Reading a FIFO or a device (a link to /dev/zero, say) blocks forever
    // or never ends; a link can point anywhere. None of them is something
    // rockdoc wrote, so the directory is not a database it can open.
    return Status(ErrorCode::kUnsupportedFormat,
                  "the database directory " + path + " holds " + name + ", which is " +
                      KindOf(st.st_mode) +
                      "; a rockdoc database holds only regular files. It was left untouched");
  });
}

}  // namespace rockdoc::internal
