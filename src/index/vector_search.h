// index/vector_search.h: what a nearest-neighbour scan asks of an index kind
// and what it gets back (IndexAccessMethod::Nearest), and the vectorSearch
// kind's definition and scores (index/vector_access_method.cc).
//
// A vectorSearch index is a search index (IndexDescriptor::is_search_index)
// whose entries live in RocksDB like any index's, written by the write path
// in the document's own transaction, so they are always the documents'
// vectors (crash-consistent by construction). Its key pattern is
// {<vector path>: "vectorSearch"}; its definition is MongoDB's:
//   {fields: [{type: "vector", path, numDimensions: 1..8192,
//              similarity: "euclidean" | "cosine" | "dotProduct",
//              quantization?: "none"},
//             {type: "filter", path}...]}
// An entry (storage/format.h's standard layout):
//   key bytes = keystring of one value, the filter document: each declared
//               filter path's top-level field copied whole from the document
//               (so that a filter on those paths matches it exactly as it
//               matches the document);
//   type bits = the vector, numDimensions float32 little-endian, then the
//               filter document's keystring type bits.
// A document whose vector path does not hold an array of numDimensions
// numbers has no entry (Atlas leaves such documents out of the index).
//
// Beside the entries each index keeps an HNSW graph (hnswlib) in memory,
// built from a scan of its entries on the first search after open (or after
// the index is made) and kept up to date after every commit that changes an
// entry (IndexRuntimeState::EntriesCommitted). The graph is only a source
// of candidates: the caller re-reads every candidate through its snapshot
// (VectorScoreOf, and the filter on the document itself), so a search never
// returns a document that is not visible, not in the filter or scored on a
// vector the snapshot does not hold.
//
// Thread safety: the structs are values; VectorScoreOf is a pure function.
#ifndef ROCKDOC_INDEX_VECTOR_SEARCH_H_
#define ROCKDOC_INDEX_VECTOR_SEARCH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

class IndexDescriptor;

// Atlas's bounds: numDimensions up to 8192, numCandidates up to 10000.
inline constexpr int64_t kMaxVectorDimensions = 8192;
inline constexpr int64_t kMaxNumCandidates = 10000;

enum class VectorSimilarity { kEuclidean, kCosine, kDotProduct };

// A vectorSearch definition, parsed and checked.
struct VectorDefinition {
  std::string path;  // the vector's
  int64_t num_dimensions = 0;
  VectorSimilarity similarity = VectorSimilarity::kEuclidean;
  std::vector<std::string> filter_paths;  // declared {type: "filter"} paths
};

// Parses `definition` ({fields: [...]}). Errors: BadValue (2) with the
// field at fault; NotImplemented (238) for quantization "scalar" or
// "binary" ("... is not supported by rockdoc").
StatusOr<VectorDefinition> ParseVectorDefinition(DocumentView definition);

// The score Atlas reports ({$meta: "vectorSearchScore"}), from
// https://www.mongodb.com/docs/atlas/atlas-vector-search/vector-search-stage/
// ("Atlas Vector Search Score"): euclidean 1 / (1 + distance), cosine
// (1 + cosine) / 2, dotProduct (1 + dot) / 2, so that each lies in [0, 1]
// for the vectors each similarity is meant for (normalized ones for
// dotProduct), higher being nearer.
double VectorScore(VectorSimilarity similarity, const float* a, const float* b, size_t dims);

// One scan entry, as the index's entries hold it.
using EntryFn = std::function<Status(std::string_view id_key, std::string_view key_bytes,
                                     std::string_view type_bits)>;
// Where a nearest scan reads the index's entries (the store supplies both;
// the index layer cannot read RocksDB): every entry through the query's
// snapshot (exact search), or through a snapshot taken when called (the
// graph's build).
struct EntrySource {
  std::function<Status(const EntryFn&)> scan_at_snapshot;
  std::function<Status(const EntryFn&)> scan_latest;
};

struct NearestQuery {
  std::vector<float> vector;  // numDimensions values
  int64_t num_candidates = 0;  // ANN: the graph's search breadth (ef)
  int64_t limit = 0;           // the documents wanted
  bool exact = false;          // ENN: every entry scored (a brute-force scan)
  // On the declared filter fields only (the caller checks); null: none.
  const MatchExpression* filter = nullptr;
};

// A candidate: the document's _id (keystring) and its score as the index
// held it, nearest first.
struct NearestCandidate {
  std::string id_key;
  double score = 0;
};

// Whether `doc` has an entry in the vectorSearch `index` and, if so, its
// score against `query` (numDimensions values): what the caller checks a
// candidate with, on the document its snapshot holds.
std::optional<double> VectorScoreOf(const IndexDescriptor& index, DocumentView doc,
                                    const std::vector<float>& query);

// What the graph of a vectorSearch index holds and cost (for the benchmark
// and serverStatus-style reports); zeros when it is not built yet.
struct VectorGraphStats {
  int64_t vectors = 0;    // live entries
  int64_t build_ms = 0;   // the last build from the entries
  bool built = false;
};
VectorGraphStats VectorGraphStatsOf(const IndexDescriptor& index);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_VECTOR_SEARCH_H_
