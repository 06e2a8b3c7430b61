// api/vector_search.cc: $vectorSearch's source (PipelineOptions::vector_search):
// the index's nearest candidates (IndexAccessMethod::Nearest over the graph,
// or every entry with exact), each re-read through the operation's
// snapshot and checked there: the document must exist, still have an entry
// (its vector), and match the filter. A candidate the graph holds stale is
// scored on the vector the snapshot holds; one it holds but the snapshot
// does not is dropped. So the filter is honoured exactly, and a result is
// always a document the read can see.
#include <algorithm>
#include <string>
#include <vector>

#include "api/collection_internal.h"
#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "index/access_method.h"
#include "index/index_entry.h"
#include "index/vector_search.h"
#include "keystring/keystring.h"
#include "pipeline/pipeline.h"
#include "storage/format.h"
#include "storage/kv.h"

namespace rockdoc::internal {

namespace {

// Atlas's filter: MQL on the index's filter fields, with the comparison,
// set, $exists and logical operators only.
Status CheckSearchFilter(DocumentView filter, const VectorDefinition& def, int depth) {
  if (depth > 50) return Status(ErrorCode::kBadValue, "$vectorSearch filter is nested too deep");
  for (Element e : filter) {
    std::string_view k = e.key();
    if (k == "$and" || k == "$or" || k == "$nor") {
      if (e.type() != BsonType::kArray) {
        return Status(ErrorCode::kBadValue, std::string(k) + " must be an array");
      }
      for (Element clause : e.Array()) {
        if (clause.type() != BsonType::kDocument) {
          return Status(ErrorCode::kBadValue, std::string(k) + " must hold objects");
        }
        ROCKDOC_RETURN_IF_ERROR(CheckSearchFilter(clause.Document(), def, depth + 1));
      }
      continue;
    }
    if (!k.empty() && k[0] == '$') {
      return Status(ErrorCode::kBadValue,
                    "Operator '" + std::string(k) + "' is not supported in a $vectorSearch filter");
    }
    if (std::find(def.filter_paths.begin(), def.filter_paths.end(), k) == def.filter_paths.end()) {
      return Status(ErrorCode::kBadValue, "Path '" + std::string(k) +
                                              "' needs to be indexed as filter in the "
                                              "vectorSearch index");
    }
    if (e.type() != BsonType::kDocument) continue;  // equality
    DocumentView ops = e.Document();
    if (ops.empty() || (*ops.begin()).key().empty() || (*ops.begin()).key()[0] != '$') continue;
    for (Element op : ops) {
      static constexpr std::string_view kAllowed[] = {"$eq",  "$ne", "$gt", "$gte", "$lt",
                                                      "$lte", "$in", "$nin", "$exists", "$not"};
      if (std::find(std::begin(kAllowed), std::end(kAllowed), op.key()) == std::end(kAllowed)) {
        return Status(ErrorCode::kBadValue, "Operator '" + std::string(op.key()) +
                                                "' is not supported in a $vectorSearch filter");
      }
    }
  }
  return Status::OK();
}

// Every entry of `index` through `view`.
Status ScanEntries(const ReadView& view, const IndexDescriptor& index, const EntryFn& fn) {
  const std::string lower = IndexPrefix(index);
  const std::string upper = keystring::PrefixSuccessor(lower);
  std::unique_ptr<KvIterator> it = view.NewIterator(lower, upper, /*sequential=*/true);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    IndexEntryView entry;
    ROCKDOC_RETURN_IF_ERROR(ParseIndexEntry(index, it->key(), it->value(), &entry));
    ROCKDOC_RETURN_IF_ERROR(fn(entry.id_key, entry.values_key, entry.type_bits));
  }
  return it->status();
}

}  // namespace

StatusOr<std::vector<Document>> RunVectorSearch(const std::shared_ptr<const Engine>& engine,
                                                const std::shared_ptr<SessionState>& session,
                                                const std::string& db, const std::string& coll,
                                                const VectorSearchRequest& request) {
  using Result = StatusOr<std::vector<Document>>;
  return RunOperation<Result>(session, OpKind::kRead, "aggregate", [&](const OpContext& op) -> Result {
    auto use = engine->Enter();
    ROCKDOC_RETURN_IF_ERROR(use.status());
    ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<CollectionMeta> meta, LookupForRead(*engine, db, coll));
    std::vector<Document> out;
    if (meta == nullptr) return out;
    // The index set is held for the whole search: a drop cannot free it.
    std::shared_ptr<const IndexSet> indexes = meta->indexes();
    const IndexDescriptor* index = indexes->FindByName(request.index);
    // As Atlas: a search on an index that does not exist finds nothing.
    if (index == nullptr || !index->is_search_index()) return out;
    ROCKDOC_ASSIGN_OR_RETURN(VectorDefinition def, ParseVectorDefinition(index->search_definition()));
    if (request.path != def.path) {
      return Status(ErrorCode::kBadValue,
                    "Path '" + request.path + "' needs to be indexed as vector in index '" +
                        request.index + "'");
    }
    std::unique_ptr<MatchExpression> filter;
    if (!request.filter.empty()) {
      ROCKDOC_RETURN_IF_ERROR(CheckSearchFilter(request.filter, def, 0));
      ROCKDOC_ASSIGN_OR_RETURN(filter, ParseMatchExpression(request.filter));
    }
    KvSnapshot fresh(engine);
    const ReadView view = op.View(engine.get(), &fresh);
    EntrySource source;
    source.scan_at_snapshot = [&](const EntryFn& fn) { return ScanEntries(view, *index, fn); };
    source.scan_latest = [&](const EntryFn& fn) {
      KvSnapshot latest(engine);
      return ScanEntries(ReadView(engine.get(), &latest), *index, fn);
    };
    NearestQuery q;
    q.vector = request.query_vector;
    q.num_candidates = request.num_candidates;
    q.limit = request.limit;
    q.exact = request.exact;
    q.filter = filter.get();
    std::vector<NearestCandidate> candidates;
    ROCKDOC_RETURN_IF_ERROR(index->access_method().Nearest(*index, q, source, &candidates));
    index->RecordAccess();
    // Each candidate checked on the document the snapshot holds.
    std::vector<std::pair<double, Document>> hits;
    for (const NearestCandidate& c : candidates) {
      if (static_cast<int64_t>(hits.size()) == request.limit) break;
      PinnedValue value;
      bool found = false;
      ROCKDOC_RETURN_IF_ERROR(view.GetRecord(RecordKey(meta->id, c.id_key), &value, &found));
      if (!found) continue;
      DocumentView doc(reinterpret_cast<const uint8_t*>(value.view().data()));
      std::optional<double> score = VectorScoreOf(*index, doc, request.query_vector);
      if (!score || (filter != nullptr && !filter->Matches(doc))) continue;
      hits.emplace_back(*score, Document::AdoptValidated(std::string(value.view())));
    }
    std::stable_sort(hits.begin(), hits.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (auto& [score, doc] : hits) {
      BsonBuilder b;
      for (Element e : doc.view()) b.AppendElement(e);
      b.AppendDouble(kVectorSearchScoreField, score);
      out.push_back(std::move(b).Build());
    }
    return out;
  });
}

}  // namespace rockdoc::internal
