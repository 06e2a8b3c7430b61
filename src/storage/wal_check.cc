#include "storage/wal_check.h"

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/wal_filter.h>
#include <rocksdb/write_batch.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "common/endian.h"
#include "storage/engine.h"
#include "storage/rocks.h"

namespace rockdoc::internal {

namespace fs = std::filesystem;

namespace {

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// What the scan has seen so far. The reader reports a drop (through the
// info log) before it hands the filter the next intact record, so drops
// pending when a record arrives lie between it and the record before.
struct ScanState {
  WalScan result;
  std::vector<std::string> pending_drops;
  bool have_previous = false;
  uint64_t next_sequence = 0;  // of the record after the last one seen
  std::string previous_file;
  uint64_t newest_log_expected = 0;  // max over column families of their log number
  bool first_hole_found = false;
};

// RocksDB's info log, kept in memory: nothing is written to the directory,
// and the reader's drop reports ("<file>: dropping N bytes; <reason>") are
// what the scan reports.
class DropLogger : public rocksdb::Logger {
 public:
  explicit DropLogger(ScanState* state)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), state_(state) {}
  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < rocksdb::InfoLogLevel::WARN_LEVEL) return;
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, format, ap);
    std::string_view line(buf);
    size_t dropping = line.find(": dropping ");
    if (dropping == std::string_view::npos) return;
    // "(ignoring error) /dir/000004.log: dropping 14704 bytes; Corruption: ..."
    std::string_view file = line.substr(0, dropping);
    if (size_t p = file.find("(ignoring error) "); p != std::string_view::npos) {
      file = file.substr(p + 17);
    }
    std::string name = BaseName(file);
    state_->pending_drops.push_back(name + std::string(line.substr(dropping)));
    state_->result.damaged_files.insert(name);
  }

 private:
  ScanState* state_;
};

class ContinuityFilter : public rocksdb::WalFilter {
 public:
  explicit ContinuityFilter(ScanState* state) : state_(state) {}

  void ColumnFamilyLogNumberMap(
      const std::map<uint32_t, uint64_t>& cf_lognumber_map,
      const std::map<std::string, uint32_t>& /*cf_name_id_map*/) override {
    for (const auto& [cf, log] : cf_lognumber_map) {
      state_->newest_log_expected = std::max(state_->newest_log_expected, log);
    }
  }

  WalProcessingOption LogRecordFound(unsigned long long /*log_number*/,
                                     const std::string& log_file_name,
                                     const rocksdb::WriteBatch& batch,
                                     rocksdb::WriteBatch* /*new_batch*/,
                                     bool* /*batch_changed*/) override {
    // A WriteBatch's representation starts with its sequence number
    // (fixed64) and its count of operations (fixed32), each operation
    // taking one sequence number (rockdoc's write-committed transactions).
    const std::string& rep = batch.Data();
    if (rep.size() < 12) return WalProcessingOption::kContinueProcessing;
    uint64_t sequence = LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(rep.data()));
    std::string file = BaseName(log_file_name);
    ScanState& s = *state_;
    if (s.first_hole_found) {
      ++s.result.records_after_damage;
    } else if (s.have_previous ? sequence != s.next_sequence : !s.pending_drops.empty()) {
      s.first_hole_found = true;
      s.result.records_after_damage = 1;
      s.result.damaged_files.insert(file);
      std::string what;
      if (s.have_previous && sequence > s.next_sequence) {
        what += "sequence numbers " + std::to_string(s.next_sequence) + " to " +
                std::to_string(sequence - 1) + " are missing";
        if (s.pending_drops.empty()) what += " (a zeroed region in " + s.previous_file + "?)";
      } else if (s.have_previous) {
        what += "sequence number " + std::to_string(sequence) + " follows " +
                std::to_string(s.next_sequence - 1);
      } else {
        what += "the damage precedes the first intact record";
      }
      what += ", and intact records follow in " + file;
      s.result.damage = what;
    }
    for (std::string& d : s.pending_drops) s.result.findings.push_back(std::move(d));
    s.pending_drops.clear();
    s.have_previous = true;
    s.next_sequence = sequence + batch.Count();
    s.previous_file = file;
    return WalProcessingOption::kContinueProcessing;
  }

  const char* Name() const override { return "rockdoc.WalContinuity"; }

 private:
  ScanState* state_;
};

// The numbers of the log files in `dir` ("000012.log" -> 12).
std::vector<uint64_t> LogNumbers(const std::string& dir) {
  std::vector<uint64_t> numbers;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() <= 4 || name.substr(name.size() - 4) != ".log") continue;
    std::string digits = name.substr(0, name.size() - 4);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    numbers.push_back(std::stoull(digits));
  }
  return numbers;
}

}  // namespace

namespace {

// One read-only replay, verifying the closed logs the MANIFEST lists.
rocksdb::Status Replay(const std::string& path, const rocksdb::Options& options,
                       const std::vector<rocksdb::ColumnFamilyDescriptor>& families,
                       ScanState* state) {
  ContinuityFilter filter(state);
  rocksdb::Options o = options;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
  o.wal_filter = &filter;
  o.info_log = std::make_shared<DropLogger>(state);
  o.track_and_verify_wals_in_manifest = true;
  o.statistics = nullptr;  // the user's figures count the user's reads
  // Only the logs are read: do not open every table file up front (the
  // real open does, and checks them).
  o.max_open_files = 20;
  o.create_if_missing = false;
  o.create_missing_column_families = false;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(o, path, families, &handles, &db);
  if (s.ok()) {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    s = db->Close();
    delete db;
  }
  return s;
}

}  // namespace

StatusOr<WalScan> ScanWriteAheadLogs(const std::string& path, const rocksdb::Options& options,
                                     const std::vector<rocksdb::ColumnFamilyDescriptor>& families) {
  // A read-only open takes no lock: take RocksDB's, so that another process
  // writing meanwhile is DBPathInUse rather than a log changing under us.
  rocksdb::Env* env = options.env != nullptr ? options.env : rocksdb::Env::Default();
  rocksdb::FileLock* lock = nullptr;
  rocksdb::Status s = env->LockFile(path + "/LOCK", &lock);
  if (!s.ok()) return OpenError(s, path);

  auto state = std::make_unique<ScanState>();
  s = Replay(path, options, families, state.get());
  env->UnlockFile(lock).PermitUncheckedError();
  WalScan& r = state->result;
  if (s.IsCorruption() && s.ToString().find("WAL") != std::string::npos) {
    // A closed log the MANIFEST lists is missing or shorter than synced
    // ("Missing WAL with log number: 4", "Size mismatch: WAL ..."): damage
    // to report, and for Salvage to get past. (A second, untracked scan is
    // not possible: Debian's RocksDB 7.8 asserts when a read-only open
    // without tracking meets tracked logs.)
    r.damage = s.ToString();
    return std::move(r);
  }
  if (!s.ok()) return OpenError(s, path);

  for (std::string& d : state->pending_drops) r.findings.push_back(d + " (a torn tail: ignored)");
  if (!r.damage.empty()) return std::move(r);

  // The live log is never in the MANIFEST, but its number is at least every
  // column family's log number: with none that new, it was deleted.
  std::vector<uint64_t> logs = LogNumbers(path);
  uint64_t newest = 0;
  for (uint64_t n : logs) newest = std::max(newest, n);
  if (logs.empty()) {
    r.damage =
        "the live write-ahead log is missing: the directory holds no *.log file, though a "
        "database always has one";
  } else if (newest < state->newest_log_expected) {
    char name[32];
    std::snprintf(name, sizeof name, "%06llu.log",
                  static_cast<unsigned long long>(state->newest_log_expected));
    r.damage = std::string("the live write-ahead log is missing: the MANIFEST expects log ") +
               name + " or a newer one";
  }
  return std::move(r);
}

}  // namespace rockdoc::internal
