#include "storage/encryption.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <rocksdb/env.h>
#include <rocksdb/env_encryption.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include "absl/strings/ascii.h"
#include "json/json_internal.h"
#include "storage/open_checks.h"

namespace rockdoc::internal {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[16] = {'r', 'o', 'c', 'k', 'd', 'o', 'c', '-',
                             'a', 'e', 's', '2', '5', '6', '\0', '\0'};
constexpr size_t kKeyIdOffset = 16;
constexpr size_t kKeyIdBytes = 32;
constexpr size_t kCounterOffset = kKeyIdOffset + kKeyIdBytes;
constexpr size_t kCounterBytes = 16;
constexpr size_t kHeaderBytes = kCounterOffset + kCounterBytes;  // what identifies a file
constexpr size_t kAesBlock = 16;

using KeyId = std::array<unsigned char, kKeyIdBytes>;
using Counter = std::array<unsigned char, kCounterBytes>;

KeyId IdOfKey(const std::string& key) {
  static constexpr std::string_view kDomain = "rockdoc encryption key id";
  std::string input(kDomain);
  input += key;
  KeyId id{};
  unsigned int size = 0;
  EVP_Digest(input.data(), input.size(), id.data(), &size, EVP_sha256(), nullptr);
  OPENSSL_cleanse(input.data(), input.size());
  return id;
}

// The counter block of data block `block` of a file whose first is `start`:
// start + block, as a 128-bit big-endian number (AES-CTR's increment).
Counter CounterAt(const Counter& start, uint64_t block) {
  Counter c = start;
  unsigned carry = 0;
  for (int i = static_cast<int>(kCounterBytes) - 1; i >= 0; --i) {
    unsigned add = carry + (i >= 8 ? static_cast<unsigned>((block >> (8 * (15 - i))) & 0xff) : 0);
    unsigned sum = c[i] + add;
    c[i] = static_cast<unsigned char>(sum & 0xff);
    carry = sum >> 8;
  }
  return c;
}

// The calling thread's cipher context, its key schedule kept while the
// thread goes on with the same key: a block read then only sets the counter
// (a context allocated and a key expanded per call cost cold reads about a
// tenth). Freed at thread exit; the contexts of threads that live to the
// process's end (RocksDB's pools) stay reachable through their TLS.
class ThreadCipher {
 public:
  ~ThreadCipher() {
    if (ctx_ != nullptr) EVP_CIPHER_CTX_free(ctx_);
    OPENSSL_cleanse(key_, sizeof(key_));
  }
  // The context keyed with `key` and set to `counter`; null on failure.
  EVP_CIPHER_CTX* Start(const std::string& key, const Counter& counter) {
    if (ctx_ == nullptr && (ctx_ = EVP_CIPHER_CTX_new()) == nullptr) return nullptr;
    const auto* k = reinterpret_cast<const unsigned char*>(key.data());
    const bool same_key = keyed_ && std::memcmp(key_, k, kEncryptionKeyBytes) == 0;
    keyed_ = EVP_EncryptInit_ex(ctx_, same_key ? nullptr : EVP_aes_256_ctr(), nullptr,
                                same_key ? nullptr : k, counter.data()) == 1;
    if (!keyed_) return nullptr;
    if (!same_key) std::memcpy(key_, k, kEncryptionKeyBytes);
    return ctx_;
  }

 private:
  EVP_CIPHER_CTX* ctx_ = nullptr;
  bool keyed_ = false;
  unsigned char key_[kEncryptionKeyBytes] = {};
};

// AES-256-CTR over `data` in place, as the bytes at `offset` of the
// keystream that starts at `start` (so any range of a file can be read or
// written alone: a block's keystream depends on its position only).
rocksdb::Status CtrXor(const std::string& key, const Counter& start, uint64_t offset, char* data,
                       size_t size) {
  if (size == 0) return rocksdb::Status::OK();
  thread_local ThreadCipher cipher;
  EVP_CIPHER_CTX* ctx = cipher.Start(key, CounterAt(start, offset / kAesBlock));
  bool ok = ctx != nullptr;
  int out = 0;
  // Into the block that holds `offset`: its first bytes' keystream is spent.
  if (ok && offset % kAesBlock != 0) {
    unsigned char skip[kAesBlock] = {};
    ok = EVP_EncryptUpdate(ctx, skip, &out, skip, static_cast<int>(offset % kAesBlock)) == 1;
  }
  auto* bytes = reinterpret_cast<unsigned char*>(data);
  constexpr size_t kStep = size_t{1} << 30;  // EVP takes an int length
  for (size_t done = 0; ok && done < size; done += kStep) {
    int n = static_cast<int>(std::min(kStep, size - done));
    ok = EVP_EncryptUpdate(ctx, bytes + done, &out, bytes + done, n) == 1;
  }
  return ok ? rocksdb::Status::OK() : rocksdb::Status::IOError("AES-256-CTR failed (OpenSSL)");
}

class CtrStream : public rocksdb::BlockAccessCipherStream {
 public:
  CtrStream(std::shared_ptr<const std::string> key, const Counter& start)
      : key_(std::move(key)), start_(start) {}
  size_t BlockSize() override { return kAesBlock; }
  rocksdb::Status Encrypt(uint64_t offset, char* data, size_t size) override {
    return CtrXor(*key_, start_, offset, data, size);
  }
  rocksdb::Status Decrypt(uint64_t offset, char* data, size_t size) override {
    return CtrXor(*key_, start_, offset, data, size);
  }

 protected:
  void AllocateScratch(std::string&) override {}
  rocksdb::Status EncryptBlock(uint64_t block, char* data, char*) override {
    return CtrXor(*key_, start_, block * kAesBlock, data, kAesBlock);
  }
  rocksdb::Status DecryptBlock(uint64_t block, char* data, char*) override {
    return CtrXor(*key_, start_, block * kAesBlock, data, kAesBlock);
  }

 private:
  std::shared_ptr<const std::string> key_;
  Counter start_;
};

// The provider: new files under the write key, any file under a key of the
// ring. Immutable after construction (AddCipher is refused: the keys come
// from ClientOptions alone).
class AesCtrProvider : public rocksdb::EncryptionProvider {
 public:
  AesCtrProvider(const std::string& write_key, const std::vector<std::string>& read_keys) {
    write_id_ = IdOfKey(write_key);
    keys_[write_id_] = std::make_shared<const std::string>(write_key);
    for (const std::string& k : read_keys) keys_.emplace(IdOfKey(k), std::make_shared<const std::string>(k));
  }
  const char* Name() const override { return "rockdoc.AesCtr"; }
  size_t GetPrefixLength() const override { return kEncryptionPrefixBytes; }

  rocksdb::Status CreateNewPrefix(const std::string&, char* prefix, size_t length) const override {
    if (length < kHeaderBytes) return rocksdb::Status::InvalidArgument("prefix too short");
    std::memset(prefix, 0, length);
    std::memcpy(prefix, kMagic, sizeof(kMagic));
    std::memcpy(prefix + kKeyIdOffset, write_id_.data(), kKeyIdBytes);
    // The kernel's CSPRNG (getrandom), not OpenSSL's RAND_bytes: that keeps
    // a DRBG per calling thread, and RocksDB's pool threads, which create
    // most files, live to the process's end, so those were never freed.
    size_t got = 0;
    while (got < kCounterBytes) {
      ssize_t n = ::getrandom(prefix + kCounterOffset + got, kCounterBytes - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return rocksdb::Status::IOError("getrandom failed: " + std::string(strerror(errno)));
      got += static_cast<size_t>(n);
    }
    return rocksdb::Status::OK();
  }

  rocksdb::Status AddCipher(const std::string&, const char*, size_t, bool) override {
    return rocksdb::Status::NotSupported("rockdoc's keys come from ClientOptions");
  }

  rocksdb::Status CreateCipherStream(
      const std::string& fname, const rocksdb::EnvOptions&, rocksdb::Slice& prefix,
      std::unique_ptr<rocksdb::BlockAccessCipherStream>* result) override {
    if (prefix.size() < kEncryptionPrefixBytes &&
        std::memcmp(prefix.data(), kMagic, std::min(prefix.size(), sizeof(kMagic))) == 0) {
      // A creation cut short before its prefix was whole: the file holds no
      // data to decrypt (RocksDB reads it as empty).
      *result = std::make_unique<CtrStream>(keys_.at(write_id_), Counter{});
      return rocksdb::Status::OK();
    }
    if (prefix.size() < kHeaderBytes || std::memcmp(prefix.data(), kMagic, sizeof(kMagic)) != 0) {
      return rocksdb::Status::Corruption(fname + " is not a file rockdoc encrypted");
    }
    KeyId id;
    std::memcpy(id.data(), prefix.data() + kKeyIdOffset, kKeyIdBytes);
    auto it = keys_.find(id);
    if (it == keys_.end()) {
      return rocksdb::Status::InvalidArgument(fname +
                                              " is encrypted under a key this open was not given");
    }
    Counter start;
    std::memcpy(start.data(), prefix.data() + kCounterOffset, kCounterBytes);
    *result = std::make_unique<CtrStream>(it->second, start);
    return rocksdb::Status::OK();
  }

 private:
  KeyId write_id_{};
  std::map<KeyId, std::shared_ptr<const std::string>> keys_;
};

// Over RocksDB's encrypted file system: files shorter than a prefix. A
// crash or power loss can leave a new file with part of its prefix or none,
// which RocksDB's encrypted file system does not expect (its GetFileSize
// asserts that every file holds a whole prefix, and Debian's RocksDB keeps
// assertions live: the process would abort at the next open). Such a file
// holds no data: its size is 0, and before it is appended to again it is
// emptied, so that a whole prefix is written first.
uint64_t DataBytes(uint64_t file_bytes) {
  return file_bytes >= kEncryptionPrefixBytes ? file_bytes - kEncryptionPrefixBytes : 0;
}

class ShortFileGuard : public rocksdb::FileSystemWrapper {
 public:
  ShortFileGuard(std::shared_ptr<rocksdb::FileSystem> encrypted,
                 std::shared_ptr<rocksdb::FileSystem> raw)
      : FileSystemWrapper(std::move(encrypted)), raw_(std::move(raw)) {}
  const char* Name() const override { return "rockdoc.ShortFileGuard"; }

  rocksdb::IOStatus GetFileSize(const std::string& fname, const rocksdb::IOOptions& options,
                                uint64_t* size, rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = raw_->GetFileSize(fname, options, size, dbg);
    if (!s.ok()) return s;
    *size = DataBytes(*size);
    return s;
  }
  rocksdb::IOStatus GetChildrenFileAttributes(const std::string& dir,
                                              const rocksdb::IOOptions& options,
                                              std::vector<rocksdb::FileAttributes>* result,
                                              rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = raw_->GetChildrenFileAttributes(dir, options, result, dbg);
    if (!s.ok()) return s;
    for (rocksdb::FileAttributes& a : *result) a.size_bytes = DataBytes(a.size_bytes);
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override {
    uint64_t raw_size = 0;
    if (raw_->GetFileSize(fname, options.io_options, &raw_size, dbg).ok() && raw_size > 0 &&
        raw_size < kEncryptionPrefixBytes) {
      rocksdb::IOStatus s = raw_->Truncate(fname, 0, options.io_options, dbg);
      if (!s.ok()) return s;
    }
    return target()->ReopenWritableFile(fname, options, result, dbg);
  }

 private:
  std::shared_ptr<rocksdb::FileSystem> raw_;
};

// The files whose prefixes say how the directory is encrypted: those RocksDB
// writes (rockdoc's marker and owner record, and the LOCK, are plain).
bool IsEncryptedKind(const std::string& name) {
  return name != "ROCKDOC" && name != "ROCKDOC.tmp" && name != "ROCKDOC.owner" &&
         name != "LOCK" && IsDatabaseFileName(name);
}

enum class FileState { kShort, kPlain, kEncrypted };

struct FileInfo {
  std::string name;
  FileState state = FileState::kShort;
  KeyId key{};
};

StatusOr<FileInfo> Examine(const fs::path& file) {
  FileInfo info;
  info.name = file.filename().string();
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError("read", file.string(), errno);
  unsigned char header[kHeaderBytes];
  ssize_t got = ::pread(fd, header, sizeof(header), 0);
  struct stat st{};
  int stat_rc = ::fstat(fd, &st);
  int err = errno;
  ::close(fd);
  if (got < 0 || stat_rc != 0) return FileError("read", file.string(), err);
  // A file whose creation was cut short (a crash, a power loss) may hold
  // part of a prefix, or none: no data, and no say about the key.
  const size_t compared = std::min(static_cast<size_t>(std::max<ssize_t>(got, 0)), sizeof(kMagic));
  if (got > 0 && std::memcmp(header, kMagic, compared) != 0) {
    info.state = FileState::kPlain;
  } else if (static_cast<size_t>(got) == kHeaderBytes &&
             static_cast<uint64_t>(st.st_size) >= kEncryptionPrefixBytes) {
    info.state = FileState::kEncrypted;
    std::memcpy(info.key.data(), header + kKeyIdOffset, kKeyIdBytes);
  }
  return info;
}

StatusOr<std::vector<FileInfo>> ExamineDirectory(const std::string& path) {
  std::vector<FileInfo> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(ec) || !IsEncryptedKind(name)) continue;
    ROCKDOC_ASSIGN_OR_RETURN(FileInfo info, Examine(entry.path()));
    files.push_back(std::move(info));
  }
  if (ec) return FileError("list", path, ec.value());
  std::sort(files.begin(), files.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  return files;
}

Status Refuse(const std::string& path, const std::string& why) {
  return Status(ErrorCode::kInvalidOptions,
                "cannot open the database in " + path + ": " + why + "; it was left untouched");
}

}  // namespace

Status CheckEncryptionKey(const std::string& key, const char* what) {
  if (key.size() == kEncryptionKeyBytes) return Status::OK();
  return Status(ErrorCode::kBadValue, std::string(what) + " must be 32 bytes (an AES-256 key), not " +
                                          std::to_string(key.size()));
}

StatusOr<std::string> ReadEncryptionKeyFile(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return FileError("read the encryption key file", path, errno);
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return Status(ErrorCode::kBadValue, "permissions on " + path +
                                            " are too open: an encryption key file must be "
                                            "readable by its owner alone (chmod 600)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileError("read the encryption key file", path, errno);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::string key;
  const absl::string_view text_key = absl::StripAsciiWhitespace(s);  // Debian's absl: its own view
  bool decoded =
      json_internal::DecodeBase64(std::string_view(text_key.data(), text_key.size()), &key);
  OPENSSL_cleanse(s.data(), s.size());
  if (!decoded || key.size() != kEncryptionKeyBytes) {
    return Status(ErrorCode::kBadValue,
                  "the encryption key file " + path +
                      " must hold the base64 of a 32-byte key (as `openssl rand -base64 32` "
                      "writes it)");
  }
  return key;
}

std::shared_ptr<rocksdb::FileSystem> NewEncryptedFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base, const std::string& write_key,
    const std::vector<std::string>& read_keys) {
  if (base == nullptr) base = rocksdb::FileSystem::Default();
  return std::make_shared<ShortFileGuard>(
      rocksdb::NewEncryptedFS(base, std::make_shared<AesCtrProvider>(write_key, read_keys)),
      base);
}

Status CheckDirectoryEncryption(const std::string& path, const std::string& key,
                                const std::vector<std::string>& previous_keys) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<FileInfo> files, ExamineDirectory(path));
  std::vector<KeyId> known;
  if (!key.empty()) known.push_back(IdOfKey(key));
  for (const std::string& k : previous_keys) known.push_back(IdOfKey(k));
  const FileInfo* plain = nullptr;
  const FileInfo* encrypted = nullptr;
  const FileInfo* unknown = nullptr;
  for (const FileInfo& f : files) {
    if (f.state == FileState::kPlain && plain == nullptr) plain = &f;
    if (f.state != FileState::kEncrypted) continue;
    if (encrypted == nullptr) encrypted = &f;
    if (unknown == nullptr && std::find(known.begin(), known.end(), f.key) == known.end()) {
      unknown = &f;
    }
  }
  if (plain != nullptr && encrypted != nullptr) {
    return Refuse(path, "some of its files are encrypted (" + encrypted->name +
                            ") and some are not (" + plain->name +
                            "): an encryption or decryption of the directory stopped part-way; "
                            "run the key rotation again to finish it");
  }
  if (key.empty()) {
    if (encrypted == nullptr) return Status::OK();
    return Refuse(path, "it is encrypted (" + encrypted->name +
                            "): give its key (ClientOptions::encryption_key, or "
                            "--encryptionKeyFile)");
  }
  if (plain != nullptr) {
    return Refuse(path, "it is not encrypted (" + plain->name +
                            " is plain) and an encryption key was given: encrypt it first with a "
                            "key rotation from no key (rockdoc::RotateEncryptionKey), or open it "
                            "without a key");
  }
  if (unknown != nullptr) {
    return Refuse(path, unknown->name +
                            " is encrypted under a key this open was not given: the encryption "
                            "key is wrong, or a key rotation stopped part-way (then give the "
                            "previous key too: ClientOptions::previous_encryption_keys)");
  }
  return Status::OK();
}

Status RotateDirectoryKey(const std::string& path, const std::string& old_key,
                          const std::string& new_key, KeyRotationReport* report,
                          const std::function<Status()>& after_each_file) {
  if (!old_key.empty()) ROCKDOC_RETURN_IF_ERROR(CheckEncryptionKey(old_key, "the old key"));
  if (!new_key.empty()) ROCKDOC_RETURN_IF_ERROR(CheckEncryptionKey(new_key, "the new key"));
  if (old_key.empty() && new_key.empty()) {
    return Status(ErrorCode::kBadValue, "a key rotation needs an old key, a new key, or both");
  }
  *report = KeyRotationReport();
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return Status(ErrorCode::kNonExistentPath, "database directory " + path + " does not exist");
  }
  if (!fs::exists(fs::path(path) / "ROCKDOC", ec)) {
    return Status(ErrorCode::kUnsupportedFormat,
                  path + " is not a rockdoc database (no ROCKDOC marker)");
  }
  ROCKDOC_ASSIGN_OR_RETURN(DirectoryClaim claim, DirectoryClaim::Acquire(path));
  rocksdb::Env* env = rocksdb::Env::Default();
  rocksdb::FileLock* lock = nullptr;
  rocksdb::Status ls = env->LockFile(path + "/LOCK", &lock);
  if (!ls.ok()) {
    return Status(ErrorCode::kDBPathInUse, "cannot rotate the key of " + path +
                                               ": the database is open (" + ls.ToString() + ")");
  }
  struct Unlock {
    rocksdb::Env* env;
    rocksdb::FileLock* lock;
    ~Unlock() { env->UnlockFile(lock).PermitUncheckedError(); }
  } unlock{env, lock};

  // A rotation that stopped part-way left its temporary file.
  constexpr std::string_view kTempSuffix = ".rotating";
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() > kTempSuffix.size() && name.ends_with(kTempSuffix)) fs::remove(entry.path(), ec);
  }

  std::shared_ptr<rocksdb::FileSystem> plain = rocksdb::FileSystem::Default();
  // The file system of files under `key` (plain for none).
  auto under = [&](const std::string& key) {
    return key.empty() ? plain : NewEncryptedFileSystem(plain, key, {});
  };
  std::shared_ptr<rocksdb::FileSystem> reader = under(old_key);
  std::shared_ptr<rocksdb::FileSystem> writer = under(new_key);
  // Whether `f` is under `key` (plain for none).
  auto is_under = [](const FileInfo& f, const std::string& key) {
    return key.empty() ? f.state == FileState::kPlain
                       : f.state == FileState::kEncrypted && f.key == IdOfKey(key);
  };

  ROCKDOC_ASSIGN_OR_RETURN(std::vector<FileInfo> files, ExamineDirectory(path));
  // Every file must be readable before the first is rewritten.
  for (const FileInfo& f : files) {
    if (f.state == FileState::kShort || is_under(f, new_key) || is_under(f, old_key)) continue;
    return Status(ErrorCode::kInvalidOptions,
                  "cannot rotate the key of " + path + ": " + f.name +
                      (f.state == FileState::kPlain ? " is not encrypted"
                                                    : " is encrypted under neither key") +
                      "; nothing was rewritten");
  }
  const rocksdb::IOOptions io;
  std::string buffer(size_t{1} << 20, '\0');
  for (const FileInfo& f : files) {
    if (f.state == FileState::kShort || is_under(f, new_key)) {
      ++report->files_kept;
      continue;
    }
    const std::string source = path + "/" + f.name;
    const std::string temp = source + std::string(kTempSuffix);
    auto io_error = [&](const rocksdb::IOStatus& s) {
      return Status(ErrorCode::kFileNotOpen,
                    "key rotation of " + path + " stopped at " + f.name + ": " + s.ToString());
    };
    std::unique_ptr<rocksdb::FSSequentialFile> in;
    rocksdb::IOStatus s = reader->NewSequentialFile(source, rocksdb::FileOptions(), &in, nullptr);
    if (!s.ok()) return io_error(s);
    std::unique_ptr<rocksdb::FSWritableFile> out;
    s = writer->NewWritableFile(temp, rocksdb::FileOptions(), &out, nullptr);
    if (!s.ok()) return io_error(s);
    while (true) {
      rocksdb::Slice chunk;
      s = in->Read(buffer.size(), io, &chunk, buffer.data(), nullptr);
      if (!s.ok()) return io_error(s);
      if (chunk.empty()) break;
      s = out->Append(chunk, io, nullptr);
      if (!s.ok()) return io_error(s);
      report->bytes_rewritten += chunk.size();
    }
    s = out->Sync(io, nullptr);
    if (s.ok()) s = out->Close(io, nullptr);
    if (s.ok()) s = plain->RenameFile(temp, source, io, nullptr);
    if (!s.ok()) return io_error(s);
    std::unique_ptr<rocksdb::FSDirectory> dir;
    s = plain->NewDirectory(path, io, &dir, nullptr);
    if (s.ok()) s = dir->FsyncWithDirOptions(io, nullptr, rocksdb::DirFsyncOptions());
    if (!s.ok()) return io_error(s);
    ++report->files_rewritten;
    if (after_each_file) ROCKDOC_RETURN_IF_ERROR(after_each_file());
  }
  return Status::OK();
}

}  // namespace rockdoc::internal
