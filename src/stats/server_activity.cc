#include "stats/server_activity.h"

#include <unistd.h>

#include <ctime>
#include <utility>

#include "common/clock.h"
#include "common/deadline.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// mongod's ramlog keeps the last 1024 lines.
constexpr size_t kLogLines = 1024;
// currentOp's truncation of a large command (truncateOps): MongoDB's 1 KB.
constexpr size_t kTruncateBytes = 1024;
// The largest command an operation keeps whole (a copy per command: a 48 MB
// insert is not copied for currentOp's sake).
constexpr size_t kKeptCommandBytes = 16 * 1024;

// MongoDB's form of a command cut short: {$truncated: <its JSON, the first
// kTruncateBytes>, comment?}. The JSON is written of the fields that fit.
Document TruncatedCommand(DocumentView command) {
  BsonBuilder prefix;
  size_t size = 0;
  for (Element e : command) {
    const size_t element_size = e.size();
    if (size + element_size > kTruncateBytes) break;
    prefix.AppendElement(e);
    size += element_size;
  }
  std::string json = ToJson(std::move(prefix).Build());
  if (json.size() > kTruncateBytes) json.resize(kTruncateBytes);
  BsonBuilder b;
  b.AppendString("$truncated", json + " ...");
  const Element comment = command.Get("comment");
  if (comment.ok()) b.AppendElement(comment);
  return std::move(b).Build();
}

std::string HostName() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return host;
}

// An ISO-8601 local time with its offset, as currentOp's currentOpTime.
std::string IsoNow() {
  const int64_t ms = WallMillis();
  const time_t secs = static_cast<time_t>(ms / 1000);
  struct tm local;
  localtime_r(&secs, &local);
  char date[32], zone[8];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
  strftime(zone, sizeof zone, "%z", &local);  // +hhmm
  std::string z(zone);
  if (z.size() == 5) z.insert(3, ":");
  char millis[8];
  snprintf(millis, sizeof millis, ".%03d", static_cast<int>(ms % 1000));
  return std::string(date) + millis + z;
}

thread_local const Operation* current_operation = nullptr;

}  // namespace

const Operation* CurrentOperation() { return current_operation; }

OperationScope::OperationScope(const Operation* op) : previous_(current_operation) {
  current_operation = op;
}

OperationScope::~OperationScope() { current_operation = previous_; }

void Operation::SetWaker(std::function<void()> wake) {
  MutexLock lock(&mu_);
  waker_ = std::move(wake);
}

void Operation::Kill() {
  killed.store(true, std::memory_order_release);
  MutexLock lock(&mu_);
  if (waker_) waker_();
}

ServerActivity::ServerActivity() = default;

Document KeptCommand(DocumentView command) {
  if (command.bytes().size() > kKeptCommandBytes) return TruncatedCommand(command);
  return Document::AdoptValidated(std::string(command.bytes()));
}

std::shared_ptr<Operation> ServerActivity::BeginOperation(OperationInfo info) {
  auto op = std::make_shared<Operation>(std::move(info));
  op->opid = next_opid_.fetch_add(1, std::memory_order_relaxed);
  op->start_nanos = MonotonicNanos();
  op->start_wall_ms = WallMillis();
  MutexLock lock(&mu_);
  operations_.emplace(op->opid, op);
  return op;
}

void ServerActivity::EndOperation(const std::shared_ptr<Operation>& op) {
  MutexLock lock(&mu_);
  operations_.erase(op->opid);
}

void ServerActivity::CountInFlight(int64_t* readers, int64_t* writers) const {
  *readers = *writers = 0;
  MutexLock lock(&mu_);
  for (const auto& [id, op] : operations_) ++*(op->info.write ? writers : readers);
}

std::vector<Document> ServerActivity::CurrentOps(const CurrentOpOptions& options) const {
  std::vector<std::shared_ptr<Operation>> ops;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, op] : operations_) ops.push_back(op);
  }
  const std::string host = HostName();
  const std::string now = IsoNow();
  const int64_t now_nanos = MonotonicNanos();
  const Operation* asking = CurrentOperation();
  const std::string* own_user =
      !options.all_users && asking != nullptr && !asking->info.user.empty() ? &asking->info.user
                                                                           : nullptr;
  std::vector<Document> out;
  for (const std::shared_ptr<Operation>& op : ops) {
    if (own_user != nullptr && op->info.user != *own_user) continue;
    BsonBuilder b;
    b.AppendString("type", "op");
    b.AppendString("host", host);
    if (op->info.connection_id != 0) {
      b.AppendString("desc", "conn" + std::to_string(op->info.connection_id));
      b.AppendInt64("connectionId", op->info.connection_id);
      if (!op->info.client.empty()) b.AppendString("client", op->info.client);
    } else {
      b.AppendString("desc", "rockdoc");  // in process: no connection
    }
    if (!op->info.app_name.empty()) b.AppendString("appName", op->info.app_name);
    if (!op->info.user.empty()) {
      const size_t dot = op->info.user.find('.');
      b.OpenArray("effectiveUsers")
          .OpenDocument("")
          .AppendString("user", op->info.user.substr(dot + 1))
          .AppendString("db", op->info.user.substr(0, dot))
          .Close()
          .Close();
    }
    b.AppendBool("active", true);
    b.AppendString("currentOpTime", now);
    b.AppendBool("threaded", true);
    b.AppendInt32("opid", op->opid);
    const int64_t micros = (now_nanos - op->start_nanos) / 1000;
    b.AppendInt64("secs_running", micros / 1000000);
    b.AppendInt64("microsecs_running", micros);
    b.AppendString("op", op->info.op);
    b.AppendString("ns", op->info.ns);
    b.AppendBool("redacted", false);
    if (options.truncate_ops && op->info.command.bytes().size() > kTruncateBytes) {
      b.AppendDocument("command", TruncatedCommand(op->info.command));
    } else {
      b.AppendDocument("command", op->info.command);
    }
    b.AppendInt32("numYields", 0);
    b.OpenDocument("locks").Close();
    b.AppendBool("waitingForLock", false);
    b.OpenDocument("lockStats").Close();
    b.AppendBool("killPending", op->killed.load(std::memory_order_acquire));
    out.push_back(std::move(b).Build());
  }
  return out;
}

bool ServerActivity::Kill(int64_t opid) {
  std::shared_ptr<Operation> op;
  {
    MutexLock lock(&mu_);
    auto it = operations_.find(static_cast<int32_t>(opid));
    if (it == operations_.end() || it->first != opid) return false;
    op = it->second;
  }
  op->Kill();
  return true;
}

void ServerActivity::RecordTop(std::string_view ns, TopColumn column, bool write, int64_t micros) {
  MutexLock lock(&mu_);
  auto it = top_.find(ns);
  if (it == top_.end()) it = top_.emplace(std::string(ns), TopEntry{}).first;
  TopEntry& e = it->second;
  for (TopCell* cell : {&e.total, write ? &e.write_lock : &e.read_lock,
                        &e.columns[static_cast<int>(column)]}) {
    cell->time += micros;
    ++cell->count;
  }
}

void ServerActivity::AppendTop(BsonBuilder* out) const {
  static constexpr const char* kColumns[] = {"queries", "getmore", "insert",
                                             "update",  "remove",  "commands"};
  auto cell = [out](const char* name, const TopCell& c) {
    out->OpenDocument(name);
    out->AppendInt64("time", c.time);
    out->AppendInt64("count", c.count);
    out->Close();
  };
  out->AppendString("note", "all times in microseconds");
  MutexLock lock(&mu_);
  for (const auto& [ns, e] : top_) {
    out->OpenDocument(ns);
    cell("total", e.total);
    cell("readLock", e.read_lock);
    cell("writeLock", e.write_lock);
    for (int i = 0; i < 6; ++i) cell(kColumns[i], e.columns[i]);
    out->Close();
  }
}

void ServerActivity::Log(std::string line) {
  MutexLock lock(&mu_);
  log_.push_back(std::move(line));
  if (log_.size() > kLogLines) log_.pop_front();
  ++log_written_;
}

void ServerActivity::LogEvent(std::string_view component, int id, std::string_view context,
                              std::string_view msg, DocumentView attr) {
  BsonBuilder b;
  b.OpenDocument("t").AppendString("$date", IsoNow()).Close();
  b.AppendString("s", "I");
  b.AppendString("c", component);
  b.AppendInt32("id", id);
  b.AppendString("ctx", context);
  b.AppendString("msg", msg);
  b.AppendDocument("attr", attr);
  // Relaxed Extended JSON, one line, without the writer's spaces.
  std::string json = ToJson(std::move(b).Build());
  std::string compact;
  compact.reserve(json.size());
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\n') {
      continue;
    }
    compact.push_back(c);
  }
  Log(std::move(compact));
}

std::vector<std::string> ServerActivity::RecentLog(int64_t* total_written) const {
  MutexLock lock(&mu_);
  *total_written = log_written_;
  return std::vector<std::string>(log_.begin(), log_.end());
}

}  // namespace rockdoc::internal
