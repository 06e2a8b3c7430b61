#include "stats/query_stats.h"

#include <algorithm>
#include <cstdio>

#include "common/clock.h"
#include "common/deadline.h"
#include "storage/engine.h"
#include "storage/format.h"

namespace rockdoc::internal {

namespace {

// The last query of this thread that was not itself a join, as it began
// (NoteStart) or ended (Record): an _id read of another collection soon
// after it is an application-level join.
struct LastQuery {
  const QueryStats* store = nullptr;
  std::string db;
  std::string coll;
  int64_t at_nanos = 0;
};
thread_local LastQuery t_last;

constexpr size_t kMaxPersistedEntryBytes = 64 << 10;
constexpr int kMaxPersistedEntryDepth = 90;
constexpr size_t kMaxPersistedBytes = 8 << 20;

// How deep documents and arrays nest in `d` (1: no nesting).
int NestingDepth(DocumentView d, int depth = 1) {
  int deepest = depth;
  if (depth > 120) return depth;
  for (Element e : d) {
    if (e.IsDocument()) deepest = std::max(deepest, NestingDepth(e.Document(), depth + 1));
    if (e.IsArray()) deepest = std::max(deepest, NestingDepth(e.Array(), depth + 1));
  }
  return deepest;
}

int64_t Int(DocumentView d, std::string_view key) {
  Element e = d.Get(key);
  return e.AsExactInt64().value_or(0);
}

}  // namespace

std::string QueryShapeHashText(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

void QueryStats::Metric::Add(int64_t v, bool first) {
  sum += v;
  max = first ? v : std::max(max, v);
  min = first ? v : std::min(min, v);
}

void QueryStats::Metric::Append(std::string_view key, BsonBuilder* b) const {
  b->OpenDocument(key).AppendInt64("sum", sum).AppendInt64("max", max).AppendInt64("min", min).Close();
}

QueryStats::Metric QueryStats::Metric::Read(DocumentView d, std::string_view key) {
  Element e = d.Get(key);
  Metric m;
  if (e.IsDocument()) {
    m.sum = Int(e.Document(), "sum");
    m.max = Int(e.Document(), "max");
    m.min = Int(e.Document(), "min");
  }
  return m;
}

bool QueryStats::Has(const QueryShapeId& id) const {
  MutexLock g(&mu_);
  return entries_.count(id) != 0;
}

void QueryStats::NoteStart(const QueryShapeId& id, const ShapeTraits& traits) {
  if (traits.id_lookup) return;
  t_last.store = this;
  t_last.db = id.db;
  t_last.coll = id.coll;
  t_last.at_nanos = MonotonicNanos();
}

void QueryStats::Record(const QueryShapeId& id, const ShapeTraits& traits,
                        absl::FunctionRef<std::optional<Document>()> make_shape,
                        const QueryRun& run, absl::FunctionRef<std::string()> summarize,
                        const std::vector<std::string>& lookups) {
  // An application-level join: this thread read another collection of
  // the database just before, and now reads this one by _id.
  const int64_t now_nanos = MonotonicNanos();
  std::string joined_after;
  if (traits.id_lookup && t_last.store == this && t_last.db == id.db && t_last.coll != id.coll &&
      now_nanos - t_last.at_nanos <= kJoinWindowNanos) {
    joined_after = t_last.coll;
    t_last.at_nanos = now_nanos;  // a loop of reads (N+1) stays within the window
  } else {
    t_last.store = this;
    t_last.db = id.db;
    t_last.coll = id.coll;
    t_last.at_nanos = now_nanos;
  }
  const int64_t now_ms = WallMillis();
  MutexLock g(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    std::optional<Document> shape = make_shape();
    if (!shape) return;
    if (entries_.size() >= kMaxShapes) EvictOne();
    auto entry = std::make_unique<Entry>();
    entry->id = id;
    entry->shape = std::move(*shape);
    entry->traits = traits;
    entry->first_seen_ms = now_ms;
    it = entries_.emplace(id, std::move(entry)).first;
  }
  Entry& e = *it->second;
  const bool first = e.exec_count == 0;
  ++e.exec_count;
  e.micros.Add(run.micros, first);
  e.keys.Add(run.keys_examined, first);
  e.docs.Add(run.docs_examined, first);
  e.returned.Add(run.returned, first);
  e.last_micros = run.micros;
  e.last_seen_ms = now_ms;
  if (run.collscan) ++e.collscans;
  if (traits.case_insensitive) ++e.case_insensitive_runs;
  if (!run.plan_summary.empty()) {
    e.plan_summary = run.plan_summary;
  } else if (first || e.plan_summary.empty() || run.collscan != e.last_collscan ||
             (e.exec_count & 63) == 0) {
    e.plan_summary = summarize();
  }
  e.last_collscan = run.collscan;
  if (!joined_after.empty()) {
    ++e.app_joins;
    // Bounded: the collections one shape follows are few in practice; past
    // 16, the joins are counted without their source.
    if (e.joined_after.size() < 16 || e.joined_after.count(joined_after) != 0) {
      ++e.joined_after[joined_after];
    }
  }
  for (const std::string& from : lookups) {
    if (e.lookups.size() < 16 || e.lookups.count(from) != 0) ++e.lookups[from];
  }
  e.last_use = ++tick_;
}

void QueryStats::EvictOne() {
  auto oldest = entries_.begin();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second->last_use < oldest->second->last_use) oldest = it;
  }
  if (oldest != entries_.end()) {
    entries_.erase(oldest);
    ++evictions_;
  }
}

Document QueryStats::ToDocument(const Entry& e) const {
  BsonBuilder b;
  b.OpenDocument("key");
  b.OpenDocument("queryShape");
  b.OpenDocument("cmdNs").AppendString("db", e.id.db).AppendString("coll", e.id.coll).Close();
  b.AppendString("command", e.id.command);
  for (Element x : e.shape) b.AppendElement(x);
  b.Close();
  b.AppendString("collectionType", "collection");
  b.Close();
  b.AppendString("queryShapeHash", QueryShapeHashText(e.id.hash));
  b.OpenDocument("metrics");
  b.AppendInt64("lastExecutionMicros", e.last_micros);
  b.AppendInt64("execCount", e.exec_count);
  e.micros.Append("totalExecMicros", &b);
  e.returned.Append("docsReturned", &b);
  e.keys.Append("keysExamined", &b);
  e.docs.Append("docsExamined", &b);
  b.AppendDateTime("firstSeenTimestamp", e.first_seen_ms);
  b.AppendDateTime("latestSeenTimestamp", e.last_seen_ms);
  b.Close();
  // What MongoDB's $queryStats does not have: the advisor's evidence.
  b.OpenDocument("rockdoc");
  b.AppendString("planSummary", e.plan_summary);
  b.AppendInt64("collScans", e.collscans);
  b.AppendBool("caseInsensitiveRegex", e.case_insensitive_runs > 0);
  b.AppendInt64("caseInsensitiveRuns", e.case_insensitive_runs);
  b.AppendBool("idLookup", e.traits.id_lookup);
  b.OpenDocument("appJoins").AppendInt64("count", e.app_joins);
  b.OpenDocument("after");
  for (const auto& [coll, n] : e.joined_after) b.AppendInt64(coll, n);
  b.Close().Close();
  b.OpenDocument("lookups");
  for (const auto& [coll, n] : e.lookups) b.AppendInt64(coll, n);
  b.Close();
  b.Close();
  return std::move(b).Build();
}

StatusOr<QueryStats::Entry> QueryStats::FromDocument(DocumentView d) {
  auto bad = [](std::string_view what) {
    return Status(ErrorCode::kDataCorruptionDetected,
                  "persisted query statistics are damaged: " + std::string(what));
  };
  Element shape = d.Get("key").IsDocument() ? d.Get("key").Document().Get("queryShape") : Element();
  Element metrics = d.Get("metrics");
  Element extra = d.Get("rockdoc");
  Element hash = d.Get("queryShapeHash");
  if (!shape.IsDocument() || !metrics.IsDocument() || !extra.IsDocument() ||
      hash.type() != BsonType::kString || hash.String().size() != 16) {
    return bad("an entry lacks key.queryShape, metrics, rockdoc or queryShapeHash");
  }
  Entry e;
  Element ns = shape.Document().Get("cmdNs");
  Element command = shape.Document().Get("command");
  if (!ns.IsDocument() || ns.Document().Get("db").type() != BsonType::kString ||
      ns.Document().Get("coll").type() != BsonType::kString ||
      command.type() != BsonType::kString) {
    return bad("an entry's shape lacks cmdNs or command");
  }
  e.id.db = std::string(ns.Document().Get("db").String());
  e.id.coll = std::string(ns.Document().Get("coll").String());
  e.id.command = std::string(command.String());
  char* end = nullptr;
  const std::string hex(hash.String());
  e.id.hash = std::strtoull(hex.c_str(), &end, 16);
  if (end != hex.c_str() + hex.size()) return bad("a queryShapeHash is not hexadecimal");
  BsonBuilder sb;
  for (Element x : shape.Document()) {
    if (x.key() != "cmdNs" && x.key() != "command") sb.AppendElement(x);
  }
  e.shape = std::move(sb).Build();
  const DocumentView m = metrics.Document();
  e.last_micros = Int(m, "lastExecutionMicros");
  e.exec_count = Int(m, "execCount");
  e.micros = Metric::Read(m, "totalExecMicros");
  e.returned = Metric::Read(m, "docsReturned");
  e.keys = Metric::Read(m, "keysExamined");
  e.docs = Metric::Read(m, "docsExamined");
  e.first_seen_ms = m.Get("firstSeenTimestamp").AsDateTime().value_or(0);
  e.last_seen_ms = m.Get("latestSeenTimestamp").AsDateTime().value_or(0);
  const DocumentView x = extra.Document();
  if (x.Get("planSummary").type() == BsonType::kString) {
    e.plan_summary = std::string(x.Get("planSummary").String());
  }
  e.collscans = Int(x, "collScans");
  e.case_insensitive_runs = Int(x, "caseInsensitiveRuns");
  e.traits.case_insensitive = e.case_insensitive_runs > 0;
  e.traits.id_lookup = x.Get("idLookup").AsBool().value_or(false);
  Element joins = x.Get("appJoins");
  if (joins.IsDocument()) {
    e.app_joins = Int(joins.Document(), "count");
    Element after = joins.Document().Get("after");
    if (after.IsDocument()) {
      for (Element a : after.Document()) e.joined_after[std::string(a.key())] = a.AsExactInt64().value_or(0);
    }
  }
  Element lookups = x.Get("lookups");
  if (lookups.IsDocument()) {
    for (Element l : lookups.Document()) e.lookups[std::string(l.key())] = l.AsExactInt64().value_or(0);
  }
  return e;
}

std::vector<Document> QueryStats::Entries(std::string_view db, std::string_view coll) const {
  std::vector<const Entry*> chosen;
  MutexLock g(&mu_);
  for (const auto& [id, entry] : entries_) {
    if ((db.empty() || id.db == db) && (coll.empty() || id.coll == coll)) {
      chosen.push_back(entry.get());
    }
  }
  std::sort(chosen.begin(), chosen.end(), [](const Entry* a, const Entry* b) {
    if (a->exec_count != b->exec_count) return a->exec_count > b->exec_count;
    return a->last_use > b->last_use;
  });
  std::vector<Document> out;
  out.reserve(chosen.size());
  for (const Entry* e : chosen) out.push_back(ToDocument(*e));
  return out;
}

void QueryStats::Clear() {
  MutexLock g(&mu_);
  entries_.clear();
  evictions_ = 0;
}

size_t QueryStats::size() const {
  MutexLock g(&mu_);
  return entries_.size();
}

int64_t QueryStats::evictions() const {
  MutexLock g(&mu_);
  return evictions_;
}

Status QueryStats::Persist(const Engine& engine) {
  std::vector<Engine::MetadataWrite> writes;
  {
    MutexLock g(&mu_);
    std::map<std::string, std::vector<const Entry*>> by_db;
    for (const auto& [id, entry] : entries_) by_db[id.db].push_back(entry.get());
    for (const std::string& db : persisted_dbs_) {
      if (by_db.count(db) == 0) {
        writes.push_back({Engine::MetadataWrite::Op::kDelete, QueryStatsKey(db), {}});
      }
    }
    persisted_dbs_.clear();
    for (const auto& [db, entries] : by_db) {
      BsonBuilder b;
      b.OpenArray("entries");
      size_t i = 0;
      size_t bytes = 0;
      for (const Entry* e : entries) {
        // What Load can read back: no entry over 64 KiB or nested near
        // BSON's 100 levels (a shape is the query's own depth, and the
        // value adds four), and the value well under 16 MiB.
        Document d = ToDocument(*e);
        if (d.size() > kMaxPersistedEntryBytes || NestingDepth(d) > kMaxPersistedEntryDepth ||
            bytes + d.size() > kMaxPersistedBytes) {
          continue;
        }
        bytes += d.size();
        b.AppendDocument(std::to_string(i++), d);
      }
      b.Close();
      Document doc = std::move(b).Build();
      writes.push_back({Engine::MetadataWrite::Op::kPut, QueryStatsKey(db), std::string(doc.bytes())});
      persisted_dbs_.push_back(db);
    }
  }
  if (writes.empty()) return Status::OK();
  return engine.WriteMetadata(writes);
}

Status QueryStats::Load(const Engine& engine) {
  std::vector<std::pair<std::string, std::string>> values;  // (db, value)
  ROCKDOC_RETURN_IF_ERROR(engine.ScanMetadata(
      std::string(1, kQueryStatsPrefix), [&](std::string_view key, std::string_view value) {
        values.emplace_back(std::string(key.substr(1)), std::string(value));
        return Status::OK();
      }));
  // A database's value, whole, or a reason it is damaged.
  auto parse = [](const std::string& value) -> StatusOr<std::vector<Entry>> {
    auto bad = [](std::string_view what) {
      return Status(ErrorCode::kDataCorruptionDetected,
                    "persisted query statistics are damaged: " + std::string(what));
    };
    auto doc = Document::FromBytes(value);
    Element entries = doc.ok() ? doc->Get("entries") : Element();
    if (entries.type() != BsonType::kArray) return bad("no entries array");
    std::vector<Entry> out;
    for (Element x : entries.Array()) {
      if (!x.IsDocument()) return bad("an entry is not a document");
      ROCKDOC_ASSIGN_OR_RETURN(Entry e, FromDocument(x.Document()));
      out.push_back(std::move(e));
    }
    return out;
  };
  MutexLock g(&mu_);
  for (auto& [db, value] : values) {
    // Statistics are the engine's own notes, not data: a damaged value is
    // logged and dropped (deleted at the next close), never a reason to
    // refuse the database.
    persisted_dbs_.push_back(db);
    StatusOr<std::vector<Entry>> parsed = parse(value);
    if (!parsed.ok()) {
      engine.LogWarning("the query statistics of database '" + db + "' are dropped: " +
                        std::string(parsed.status().message()));
      continue;
    }
    for (Entry& e : *parsed) {
      if (entries_.size() >= kMaxShapes) break;
      e.last_use = ++tick_;
      QueryShapeId id = e.id;
      entries_.emplace(std::move(id), std::make_unique<Entry>(std::move(e)));
    }
  }
  return Status::OK();
}

// ---- Profiler ----

int Profiler::Level(std::string_view db) const {
  if (!any_level_.load(std::memory_order_acquire)) return 0;
  MutexLock g(&mu_);
  auto it = levels_.find(db);
  return it == levels_.end() ? 0 : it->second;
}

int Profiler::Set(std::string_view db, int level, std::optional<int64_t> slowms,
                  int64_t* was_slowms) {
  MutexLock g(&mu_);
  auto it = levels_.find(db);
  const int was = it == levels_.end() ? 0 : it->second;
  *was_slowms = slowms_.load(std::memory_order_relaxed);
  if (level >= 0) levels_[std::string(db)] = level;
  if (slowms) slowms_.store(*slowms, std::memory_order_relaxed);
  bool any = false;
  for (const auto& [name, l] : levels_) any = any || l > 0;
  any_level_.store(any, std::memory_order_release);
  return was;
}

int64_t Profiler::slowms() const { return slowms_.load(std::memory_order_relaxed); }

bool Profiler::Profiles(std::string_view db, int64_t micros) const {
  const int level = Level(db);
  if (level == 2) return true;
  return level == 1 && micros >= slowms() * 1000;
}

void Profiler::Add(std::string db, Document entry) {
  MutexLock g(&mu_);
  // Bounded by count and by bytes (twice what a system.profile holds):
  // the oldest go first.
  while (!pending_.empty() && (pending_.size() >= kMaxPending ||
                               pending_bytes_ + entry.size() > kMaxPendingBytes)) {
    pending_bytes_ -= pending_.front().second.size();
    pending_.pop_front();
  }
  pending_bytes_ += entry.size();
  pending_.emplace_back(std::move(db), std::move(entry));
}

std::vector<Document> Profiler::Take(std::string_view db) {
  std::vector<Document> out;
  MutexLock g(&mu_);
  std::deque<std::pair<std::string, Document>> rest;
  for (auto& [name, doc] : pending_) {
    if (name == db) {
      pending_bytes_ -= doc.size();
      out.push_back(std::move(doc));
    } else {
      rest.emplace_back(std::move(name), std::move(doc));
    }
  }
  pending_.swap(rest);
  return out;
}

std::vector<std::string> Profiler::PendingDatabases() const {
  std::vector<std::string> out;
  MutexLock g(&mu_);
  for (const auto& [name, doc] : pending_) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace rockdoc::internal
