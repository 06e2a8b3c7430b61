// pipeline/source_stages.cc: the stages that open a pipeline in place of
// its find: $collStats, $indexStats and $queryStats of a collection's
// pipeline (their documents from PipelineOptions' statistics sources), and
// $documents of a pipeline without a collection (pipeline.cc's
// OpenCollectionlessPipeline evaluates it). Anywhere else each is 40602.
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "bson/append_number.h"
#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// $queryStats: the query statistics of the collection (of every one for "").
StatusOr<std::vector<Document>> QueryStatsDocuments(std::string_view collection,
                                                    const Element& stage,
                                                    const PipelineOptions& options) {
  if (stage.type() != BsonType::kDocument) {
    return StageFailed(14, "BSON field '$queryStats' is the wrong type '" +
                               std::string(BsonTypeAlias(stage.type())) +
                               "', expected type 'object'");
  }
  for (const Element& f : stage.Document()) {
    if (f.key() == "transformIdentifiers") {
      return Status(ErrorCode::kNotImplemented,
                    "BSON field '$queryStats.transformIdentifiers' is not supported by rockdoc");
    }
    return StageFailed(40415, "BSON field '$queryStats." + std::string(f.key()) + "' is an unknown field.");
  }
  if (!options.query_stats) return Status(ErrorCode::kNotImplemented, "$queryStats is not supported here");
  return options.query_stats(collection);
}

// $currentOp: the operations in flight. Its options, decoded from a table
// as MongoDB's (FailedToParse for a non-boolean or an unknown one); those
// that ask for what rockdoc does not list (idle connections and cursors, a
// backtrace) are NotImplemented. rockdoc is one node, so localOps changes
// nothing; allUsers false lists the asking user's operations only
// (stats/server_activity.h).
StatusOr<std::vector<Document>> CurrentOpDocuments(std::string_view collection,
                                                   const Element& stage,
                                                   const PipelineOptions& options) {
  if (!collection.empty() || options.database != "admin") {
    return StageFailed(73, "$currentOp must be run against the 'admin' database with {aggregate: 1}");
  }
  if (stage.type() != BsonType::kDocument) {
    return StageFailed(9, "$currentOp options must be specified in an object, but found: " +
                              std::string(BsonTypeAlias(stage.type())));
  }
  struct Row {
    std::string_view name;
    bool CurrentOpOptions::*member;
    bool implemented_when_true;
  };
  static constexpr Row kRows[] = {
      {"allUsers", &CurrentOpOptions::all_users, true},
      {"idleConnections", &CurrentOpOptions::idle_connections, false},
      {"idleCursors", &CurrentOpOptions::idle_cursors, false},
      {"idleSessions", &CurrentOpOptions::idle_sessions, true},
      {"localOps", &CurrentOpOptions::local_ops, true},
      {"truncateOps", &CurrentOpOptions::truncate_ops, true},
      {"backtrace", nullptr, false},
  };
  CurrentOpOptions parsed;
  for (const Element& f : stage.Document()) {
    const Row* row = nullptr;
    for (const Row& r : kRows) row = r.name == f.key() ? &r : row;
    if (row == nullptr) {
      return StageFailed(9, "Unrecognized option '" + std::string(f.key()) + "' in $currentOp stage.");
    }
    if (f.type() != BsonType::kBool) {
      return StageFailed(9, "The '" + std::string(f.key()) +
                                "' parameter of the $currentOp stage must be a boolean value, but "
                                "found: " +
                                std::string(BsonTypeAlias(f.type())));
    }
    if (f.Bool() && !row->implemented_when_true) {
      return Status(ErrorCode::kNotImplemented,
                    "$currentOp's " + std::string(f.key()) + ": true is not supported by rockdoc");
    }
    if (row->member != nullptr) parsed.*(row->member) = f.Bool();
  }
  if (!options.current_op) return Status(ErrorCode::kNotImplemented, "$currentOp is not supported here");
  return options.current_op(parsed);
}

// $indexStats: one document per index.
StatusOr<std::vector<Document>> IndexStatsDocuments(std::string_view collection,
                                                    const Element& stage,
                                                    const PipelineOptions& options) {
  if (stage.type() != BsonType::kDocument || !stage.Document().empty()) {
    return StageFailed(28803, "The $indexStats stage specification must be an empty object");
  }
  if (!options.index_stats) return Status(ErrorCode::kNotImplemented, "$indexStats is not supported here");
  return options.index_stats(collection);
}

// $collStats: one document.
StatusOr<std::vector<Document>> CollStatsDocuments(std::string_view collection,
                                                   const Element& stage,
                                                   const PipelineOptions& options) {
  std::vector<Document> out;
  if (stage.type() != BsonType::kDocument) {
    return StageFailed(5447000, "$collStats must take a nested object but found: " + Shown(stage));
  }
  if (!options.collection_stats) return Status(ErrorCode::kNotImplemented, "$collStats is not supported here");
  BsonBuilder b;
  b.AppendString("ns", options.database + "." + std::string(collection));
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  b.AppendString("host", host);
  b.AppendDateTime("localTime", NowMillis());
  std::optional<CollectionStats> stats;
  for (const Element& f : stage.Document()) {
    if (f.key() == "storageStats" || f.key() == "count") {
      if (f.type() != BsonType::kDocument) {
        return StageFailed(14, "BSON field '$collStats." + std::string(f.key()) +
                                   "' is the wrong type '" + std::string(BsonTypeAlias(f.type())) +
                                   "', expected type 'object'");
      }
      if (!stats) {
        ROCKDOC_ASSIGN_OR_RETURN(CollectionStats s, options.collection_stats(collection));
        stats = std::move(s);
      }
      if (f.key() == "count") {
        if (!f.Document().empty()) return StageFailed(40415, "BSON field '$collStats.count' takes no arguments");
        b.AppendInt64("count", stats->count);
        continue;
      }
      int64_t scale = 1;
      for (const Element& o : f.Document()) {
        if (o.key() != "scale") {
          return StageFailed(40415, "BSON field '$collStats.storageStats." + std::string(o.key()) + "' is an unknown field.");
        }
        if (!o.IsNumber() || !o.ExactInt64(&scale) || scale < 1) {
          return StageFailed(51024, "BSON field 'scale' value must be >= 1, actual value '" + Shown(o) + "'");
        }
      }
      b.OpenDocument("storageStats");
      AppendStorageStats(*stats, scale, &b);
      b.Close();
    } else if (f.key() == "latencyStats" || f.key() == "queryExecStats") {
      return Status(ErrorCode::kNotImplemented,
                    "$collStats " + std::string(f.key()) + " is not supported by rockdoc (it keeps no operation latencies)");
    } else {
      return StageFailed(40415, "BSON field '$collStats." + std::string(f.key()) + "' is an unknown field.");
    }
  }
  out.push_back(std::move(b).Build());
  return out;
}

}  // namespace

void AppendStorageStats(const CollectionStats& stats, int64_t k, BsonBuilder* out) {
  auto number = [&](std::string_view name, int64_t v) { AppendNumber(out, name, v); };
  number("size", stats.size / k);
  number("count", stats.count);
  if (stats.count > 0) number("avgObjSize", stats.size / stats.count);
  number("numOrphanDocs", 0);
  number("storageSize", stats.storage_size / k);
  number("freeStorageSize", 0);
  out->AppendBool("capped", stats.capped);
  if (stats.capped) {
    number("max", stats.max);
    number("maxSize", stats.max_size / k);
  }
  out->AppendInt32("nindexes", static_cast<int32_t>(stats.index_sizes.size()));
  out->OpenArray("indexBuilds");
  out->Close();
  number("totalIndexSize", stats.total_index_size / k);
  number("totalSize", (stats.storage_size + stats.total_index_size) / k);
  out->OpenDocument("indexSizes");
  for (const auto& [name, bytes] : stats.index_sizes) number(name, bytes / k);
  out->Close();
  out->AppendInt32("scaleFactor", static_cast<int32_t>(k));
  // rockdoc's own: writes that made a document or an array cross a
  // threshold (CollectionStats; the schema advisor's growth warnings).
  const GrowthStatistics& growth = stats.growth;
  out->OpenDocument("growthWarnings");
  number("documentSize50Percent", growth.size_50_percent_warnings);
  number("documentSize90Percent", growth.size_90_percent_warnings);
  number("array250", growth.array_250_warnings);
  number("array1000", growth.array_1000_warnings);
  number("array10000", growth.array_10000_warnings);
  out->Close();
  // And the distributions kept on write, in power-of-two buckets (not
  // scaled: they are per document, as avgObjSize).
  auto histogram = [&](const Log2Histogram& h, int64_t max) {
    number("count", h.total());
    number("p50", h.PercentileBound(50));
    number("p90", h.PercentileBound(90));
    number("max", max);
    out->OpenArray("buckets");
    for (size_t i = 0; i < h.counts.size(); ++i) {
      if (h.counts[i] == 0) continue;
      out->OpenDocument("");
      number("min", i == 0 ? 0 : int64_t{1} << i);
      number("max", (int64_t{2} << i) - 1);
      number("count", h.counts[i]);
      out->Close();
    }
    out->Close();
  };
  out->OpenDocument("documentSizes");
  out->AppendBool("known", growth.document_sizes_known);
  if (growth.document_sizes_known) {
    histogram(growth.document_sizes, growth.document_sizes.MaxBound());
  }
  out->Close();
  out->OpenArray("arrayLengths");
  for (const ArrayLengths& a : growth.array_lengths) {
    out->OpenDocument("");
    out->AppendString("path", a.path);
    histogram(a.lengths, a.max);
    out->Close();
  }
  out->Close();
}

void AddSourceStages(StageTable* table) {
  table->emplace("$documents", StageDef{.place = StagePlace::kFirst});
  table->emplace("$collStats",
                 StageDef{.place = StagePlace::kFirst, .source = &CollStatsDocuments});
  table->emplace("$indexStats",
                 StageDef{.place = StagePlace::kFirst, .source = &IndexStatsDocuments});
  table->emplace("$queryStats",
                 StageDef{.place = StagePlace::kFirst, .source = &QueryStatsDocuments});
  table->emplace("$currentOp",
                 StageDef{.place = StagePlace::kFirst, .source = &CurrentOpDocuments});
}

}  // namespace rockdoc::internal
