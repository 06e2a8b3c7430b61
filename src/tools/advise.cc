// The schema advisor (rockdoc/advisor.h): statistics of a sample of each
// collection's documents and of its indexes, judged by the rules below.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "rockdoc/advisor.h"
#include "rockdoc/json.h"

namespace rockdoc::advisor {
namespace {

// ---- Thresholds (the header lists them; the tests pin them) ----
constexpr int64_t kLargeArray = 250;            // Compass' unbounded-array rule
constexpr int64_t kHugeArray = 10000;
constexpr int64_t kBloatedP90 = int64_t{1} << 20;  // 1 MiB
constexpr int64_t kMaxBsonSize = int64_t{16} << 20;
constexpr int64_t kNearLimit = kMaxBsonSize / 2;   // 8 MiB
constexpr size_t kManyIndexes = 10;  // or more besides _id: more than 10 with it
constexpr size_t kManyCollections = 10000;
constexpr int64_t kMaxUnusedDays = 36500;  // a century: days beyond it mean "never"
// Query statistics ($queryStats):
constexpr int64_t kInefficientRatio = 100;     // documents or keys examined per one returned
constexpr int64_t kInefficientMinExamined = 1000;  // over the shape's runs: enough evidence
constexpr int64_t kJoinMinCount = 10;          // application-level joins or $lookup runs
constexpr double kJoinMinShare = 0.5;          // of the reads of the collection joined from
constexpr int64_t kNarrowDocP50 = 16 << 10;    // 16 KiB: four RocksDB data blocks
constexpr size_t kNarrowMaxFields = 5;         // fields a narrow projection returns
constexpr double kNarrowMinShare = 0.5;        // of the collection's find runs
// What a large array's finding advises, from the sample or the growth
// statistics.
constexpr char kLargeArrayRemedy[] =
    "Keep a bounded subset embedded (the most recent or most used, subset pattern) and the rest "
    "in a collection of its own that references the parent (one-to-squillions); or bucket the "
    "elements (bucket pattern); or move only the outliers out (outlier pattern).";
// Lengths and sizes kept per path (a uniform reservoir) for percentiles.
constexpr size_t kReservoir = 10000;

// A value's distribution: count, max and a uniform sample for percentiles.
class Distribution {
 public:
  void Add(int64_t v, std::mt19937_64* rng) {
    ++count_;
    max_ = std::max(max_, v);
    sum_ += static_cast<double>(v);
    if (sample_.size() < kReservoir) {
      sample_.push_back(v);
    } else {
      uint64_t j = (*rng)() % static_cast<uint64_t>(count_);
      if (j < kReservoir) sample_[j] = v;
    }
    sorted_ = false;
  }
  int64_t count() const { return count_; }
  int64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0 : sum_ / static_cast<double>(count_); }
  // The nearest-rank percentile (p in (0, 100]) of the sample.
  int64_t Percentile(double p) {
    if (sample_.empty()) return 0;
    if (!sorted_) {
      std::sort(sample_.begin(), sample_.end());
      sorted_ = true;
    }
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sample_.size())));
    return sample_[std::clamp<size_t>(rank, 1, sample_.size()) - 1];
  }
  void AppendTo(BsonBuilder* b) {
    b->AppendInt64("count", count_)
        .AppendInt64("p50", Percentile(50))
        .AppendInt64("p90", Percentile(90))
        .AppendInt64("p99", Percentile(99))
        .AppendInt64("max", max_);
  }

 private:
  int64_t count_ = 0;
  int64_t max_ = 0;
  double sum_ = 0;
  std::vector<int64_t> sample_;
  bool sorted_ = false;
};

// An array path's statistics: its lengths, and what its elements are.
struct ArrayStats {
  Distribution lengths;
  int64_t large = 0;  // arrays of kLargeArray elements or more
  std::map<std::string, int64_t> element_types;  // "document", "objectId", ...
};

const char* ElementKind(BsonType t) {
  switch (t) {
    case BsonType::kDocument: return "document";
    case BsonType::kObjectId: return "objectId";
    case BsonType::kString: return "string";
    case BsonType::kArray: return "array";
    default: return "other";
  }
}

// Every array of `doc`, by path ("a.b"; positions inside arrays left out, so
// the arrays of every element of "comments" are "comments.replies").
void CollectArrays(DocumentView doc, const std::string& prefix, std::map<std::string, ArrayStats>* out,
                   std::mt19937_64* rng, int depth = 0) {
  if (depth > 100) return;  // BSON nests at most 100 levels deep
  for (Element e : doc) {
    std::string path = prefix.empty() ? std::string(e.key()) : prefix + "." + std::string(e.key());
    if (e.IsDocument()) {
      CollectArrays(e.Document(), path, out, rng, depth + 1);
    } else if (e.IsArray()) {
      ArrayStats& s = (*out)[path];
      int64_t n = 0;
      for (Element item : e.Array()) {
        ++n;
        ++s.element_types[ElementKind(item.type())];
        if (item.IsDocument()) CollectArrays(item.Document(), path, out, rng, depth + 1);
      }
      s.lengths.Add(n, rng);
      if (n >= kLargeArray) ++s.large;
    }
  }
}

std::string Bytes(int64_t n) {
  char buf[32];
  if (n >= (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(n) / (1 << 20));
  } else if (n >= 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", static_cast<double>(n) / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(n));
  }
  return buf;
}

// An index's key fields and directions (+1, -1), in order; nullopt when a
// field is not ascending or descending (2dsphere, text, hashed: such an
// index holds only the documents that have the field, so it covers no
// other index).
std::optional<std::vector<std::pair<std::string, int>>> KeyFields(DocumentView key) {
  std::vector<std::pair<std::string, int>> out;
  for (Element e : key) {
    if (!e.IsNumber() || e.NumberAsDouble() == 0) return std::nullopt;
    out.emplace_back(std::string(e.key()), e.NumberAsDouble() > 0 ? 1 : -1);
  }
  return out;
}

bool Truthy(DocumentView spec, std::string_view field) {
  Element e = spec.Get(field);
  if (!e.ok()) return false;
  if (e.IsBool()) return e.Bool();
  if (e.IsNumber()) return e.NumberAsDouble() != 0;
  return true;
}

// What makes an index more than its key: then it is not redundant.
bool HasOwnOptions(DocumentView spec) {
  return Truthy(spec, "unique") || Truthy(spec, "sparse") || Truthy(spec, "hidden") ||
         spec.Get("partialFilterExpression").ok() || spec.Get("expireAfterSeconds").ok() ||
         spec.Get("collation").ok();
}

// The query statistics of one namespace: $queryStats' documents.
using ShapesByNs = std::map<std::string, std::vector<Document>>;

int64_t Metric(DocumentView entry, std::string_view path) {
  Element e = entry.GetPath(path);
  return e.IsNumber() ? e.AsExactInt64().value_or(0) : 0;
}

// The shape's fields ("key.queryShape") without cmdNs and command: what a
// person reads as the query ({filter, sort, projection} or {pipeline}).
Document ShapeOf(DocumentView entry) {
  BsonBuilder b;
  Element shape = entry.GetPath("key.queryShape");
  if (shape.IsDocument()) {
    for (Element e : shape.Document()) {
      if (e.key() != "cmdNs") b.AppendElement(e);
    }
  }
  return std::move(b).Build();
}

// The advisor's own reads of a collection ({pipeline: []} with --full,
// [{$sample}] otherwise): recorded like any read when the client keeps
// statistics (db.advise() in the shell), and left out of the evidence.
bool AdvisorShape(DocumentView entry) {
  Element command = entry.GetPath("key.queryShape.command");
  Element pipeline = entry.GetPath("key.queryShape.pipeline");
  if (!command.IsString() || command.String() != "aggregate" || !pipeline.IsArray()) return false;
  auto it = pipeline.Array().begin();
  if (it == pipeline.Array().end()) return true;
  const Element first = *it;
  return ++it == pipeline.Array().end() && first.IsDocument() && first.Document().Get("$sample").ok();
}

// Whether a shape reads documents by a filter an index could serve: a
// find, count or distinct, or a pipeline that starts with $match. (A
// pipeline of $sample alone, the advisor's own, reads everything by design.)
// A distinct returns values, not documents, and a pipeline that groups,
// counts, unwinds or joins returns something else than what its find
// examined: neither ratio says anything of an index, so only pipelines of
// $match (first), $sort, $skip, $limit and $project are judged.
bool FilterShape(DocumentView entry) {
  Element command = entry.GetPath("key.queryShape.command");
  if (!command.IsString() || command.String() == "distinct") return false;
  if (command.String() != "aggregate") return true;
  Element pipeline = entry.GetPath("key.queryShape.pipeline");
  if (!pipeline.IsArray()) return false;
  bool first = true;
  for (Element stage : pipeline.Array()) {
    if (!stage.IsDocument() || stage.Document().empty()) return false;
    const std::string_view name = (*stage.Document().begin()).key();
    if (first ? name != "$match"
              : name != "$sort" && name != "$skip" && name != "$limit" && name != "$project") {
      return false;
    }
    first = false;
  }
  return !first;
}

// The filter of a filter shape (a find's, or its pipeline's leading $match).
DocumentView FilterOf(DocumentView entry) {
  Element filter = entry.GetPath("key.queryShape.filter");
  if (filter.IsDocument()) return filter.Document();
  Element match = entry.GetPath("key.queryShape.pipeline.0.$match");
  return match.IsDocument() ? match.Document() : DocumentView();
}

// The index the equality-sort-range rule suggests for a filter and sort:
// the fields compared by equality ($eq, $in), then the sort's, then those
// compared by range; nullopt when the filter has an $or or $nor (an index
// per clause: *has_or), or no field an index serves.
std::optional<Document> SuggestIndex(DocumentView filter, DocumentView sort, bool* has_or) {
  std::vector<std::string> equality, range;
  bool unsuitable = false;
  auto add = [](std::vector<std::string>* v, std::string_view f) {
    if (std::find(v->begin(), v->end(), f) == v->end()) v->emplace_back(f);
  };
  std::function<void(DocumentView)> walk = [&](DocumentView f) {
    for (Element e : f) {
      if (e.key() == "$and" && e.IsArray()) {
        for (Element c : e.Array()) {
          if (c.IsDocument()) walk(c.Document());
        }
        continue;
      }
      if (e.key() == "$or" || e.key() == "$nor") {
        unsuitable = true;
        continue;
      }
      if (!e.key().empty() && e.key()[0] == '$') continue;  // $expr, $text, ...
      bool eq = false, rng = false;
      if (e.IsDocument()) {
        for (Element op : e.Document()) {
          if (op.key() == "$eq" || op.key() == "$in") eq = true;
          else if (op.key() == "$gt" || op.key() == "$gte" || op.key() == "$lt" ||
                   op.key() == "$lte" || op.key() == "$regex" || op.key() == "$ne" ||
                   op.key() == "$nin" || op.key() == "$exists" || op.key() == "$elemMatch") rng = true;
        }
      }
      if (eq) add(&equality, e.key());
      else if (rng) add(&range, e.key());
    }
  };
  walk(filter);
  *has_or = unsuitable;
  if (unsuitable || (equality.empty() && range.empty() && sort.empty())) return std::nullopt;
  BsonBuilder b;
  std::vector<std::string> used;
  for (const std::string& f : equality) {
    b.AppendInt32(f, 1);
    used.push_back(f);
  }
  for (Element e : sort) {
    if (std::find(used.begin(), used.end(), e.key()) != used.end()) continue;
    b.AppendInt32(e.key(), e.IsNumber() && e.NumberAsDouble() < 0 ? -1 : 1);
    used.emplace_back(e.key());
  }
  for (const std::string& f : range) {
    if (std::find(used.begin(), used.end(), f) != used.end()) continue;
    b.AppendInt32(f, 1);
    used.push_back(f);
  }
  return std::move(b).Build();
}

std::string Percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", share * 100);
  return buf;
}

class Examiner {
 public:
  Examiner(const AdviseOptions& options, AdviseReport* report, ShapesByNs shapes)
      : options_(options), report_(report), shapes_(std::move(shapes)) {}

  Status ExamineDatabase(const Client& client, const std::string& db_name) {
    ++report_->databases;
    Database db = client.GetDatabase(db_name);
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Database::CollectionInfo> infos, db.ListCollections());
    size_t collections = 0;
    for (const Database::CollectionInfo& info : infos) {
      if (info.is_view) continue;
      if (!options_.collection.empty() && info.name != options_.collection) continue;
      ++collections;
      ++report_->collections;
      ROCKDOC_RETURN_IF_ERROR(ExamineCollection(db.GetCollection(info.name), db_name + "." + info.name));
    }
    Separated(db_name);
    if (options_.collection.empty() && collections >= kManyCollections) {
      Finding f;
      f.rule = "too-many-collections";
      f.severity = Severity::kWarning;
      f.ns = db_name;
      f.summary = std::to_string(collections) + " collections in database " + db_name;
      f.rule_of_thumb =
          "Avoid a massive number of collections: each has its own indexes and files, whatever "
          "it holds.";
      BsonBuilder e;
      e.AppendInt64("collections", static_cast<int64_t>(collections))
          .AppendInt64("threshold", static_cast<int64_t>(kManyCollections));
      f.evidence = std::move(e).Build();
      f.remedy =
          "Merge collections of the same shape into one, with a field that tells them apart "
          "(indexed first where queries select by it); drop collections no longer used.";
      report_->findings.push_back(std::move(f));
    }
    return Status::OK();
  }

 private:
  Status ExamineCollection(const Collection& coll, const std::string& ns) {
    if (options_.progress != nullptr) *options_.progress << "examining " << ns << "\n";
    std::map<std::string, ArrayStats> arrays;
    Distribution sizes;
    std::mt19937_64 rng(0x5eed);  // a fixed seed: the same statistics of the same sample
    StatusOr<Cursor> cursor = [&]() -> StatusOr<Cursor> {
      // An empty pipeline: every document (see AdvisorShape).
      BsonBuilder p;
      p.OpenArray("p");
      if (!options_.full) {
        p.OpenDocument("").OpenDocument("$sample").AppendInt64("size", options_.sample_size).Close().Close();
      }
      p.Close();
      Document pipeline = std::move(p).Build();
      return coll.Aggregate(pipeline.Get("p").Array());
    }();
    ROCKDOC_RETURN_IF_ERROR(cursor.status());
    while (cursor->Next()) {
      DocumentView doc = cursor->document();
      sizes.Add(static_cast<int64_t>(doc.size()), &rng);
      CollectArrays(doc, "", &arrays, &rng);
      ++report_->documents_examined;
    }
    ROCKDOC_RETURN_IF_ERROR(cursor->status());
    const size_t first_finding = report_->findings.size();
    for (auto& [path, stats] : arrays) LargeArray(ns, path, &stats, sizes.count());
    Bloated(ns, &sizes);
    ROCKDOC_RETURN_IF_ERROR(FromGrowthStatistics(coll, ns, arrays, sizes.count(), first_finding));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> indexes, coll.ListIndexes());
    Indexes(ns, indexes);
    CollectionFacts& facts = facts_[ns];
    ROCKDOC_ASSIGN_OR_RETURN(facts.count, coll.EstimatedDocumentCount());
    facts.p50_size = sizes.Percentile(50);
    for (auto& [path, stats] : arrays) facts.p50_array = std::max(facts.p50_array, stats.lengths.Percentile(50));
    auto shapes = shapes_.find(ns);
    if (shapes != shapes_.end()) {
      for (const Document& entry : shapes->second) Inefficient(ns, entry, indexes);
      CaseInsensitive(ns, shapes->second);
      NarrowReads(ns, &sizes, shapes->second);
    }
    return Unused(coll, ns);
  }

  // Indexes without a use ($indexStats) since they were created, at least
  // options_.unused_index_days ago.
  Status Unused(const Collection& coll, const std::string& ns) {
    BsonBuilder p;
    p.OpenArray("p").OpenDocument("").OpenDocument("$indexStats").Close().Close().Close();
    Document stage = std::move(p).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll.Aggregate(stage.Get("p").Array()));
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    const int64_t min_age_ms = std::min<int64_t>(options_.unused_index_days, kMaxUnusedDays) * 86400000;
    while (cursor.Next()) {
      DocumentView s = cursor.document();
      Element name = s.Get("name"), ops = s.GetPath("accesses.ops"), since = s.GetPath("accesses.since");
      if (!name.IsString() || name.String() == "_id_" || !ops.IsNumber() || !since.ok()) continue;
      if (ops.NumberAsDouble() != 0) continue;
      const int64_t age_ms = now_ms - since.DateTime();
      if (age_ms < min_age_ms) continue;
      Finding f;
      f.rule = "unused-index";
      f.severity = Severity::kWarning;
      f.ns = ns;
      const int64_t days = age_ms / 86400000;
      f.summary = "index " + std::string(name.String()) + " has not been used by any query since " +
                  ValueToJson(since) + " (" + std::to_string(days) + " day(s))";
      f.rule_of_thumb =
          "Remove unnecessary indexes: an index no query uses still costs every write, disk and "
          "cache.";
      BsonBuilder e;
      e.AppendString("index", name.String())
          .AppendInt64("ops", 0)
          .AppendElementAs("since", since)
          .AppendInt64("days", days)
          .AppendInt64("thresholdDays", options_.unused_index_days);
      f.evidence = std::move(e).Build();
      f.remedy = "Drop index " + std::string(name.String()) +
                 " unless a query that runs rarely (a monthly report) needs it.";
      f.lab_scenario = "unnecessary-indexes";
      report_->findings.push_back(std::move(f));
    }
    return cursor.status();
  }

  void LargeArray(const std::string& ns, const std::string& path, ArrayStats* s, int64_t docs) {
    if (s->large == 0) return;
    if (MostlyUncounted(*s)) return;  // mostly numbers or nested arrays
    Finding f;
    f.rule = "large-array";
    f.severity = s->lengths.max() >= kHugeArray ? Severity::kCritical : Severity::kWarning;
    f.ns = ns;
    std::string kind = std::max_element(s->element_types.begin(), s->element_types.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; })
                           ->first;
    f.summary = "array '" + path + "' holds up to " + std::to_string(s->lengths.max()) + " " + kind +
                "s (90th percentile " + std::to_string(s->lengths.Percentile(90)) + "); " +
                std::to_string(s->large) + " of " + std::to_string(docs) +
                " documents examined have " + std::to_string(kLargeArray) + " or more";
    f.rule_of_thumb =
        "Avoid unbounded arrays: an array that grows without limit makes every read and write of "
        "its document slower and ends at the 16 MiB document limit.";
    BsonBuilder e;
    e.AppendString("path", path).AppendString("elements", kind);
    s->lengths.AppendTo(&e);
    e.AppendInt64("documentsExamined", docs)
        .AppendInt64("documentsAtOrOverThreshold", s->large)
        .AppendInt64("threshold", kLargeArray);
    f.evidence = std::move(e).Build();
    f.remedy = kLargeArrayRemedy;
    f.lab_scenario = "subset-reviews";
    report_->findings.push_back(std::move(f));
  }

  void Bloated(const std::string& ns, Distribution* sizes) {
    if (sizes->count() == 0) return;
    const int64_t p90 = sizes->Percentile(90);
    if (p90 < kBloatedP90 && sizes->max() < kNearLimit) return;
    Finding f;
    f.rule = "bloated-documents";
    f.severity = sizes->max() >= kNearLimit ? Severity::kCritical : Severity::kWarning;
    f.ns = ns;
    f.summary = "documents of " + Bytes(sizes->Percentile(50)) + " at the median, " + Bytes(p90) +
                " at the 90th percentile, the largest " + Bytes(sizes->max()) + " (" +
                std::to_string(sizes->max() * 100 / kMaxBsonSize) + "% of the 16 MiB limit)";
    f.rule_of_thumb =
        "Keep the working set small: data that is read together belongs together, data that is "
        "rarely read does not belong in the documents every query loads.";
    BsonBuilder e;
    sizes->AppendTo(&e);
    e.AppendDouble("mean", sizes->mean())
        .AppendInt64("limit", kMaxBsonSize)
        .AppendInt64("p90Threshold", kBloatedP90);
    f.evidence = std::move(e).Build();
    f.remedy =
        "Move rarely used large fields (long texts, histories, attachments) into a collection of "
        "their own, read only where they are needed; keep the fields the hot queries return in the "
        "main document.";
    f.lab_scenario = "bloated-documents";
    report_->findings.push_back(std::move(f));
  }

  // ---- What the store recorded of the writes (GrowthStatistics) ----
  // The advisor's sample sees the documents as they are; the statistics
  // kept on write see how they got there, over every write since the
  // collection was created (or since statistics were on), and cost no read.

  // Adds the statistics' evidence to this collection's large-array and
  // bloated-documents findings (those from findings[first] on), and a
  // large-array finding for each array path that writes have grown to 250
  // elements or more but the sample does not show so.
  Status FromGrowthStatistics(const Collection& coll, const std::string& ns,
                              const std::map<std::string, ArrayStats>& sampled,
                              int64_t documents_examined, size_t first) {
    StatusOr<GrowthStatistics> growth = coll.GrowthStats();
    if (!growth.ok() && growth.status().code() == ErrorCode::kNamespaceNotFound) {
      return Status::OK();  // dropped meanwhile
    }
    ROCKDOC_RETURN_IF_ERROR(growth.status());
    std::set<std::string> reported;
    for (size_t i = first; i < report_->findings.size(); ++i) {
      Finding& f = report_->findings[i];
      if (f.rule == "large-array") {
        const std::string path(f.evidence.Get("path").String());
        reported.insert(path);
        f.evidence = WithArrayGrowth(f.evidence, *growth, path);
      } else if (f.rule == "bloated-documents") {
        f.evidence = WithSizeGrowth(f.evidence, *growth);
      }
    }
    for (const ArrayLengths& a : growth->array_lengths) {
      if (a.max < kLargeArray || reported.count(a.path) != 0) continue;
      auto seen = sampled.find(a.path);
      if (seen != sampled.end() && MostlyUncounted(seen->second)) continue;  // numbers: see LargeArray
      GrowingArray(ns, a, *growth, seen != sampled.end(), documents_examined);
    }
    return Status::OK();
  }

  // Compass' rule counts arrays of documents, ObjectIds and strings: true
  // when the sample saw mostly other elements at the path.
  static bool MostlyUncounted(const ArrayStats& s) {
    int64_t counted = 0, all = 0;
    for (const auto& [kind, n] : s.element_types) {
      all += n;
      if (kind == "document" || kind == "objectId" || kind == "string") counted += n;
    }
    return all > 0 && counted * 2 < all;
  }

  static void AppendHistogram(BsonBuilder* b, const Log2Histogram& h) {
    b->AppendInt64("count", h.total())
        .AppendInt64("p50AtMost", h.PercentileBound(50))
        .AppendInt64("p90AtMost", h.PercentileBound(90));
  }

  // {..., inWrites: {count, p50AtMost, p90AtMost, max}, growthWarnings:
  // {array250, array1000, array10000}}: the lengths writes left at the path
  // (power-of-two bounds; max exact) and the collection's array warnings.
  static Document WithArrayGrowth(const Document& evidence, const GrowthStatistics& g,
                                  const std::string& path) {
    BsonBuilder b;
    for (Element e : evidence) b.AppendElement(e);
    for (const ArrayLengths& a : g.array_lengths) {
      if (a.path != path) continue;
      b.OpenDocument("inWrites");
      AppendHistogram(&b, a.lengths);
      b.AppendInt64("max", a.max).Close();
    }
    b.OpenDocument("growthWarnings")
        .AppendInt64("array250", g.array_250_warnings)
        .AppendInt64("array1000", g.array_1000_warnings)
        .AppendInt64("array10000", g.array_10000_warnings)
        .Close();
    return std::move(b).Build();
  }

  // {..., allDocuments: {count, p50AtMost, p90AtMost, maxAtMost},
  // growthWarnings: {documentSize50Percent, documentSize90Percent}}: every
  // document's size, when known, as power-of-two bounds.
  static Document WithSizeGrowth(const Document& evidence, const GrowthStatistics& g) {
    BsonBuilder b;
    for (Element e : evidence) b.AppendElement(e);
    if (g.document_sizes_known) {
      b.OpenDocument("allDocuments");
      AppendHistogram(&b, g.document_sizes);
      b.AppendInt64("maxAtMost", g.document_sizes.MaxBound()).Close();
    }
    b.OpenDocument("growthWarnings")
        .AppendInt64("documentSize50Percent", g.size_50_percent_warnings)
        .AppendInt64("documentSize90Percent", g.size_90_percent_warnings)
        .Close();
    return std::move(b).Build();
  }

  // A growing array the sample missed: writes made it 250 elements or more
  // (the documents may have shrunk since, or be too few to be sampled).
  void GrowingArray(const std::string& ns, const ArrayLengths& a, const GrowthStatistics& g,
                    bool sampled, int64_t documents_examined) {
    Finding f;
    f.rule = "large-array";
    f.severity = a.max >= kHugeArray ? Severity::kCritical : Severity::kWarning;
    f.ns = ns;
    f.summary = "array '" + a.path + "' has grown to " + std::to_string(a.max) +
                " elements in writes (growth statistics: " + std::to_string(a.lengths.total()) +
                " writes seen), though " +
                (sampled ? "none of the " + std::to_string(documents_examined) +
                               " documents examined has " + std::to_string(kLargeArray) + " or more"
                         : "the " + std::to_string(documents_examined) +
                               " documents examined do not have it");
    f.rule_of_thumb =
        "Avoid unbounded arrays: an array that grows without limit makes every read and write of "
        "its document slower and ends at the 16 MiB document limit.";
    BsonBuilder e;
    e.AppendString("path", a.path).AppendString("source", "growth statistics");
    Document base = std::move(e).Build();
    BsonBuilder rest;
    for (Element el : WithArrayGrowth(base, g, a.path)) rest.AppendElement(el);
    rest.AppendInt64("documentsExamined", documents_examined).AppendInt64("threshold", kLargeArray);
    f.evidence = std::move(rest).Build();
    f.remedy = kLargeArrayRemedy;
    f.lab_scenario = "subset-reviews";
    report_->findings.push_back(std::move(f));
  }

  void Indexes(const std::string& ns, const std::vector<Document>& indexes) {
    std::vector<const Document*> secondary;
    for (const Document& spec : indexes) {
      if (spec.Get("name").ok() && spec.Get("name").String() != "_id_") secondary.push_back(&spec);
    }
    for (const Document* a : secondary) {
      auto a_key = KeyFields(a->Get("key").Document());
      if (!a_key || HasOwnOptions(*a)) continue;
      for (const Document* b : secondary) {
        if (a == b) continue;
        auto b_key = KeyFields(b->Get("key").Document());
        if (!b_key || b_key->size() <= a_key->size() ||
            !std::equal(a_key->begin(), a_key->end(), b_key->begin())) {
          continue;
        }
        // A covering index must hold every document, in the same order.
        if (Truthy(*b, "sparse") || Truthy(*b, "hidden") || b->Get("partialFilterExpression").ok() ||
            b->Get("collation").ok()) {
          continue;
        }
        Finding f;
        f.rule = "redundant-index";
        f.severity = Severity::kWarning;
        f.ns = ns;
        std::string a_name(a->Get("name").String()), b_name(b->Get("name").String());
        f.summary = "index " + a_name + " " + ToJson(a->Get("key").Document()) +
                    " is a prefix of index " + b_name + " " + ToJson(b->Get("key").Document());
        f.rule_of_thumb =
            "Remove unnecessary indexes: every index costs each write and takes disk and cache, "
            "and an index that is the prefix of another serves no query the other cannot.";
        BsonBuilder e;
        e.AppendString("index", a_name)
            .AppendDocument("key", a->Get("key").Document())
            .AppendString("coveredBy", b_name)
            .AppendDocument("coveredByKey", b->Get("key").Document());
        f.evidence = std::move(e).Build();
        f.remedy = "Drop index " + a_name + ": queries on its fields use " + b_name + " instead.";
        f.lab_scenario = "unnecessary-indexes";
        report_->findings.push_back(std::move(f));
        break;  // one finding per redundant index
      }
    }
    if (secondary.size() >= kManyIndexes) {
      Finding f;
      f.rule = "too-many-indexes";
      f.severity = Severity::kWarning;
      f.ns = ns;
      f.summary = std::to_string(secondary.size()) + " indexes besides _id";
      f.rule_of_thumb =
          "Remove unnecessary indexes: each one is written by every insert and by every update of "
          "its fields.";
      BsonBuilder e;
      e.AppendInt64("indexes", static_cast<int64_t>(secondary.size()))
          .AppendInt64("threshold", static_cast<int64_t>(kManyIndexes));
      e.OpenArray("names");
      for (const Document* spec : secondary) e.AppendString("", spec->Get("name").String());
      e.Close();
      f.evidence = std::move(e).Build();
      f.remedy =
          "Drop the indexes no query needs ($indexStats shows each one's uses), and merge indexes "
          "that share a prefix into one compound index.";
      f.lab_scenario = "index-count";
      report_->findings.push_back(std::move(f));
    }
  }

  // ---- Findings from the query statistics ----

  // A shape that examines far more documents (or index keys) than it
  // returns: an index is missing, or not selective.
  void Inefficient(const std::string& ns, DocumentView entry, const std::vector<Document>& indexes) {
    if (!FilterShape(entry)) return;
    const int64_t docs = Metric(entry, "metrics.docsExamined.sum");
    const int64_t keys = Metric(entry, "metrics.keysExamined.sum");
    const int64_t returned = Metric(entry, "metrics.docsReturned.sum");
    const int64_t examined = std::max(docs, keys);
    if (examined < kInefficientMinExamined || examined < kInefficientRatio * std::max<int64_t>(returned, 1)) {
      return;
    }
    const int64_t runs = Metric(entry, "metrics.execCount");
    Element sort = entry.GetPath("key.queryShape.sort");
    bool has_or = false;
    std::optional<Document> suggested =
        SuggestIndex(FilterOf(entry), sort.IsDocument() ? sort.Document() : DocumentView(), &has_or);
    // An index that already leads with the suggestion's fields: the query
    // uses it (or could) and still examines too much.
    std::string existing;
    if (suggested) {
      auto want = KeyFields(*suggested);
      for (const Document& spec : indexes) {
        auto have = KeyFields(spec.Get("key").Document());
        if (want && have && have->size() >= want->size() &&
            std::equal(want->begin(), want->end(), have->begin())) {
          existing = std::string(spec.Get("name").String());
        }
      }
    }
    Finding f;
    f.rule = "inefficient-query";
    f.severity = Severity::kWarning;
    f.ns = ns;
    const Document shape = ShapeOf(entry);
    f.summary = std::string(entry.GetPath("key.queryShape.command").String()) + " " +
                ToJson(shape) + " examined " + std::to_string(examined) + " " +
                (docs >= keys ? "documents" : "index keys") + " to return " +
                std::to_string(returned) + " over " + std::to_string(runs) + " run(s)";
    f.rule_of_thumb =
        "Index what your queries select on: a query should examine about as many documents as "
        "it returns (equality fields first, then the sort, then ranges: the ESR rule).";
    BsonBuilder e;
    e.AppendDocument("shape", shape)
        .AppendString("queryShapeHash", entry.Get("queryShapeHash").IsString()
                                             ? entry.Get("queryShapeHash").String()
                                             : std::string_view())
        .AppendInt64("runs", runs)
        .AppendInt64("docsExamined", docs)
        .AppendInt64("keysExamined", keys)
        .AppendInt64("docsReturned", returned)
        .AppendInt64("examinedPerReturned", examined / std::max<int64_t>(returned, 1))
        .AppendInt64("collScans", Metric(entry, "rockdoc.collScans"));
    Element plan = entry.GetPath("rockdoc.planSummary");
    if (plan.IsString()) e.AppendString("planSummary", plan.String());
    if (suggested) e.AppendDocument("suggestedIndex", *suggested);
    if (!existing.empty()) e.AppendString("existingIndex", existing);
    e.AppendInt64("threshold", kInefficientRatio);
    f.evidence = std::move(e).Build();
    if (!suggested && has_or) {
      f.remedy = "Give each clause of the $or an index of its own, so that the query reads only "
                 "what matches.";
    } else if (!suggested) {
      f.remedy = "Select by a field an index can serve (an equality or a range; $expr, $where, "
                 "$size and negations read every document), or narrow the query.";
    } else if (!existing.empty()) {
      f.remedy = "Index " + existing + " serves these fields but they select little: lead an "
                 "index with the filter's most selective field, or narrow the query.";
    } else {
      f.remedy = "Create the index " + ToJson(*suggested) + " (db." + ns.substr(ns.find('.') + 1) +
                 ".createIndex(" + ToJson(*suggested) + ")).";
    }
    f.lab_scenario = "covered-index";
    report_->findings.push_back(std::move(f));
  }

  // Case-insensitive regular expressions: no index serves them by range.
  void CaseInsensitive(const std::string& ns, const std::vector<Document>& shapes) {
    int64_t runs = 0, examined = 0, returned = 0;
    std::vector<Document> which;
    for (const Document& entry : shapes) {
      const int64_t ci_runs = Metric(entry, "rockdoc.caseInsensitiveRuns");
      if (ci_runs == 0) continue;
      runs += ci_runs;
      examined += std::max(Metric(entry, "metrics.docsExamined.sum"), Metric(entry, "metrics.keysExamined.sum"));
      returned += Metric(entry, "metrics.docsReturned.sum");
      which.push_back(ShapeOf(entry));
    }
    // As for inefficient queries: too little reading is no evidence.
    if (which.empty() || examined < kInefficientMinExamined) return;
    Finding f;
    f.rule = "case-insensitive-regex";
    f.severity = Severity::kWarning;
    f.ns = ns;
    f.summary = std::to_string(runs) + " run(s) with a case-insensitive $regex, of " +
                std::to_string(which.size()) + " query shape(s) that examined " +
                std::to_string(examined) + " documents or keys to return " +
                std::to_string(returned);
    f.rule_of_thumb =
        "Case-insensitive queries need a case-insensitive index: a /pattern/i regex cannot use "
        "an index's order, so it reads every key or document.";
    BsonBuilder e;
    e.OpenArray("shapes");
    for (const Document& shape : which) e.AppendDocument("", shape);
    e.Close();
    e.AppendInt64("runs", runs).AppendInt64("examined", examined).AppendInt64("returned", returned);
    f.evidence = std::move(e).Build();
    f.remedy =
        "rockdoc has no collation indexes: store the field lowercased as well (name_lower), index "
        "it and query it with an exact or anchored (^prefix) case-sensitive match. In MongoDB, an "
        "index with {collation: {locale: 'en', strength: 2}} serves queries with that collation.";
    report_->findings.push_back(std::move(f));
  }

  // Large documents whose queries mostly return a few of their fields.
  void NarrowReads(const std::string& ns, Distribution* sizes, const std::vector<Document>& shapes) {
    if (sizes->count() == 0 || sizes->Percentile(50) < kNarrowDocP50) return;
    int64_t reads = 0, narrow = 0;
    std::vector<Document> which;
    for (const Document& entry : shapes) {
      Element command = entry.GetPath("key.queryShape.command");
      if (!command.IsString() || command.String() != "find") continue;
      const int64_t runs = Metric(entry, "metrics.execCount");
      reads += runs;
      Element projection = entry.GetPath("key.queryShape.projection");
      if (!projection.IsDocument()) continue;
      size_t included = 0;
      bool inclusion = true;
      for (Element p : projection.Document()) {
        if (p.key() == "_id") continue;
        // Plain inclusions only: a $slice or $elemMatch returns the rest.
        const bool on = p.IsBool() ? p.Bool() : (p.IsNumber() && p.NumberAsDouble() != 0);
        if (!on) inclusion = false;
        ++included;
      }
      if (!inclusion || included == 0 || included > kNarrowMaxFields) continue;
      narrow += runs;
      which.push_back(Document::AdoptValidated(std::string(projection.Document().bytes())));
    }
    if (reads == 0 || static_cast<double>(narrow) < kNarrowMinShare * static_cast<double>(reads)) return;
    const double share = static_cast<double>(narrow) / static_cast<double>(reads);
    Finding f;
    f.rule = "large-documents-read-narrowly";
    f.severity = Severity::kWarning;
    f.ns = ns;
    f.summary = Percent(share) + " of the finds (" + std::to_string(narrow) + " of " +
                std::to_string(reads) + ") return at most " + std::to_string(kNarrowMaxFields) +
                " fields of documents of " + Bytes(sizes->Percentile(50)) + " at the median";
    f.rule_of_thumb =
        "Keep the working set small: the fields the frequent queries read belong together, the "
        "rest (rarely read) does not belong in the documents every query loads.";
    BsonBuilder e;
    e.OpenDocument("documentSizes");
    sizes->AppendTo(&e);
    e.Close();
    e.OpenArray("narrowProjections");
    for (const Document& p : which) e.AppendDocument("", p);
    e.Close();
    e.AppendInt64("narrowRuns", narrow).AppendInt64("findRuns", reads).AppendDouble("share", share);
    e.AppendInt64("p50Threshold", kNarrowDocP50);
    f.evidence = std::move(e).Build();
    f.remedy =
        "Split each document (subset pattern): a collection holding the fields these queries "
        "return, and one holding the rest, read only where it is needed.";
    f.lab_scenario = "bloated-documents";
    report_->findings.push_back(std::move(f));
  }

  // Collections read one after the other (application-level joins, and
  // $lookup): data accessed together, stored apart; unless the one with
  // more documents holds hundreds per document of the other
  // (one-to-squillions: embedded, they would make a large array or a
  // bloated document, and referencing is right).
  void Separated(const std::string& db) {
    std::map<std::string, int64_t> reads;  // collection -> runs of its shapes
    // {a, b} (a < b) -> (application-level joins, $lookup runs), either way.
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> pairs;
    auto pair_of = [](const std::string& x, const std::string& y) {
      return x < y ? std::make_pair(x, y) : std::make_pair(y, x);
    };
    const std::string prefix = db + ".";
    for (const auto& [ns, entries] : shapes_) {
      if (ns.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string coll = ns.substr(prefix.size());
      for (const Document& entry : entries) {
        if (AdvisorShape(entry)) continue;
        reads[coll] += Metric(entry, "metrics.execCount");
        Element after = entry.GetPath("rockdoc.appJoins.after");
        if (after.IsDocument()) {
          for (Element a : after.Document()) {
            pairs[pair_of(std::string(a.key()), coll)].first += a.AsExactInt64().value_or(0);
          }
        }
        Element lookups = entry.GetPath("rockdoc.lookups");
        if (lookups.IsDocument()) {
          for (Element l : lookups.Document()) {
            if (std::string(l.key()) == coll) continue;  // a self-join
            pairs[pair_of(coll, std::string(l.key()))].second += l.AsExactInt64().value_or(0);
          }
        }
      }
    }
    for (const auto& [pair, counts] : pairs) {
      const auto facts_a = facts_.find(prefix + pair.first);
      const auto facts_b = facts_.find(prefix + pair.second);
      if (facts_a == facts_.end() || facts_b == facts_.end()) continue;  // not examined
      if (!options_.collection.empty() && pair.first != options_.collection &&
          pair.second != options_.collection) {
        continue;
      }
      const int64_t joins = counts.first + counts.second;
      // The side read less often (a $lookup's other side may have no
      // reads of its own: its reads are the pipeline's).
      const int64_t ra = reads[pair.first], rb = reads[pair.second];
      const int64_t fewer_reads = ra == 0 ? rb : rb == 0 ? ra : std::min(ra, rb);
      if (joins < kJoinMinCount || fewer_reads == 0) continue;
      const double share = std::min(1.0, static_cast<double>(joins) / static_cast<double>(fewer_reads));
      if (share < kJoinMinShare) continue;
      // The parent: the side with fewer documents.
      const bool a_parent = facts_a->second.count <= facts_b->second.count;
      const std::string& parent = a_parent ? pair.first : pair.second;
      const std::string& child = a_parent ? pair.second : pair.first;
      const CollectionFacts& pf = a_parent ? facts_a->second : facts_b->second;
      const CollectionFacts& cf = a_parent ? facts_b->second : facts_a->second;
      const int64_t per_parent = (cf.count + std::max<int64_t>(pf.count, 1) - 1) / std::max<int64_t>(pf.count, 1);
      const int64_t elements = per_parent * std::max<int64_t>(1, cf.p50_array);
      const int64_t embedded_bytes = per_parent * cf.p50_size;
      if (elements >= kLargeArray || embedded_bytes >= kBloatedP90) continue;
      Finding f;
      f.rule = "separated-data";
      f.severity = Severity::kWarning;
      f.ns = db + "." + parent;
      f.summary = parent + " and " + child + " are read together: " + std::to_string(joins) +
                  " time(s) one read followed the other (" + std::to_string(counts.first) +
                  " application-level join(s), " + std::to_string(counts.second) +
                  " $lookup run(s)), " + Percent(share) + " of the reads of the less read one; " +
                  std::to_string(per_parent) + " " + child + " document(s) per " + parent;
      f.rule_of_thumb =
          "Data that is accessed together should be stored together: favor embedding unless there "
          "is a compelling reason not to.";
      BsonBuilder e;
      e.AppendString("parent", parent)
          .AppendString("child", child)
          .AppendInt64("applicationJoins", counts.first)
          .AppendInt64("lookups", counts.second)
          .AppendInt64("readsOfParent", reads[parent])
          .AppendInt64("readsOfChild", reads[child])
          .AppendDouble("share", share)
          .AppendInt64("childrenPerParent", per_parent)
          .AppendInt64("embeddedElements", elements)
          .AppendInt64("embeddedBytes", embedded_bytes)
          .AppendDouble("thresholdShare", kJoinMinShare);
      f.evidence = std::move(e).Build();
      f.remedy = "Embed the " + child + " documents (about " + std::to_string(per_parent) +
                 " per " + parent + ") in their " + parent + " document; or, where a " + child +
                 " read goes on to read its one " + parent + ", copy the few " + parent +
                 " fields it needs into the " + child + " documents (the extended reference "
                 "pattern). Keep them apart only for data that changes often or is shared widely.";
      f.lab_scenario = "one-to-few";
      report_->findings.push_back(std::move(f));
    }
  }

  // What ExamineCollection learnt of each collection, for Separated.
  struct CollectionFacts {
    int64_t count = 0;      // documents (the collection's count)
    int64_t p50_size = 0;   // median document size of the sample
    int64_t p50_array = 0;  // median length of its longest array path
  };

  const AdviseOptions& options_;
  AdviseReport* report_;
  ShapesByNs shapes_;
  std::map<std::string, CollectionFacts> facts_;
};

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "?";
}

StatusOr<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kCritical}) {
    if (name == SeverityName(s)) return s;
  }
  return Status(ErrorCode::kBadValue,
                "severity must be info, warning or critical, not '" + std::string(name) + "'");
}

bool AdviseReport::Any(Severity at_least) const {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return f.severity >= at_least; });
}

StatusOr<AdviseReport> Advise(const Client& client, const AdviseOptions& options) {
  if (options.unused_index_days < 0) {
    return Status(ErrorCode::kBadValue, "unusedIndexDays must be 0 or more");
  }
  if (!options.full && options.sample_size <= 0) {
    return Status(ErrorCode::kBadValue, "the sample size must be positive, not " +
                                            std::to_string(options.sample_size));
  }
  std::vector<std::string> dbs = options.dbs;
  if (dbs.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(dbs, client.ListDatabaseNames());
  }
  // The query statistics, read before the advisor's own reads.
  ShapesByNs shapes;
  {
    BsonBuilder p;
    p.OpenArray("p").OpenDocument("").OpenDocument("$queryStats").Close().Close().Close();
    const Document pipeline = std::move(p).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, client.GetDatabase("admin").Aggregate(pipeline.Get("p").Array()));
    while (cursor.Next()) {
      DocumentView entry = cursor.document();
      Element db = entry.GetPath("key.queryShape.cmdNs.db"), coll = entry.GetPath("key.queryShape.cmdNs.coll");
      if (!db.IsString() || !coll.IsString()) continue;
      shapes[std::string(db.String()) + "." + std::string(coll.String())].push_back(
          Document::AdoptValidated(std::string(entry.bytes())));
    }
    ROCKDOC_RETURN_IF_ERROR(cursor.status());
  }
  AdviseReport report;
  Examiner examiner(options, &report, std::move(shapes));
  for (const std::string& db : dbs) ROCKDOC_RETURN_IF_ERROR(examiner.ExamineDatabase(client, db));
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.ns < b.ns;
  });
  return report;
}

std::string FormatText(const AdviseReport& report) {
  std::ostringstream out;
  out << "Examined " << report.databases << " database(s), " << report.collections
      << " collection(s), " << report.documents_examined << " document(s).\n";
  if (report.findings.empty()) {
    out << "No findings.\n";
    return out.str();
  }
  out << report.findings.size() << " finding(s):\n";
  for (const Finding& f : report.findings) {
    out << "\n[" << SeverityName(f.severity) << "] " << f.rule << " in " << f.ns << "\n"
        << "  " << f.summary << "\n"
        << "  rule:     " << f.rule_of_thumb << "\n"
        << "  evidence: " << ToJson(f.evidence) << "\n"
        << "  remedy:   " << f.remedy << "\n";
    if (!f.lab_scenario.empty()) {
      out << "  measure:  rockdoc-lab --scenario " << f.lab_scenario << "\n";
    }
  }
  return out.str();
}

Document ToDocument(const AdviseReport& report) {
  BsonBuilder b;
  b.AppendInt64("databases", report.databases)
      .AppendInt64("collections", report.collections)
      .AppendInt64("documentsExamined", report.documents_examined);
  b.OpenArray("findings");
  for (const Finding& f : report.findings) {
    b.OpenDocument("")
        .AppendString("rule", f.rule)
        .AppendString("severity", SeverityName(f.severity))
        .AppendString("ns", f.ns)
        .AppendString("summary", f.summary)
        .AppendString("ruleOfThumb", f.rule_of_thumb)
        .AppendDocument("evidence", f.evidence)
        .AppendString("remedy", f.remedy);
    if (!f.lab_scenario.empty()) b.AppendString("labScenario", f.lab_scenario);
    b.Close();
  }
  b.Close();
  return std::move(b).Build();
}

}  // namespace rockdoc::advisor
