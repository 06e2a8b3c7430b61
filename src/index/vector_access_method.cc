// The vectorSearch index kind ({<path>: "vectorSearch"}, made by
// createSearchIndexes): entries holding each document's vector and filter
// values (index/vector_search.h has the layout), and an HNSW graph over
// them (hnswlib 0.6.2, Debian's libhnswlib-dev) kept in memory as the
// kind's runtime state.
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cassert>
#include <deque>
#include <fstream>
#include <iostream>
#include <list>
#include <mutex>
#include <queue>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// hnswlib 0.6.2 defines functions (its SIMD distances, cpuid helpers) in its
// headers without `inline`: in a namespace of its own (its standard headers
// included above, so that only its own declarations land there) a program
// that links librockdoc.a and includes hnswlib itself (bench/vector_bench)
// does not define them twice.
//
// Under AddressSanitizer its SIMD distances are switched off: 0.6.2's SSE
// searchBaseLayer prefetches `*(datal + j + 1)`, one element past an upper
// layer's neighbour list, which is allocated to its exact size. The read is
// a prefetch address only (valgrind, which tracks partial loads, says
// nothing), but ASan reports it as a heap overflow; the scalar path computes
// the same distances without that read.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_MANUAL_VECTORIZATION
#endif
#endif
namespace rockdoc_hnswlib {
#include <hnswlib/hnswlib.h>
}  // namespace rockdoc_hnswlib
namespace hnswlib = rockdoc_hnswlib::hnswlib;

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <queue>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "index/access_method.h"
#include "keystring/keystring.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

constexpr std::string_view kVectorSearch = "vectorSearch";

Status BadDefinition(std::string message) {
  return Status(ErrorCode::kBadValue, "Invalid vectorSearch index definition: " + message);
}

// The element at dotted `path` of `doc` (no array is crossed: a vector is
// an array at the end of its path), or missing.
Element AtPath(DocumentView doc, std::string_view path) {
  DocumentView at = doc;
  while (true) {
    size_t dot = path.find('.');
    Element e = at.Get(path.substr(0, dot));
    if (dot == std::string_view::npos || !e.ok()) return e;
    if (e.type() != BsonType::kDocument) return Element();
    at = e.Document();
    path.remove_prefix(dot + 1);
  }
}

// The document's vector (float32), or false when it has none of the right
// length (not indexed).
bool VectorOf(const VectorDefinition& def, DocumentView doc, std::vector<float>* out) {
  Element v = AtPath(doc, def.path);
  if (v.type() != BsonType::kArray) return false;
  out->clear();
  for (Element x : v.Array()) {
    if (!x.IsNumber()) return false;
    if (static_cast<int64_t>(out->size()) == def.num_dimensions) return false;
    out->push_back(static_cast<float>(x.NumberAsDouble()));
  }
  return static_cast<int64_t>(out->size()) == def.num_dimensions;
}

// The filter document of `doc`: each filter path's top-level field, whole.
Document FilterDocumentOf(const VectorDefinition& def, DocumentView doc) {
  BsonBuilder b;
  std::vector<std::string_view> seen;
  for (const std::string& path : def.filter_paths) {
    std::string_view top = std::string_view(path).substr(0, path.find('.'));
    if (std::find(seen.begin(), seen.end(), top) != seen.end()) continue;
    seen.push_back(top);
    Element e = doc.Get(top);
    if (e.ok()) b.AppendElement(e);
  }
  return std::move(b).Build();
}

// An entry's vector (the leading float32s of its type bits); DataCorruption
// when they are too few.
Status EntryVector(const VectorDefinition& def, std::string_view type_bits,
                   std::vector<float>* out) {
  const size_t bytes = static_cast<size_t>(def.num_dimensions) * sizeof(float);
  if (type_bits.size() < bytes) {
    return Status(ErrorCode::kDataCorruptionDetected, "vectorSearch entry too short");
  }
  out->resize(def.num_dimensions);
  std::memcpy(out->data(), type_bits.data(), bytes);
  return Status::OK();
}

// An entry's filter document (its key values, with the type bits after the
// vector).
StatusOr<Document> EntryFilter(const VectorDefinition& def, std::string_view key_bytes,
                               std::string_view type_bits) {
  const size_t bytes = static_cast<size_t>(def.num_dimensions) * sizeof(float);
  BsonBuilder b;
  ROCKDOC_RETURN_IF_ERROR(keystring::Decode(key_bytes, type_bits.substr(bytes), 0, {"f"}, &b));
  Document d = std::move(b).Build();
  Element f = d.Get("f");
  if (f.type() != BsonType::kDocument) {
    return Status(ErrorCode::kDataCorruptionDetected, "vectorSearch entry without its filter");
  }
  return Document::AdoptValidated(std::string(f.Document().bytes()));
}

float Dot(const float* a, const float* b, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void Normalize(std::vector<float>* v) {
  float n = std::sqrt(Dot(v->data(), v->data(), v->size()));
  if (n > 0) {
    for (float& x : *v) x /= n;
  }
}

// The graph of one index, and what each of its labels stands for.
class VectorState final : public IndexRuntimeState {
 public:
  explicit VectorState(VectorDefinition def) : def_(std::move(def)) {
    if (def_.similarity == VectorSimilarity::kEuclidean) {
      space_ = std::make_unique<hnswlib::L2Space>(def_.num_dimensions);
    } else {
      space_ = std::make_unique<hnswlib::InnerProductSpace>(def_.num_dimensions);
    }
  }

  const VectorDefinition& definition() const { return def_; }

  void EntriesCommitted(const std::vector<EntryChange>& changes) override {
    std::unique_lock<std::shared_mutex> g(mu_);
    if (state_ == Load::kNone) return;  // the build will read them
    for (const EntryChange& c : changes) {
      if (state_ == Load::kLoading) touched_.insert(c.id_key);
      if (c.put) {
        ApplyPut(c.id_key, c.key_bytes, c.type_bits);
      } else {
        ApplyDelete(c.id_key, c.key_bytes);
      }
    }
  }

  // Builds the graph from the entries on first use.
  Status EnsureLoaded(const EntrySource& source) {
    // One builder at a time; another search waits for it, then finds the
    // graph built.
    std::lock_guard<std::mutex> builder(load_mu_);
    {
      std::unique_lock<std::shared_mutex> g(mu_);
      if (state_ == Load::kLoaded) return Status::OK();
      state_ = Load::kLoading;
    }
    const auto start = std::chrono::steady_clock::now();
    // The snapshot is taken after kLoading is set: a commit it misses is
    // applied by EntriesCommitted, and its document is not re-read here.
    Status s = source.scan_latest(
        [&](std::string_view id_key, std::string_view key_bytes, std::string_view type_bits) {
          std::unique_lock<std::shared_mutex> g(mu_);
          if (touched_.count(std::string(id_key)) == 0) ApplyPut(id_key, key_bytes, type_bits);
          return Status::OK();
        });
    std::unique_lock<std::shared_mutex> g(mu_);
    touched_.clear();
    if (!s.ok()) {
      // Left unbuilt: the next search tries again from nothing.
      Reset();
      state_ = Load::kNone;
      return s;
    }
    state_ = Load::kLoaded;
    build_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    return Status::OK();
  }

  // The approximate nearest entries, nearest first: the graph searched for
  // `k` candidates with breadth ef, those whose filter document fails the
  // filter dropped, widened while fewer than `limit` pass and the graph
  // has more.
  Status Search(const NearestQuery& q, std::vector<NearestCandidate>* out) {
    std::vector<float> query = Prepared(q.vector);
    std::shared_lock<std::shared_mutex> g(mu_);
    out->clear();
    if (graph_ == nullptr || live_ == 0) return Status::OK();
    size_t k = static_cast<size_t>(q.num_candidates);
    while (true) {
      k = std::min<size_t>(k, live_);
      // hnswlib's ef is a member: searches under the shared lock take
      // turns setting it and searching (search_mu_).
      std::priority_queue<std::pair<float, hnswlib::labeltype>> found;
      try {
        std::lock_guard<std::mutex> s(search_mu_);
        graph_->setEf(std::max<size_t>(k, 10));
        found = graph_->searchKnn(query.data(), k);
      } catch (const std::exception& e) {
        return Status(ErrorCode::kInternalError, std::string("vector search: ") + e.what());
      }
      std::vector<std::pair<float, hnswlib::labeltype>> ordered;
      while (!found.empty()) {
        ordered.push_back(found.top());
        found.pop();
      }
      std::reverse(ordered.begin(), ordered.end());  // nearest first
      out->clear();
      for (const auto& [dist, label] : ordered) {
        const Node& n = nodes_[label];
        if (q.filter != nullptr && !q.filter->Matches(n.filter)) continue;
        out->push_back({n.id_key, ScoreOfDistance(dist)});
      }
      if (q.filter == nullptr || static_cast<int64_t>(out->size()) >= q.limit || k >= live_) {
        break;
      }
      k *= 4;
    }
    return Status::OK();
  }

  VectorGraphStats Stats() const {
    std::shared_lock<std::shared_mutex> g(mu_);
    return VectorGraphStats{static_cast<int64_t>(live_), build_ms_, state_ == Load::kLoaded};
  }

  // The vector as the graph holds it (normalized for cosine).
  std::vector<float> Prepared(std::vector<float> v) const {
    if (def_.similarity == VectorSimilarity::kCosine) Normalize(&v);
    return v;
  }

 private:
  enum class Load { kNone, kLoading, kLoaded };
  struct Node {
    std::string id_key;
    std::string key_bytes;  // of the entry it holds
    Document filter;
    bool live = false;
  };

  double ScoreOfDistance(float dist) const {
    switch (def_.similarity) {
      case VectorSimilarity::kEuclidean:  // hnswlib's L2 is the squared distance
        return 1.0 / (1.0 + std::sqrt(std::max(0.0f, dist)));
      case VectorSimilarity::kCosine:
      case VectorSimilarity::kDotProduct:  // hnswlib's inner product distance is 1 - dot
        return (1.0 + (1.0 - dist)) / 2.0;
    }
    return 0;
  }

  void ApplyPut(std::string_view id_key, std::string_view key_bytes, std::string_view type_bits)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    // A damaged entry is left out (validate() reports it).
    std::vector<float> v;
    if (!EntryVector(def_, type_bits, &v).ok()) return;
    v = Prepared(std::move(v));
    Document filter;
    if (!def_.filter_paths.empty()) {
      StatusOr<Document> f = EntryFilter(def_, key_bytes, type_bits);
      if (!f.ok()) return;
      filter = std::move(f).value();
    }
    auto [it, inserted] = labels_.emplace(std::string(id_key), nodes_.size());
    if (inserted) nodes_.push_back(Node{std::string(id_key), "", Document(), false});
    const hnswlib::labeltype label = it->second;
    try {
      if (graph_ == nullptr) {
        graph_ = std::make_unique<hnswlib::HierarchicalNSW<float>>(space_.get(), 1024, kM,
                                                                   kEfConstruction);
      }
      if (graph_->cur_element_count >= graph_->max_elements_) {
        graph_->resizeIndex(graph_->max_elements_ * 2);
      }
      graph_->addPoint(v.data(), label);  // an existing label is updated and undeleted
    } catch (const std::exception&) {
      return;  // out of memory: the candidate is missed, never wrong (re-read)
    }
    Node& n = nodes_[label];
    n.filter = std::move(filter);
    n.key_bytes = std::string(key_bytes);
    if (!n.live) ++live_;
    n.live = true;
  }

  // An update writes the new entry and deletes the old in key order: a
  // delete of an entry the node no longer holds is the old one's.
  void ApplyDelete(std::string_view id_key, std::string_view key_bytes)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    auto it = labels_.find(std::string(id_key));
    if (it == labels_.end() || !nodes_[it->second].live) return;
    if (nodes_[it->second].key_bytes != key_bytes) return;
    try {
      graph_->markDelete(it->second);
    } catch (const std::exception&) {
    }
    nodes_[it->second].live = false;
    --live_;
  }

  void Reset() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    graph_.reset();
    labels_.clear();
    nodes_.clear();
    live_ = 0;
  }

  // hnswlib's defaults in its examples (M 16, ef_construction 200).
  static constexpr size_t kM = 16;
  static constexpr size_t kEfConstruction = 200;

  const VectorDefinition def_;
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;
  mutable std::shared_mutex mu_;
  std::mutex load_mu_;    // held by the builder
  std::mutex search_mu_;  // hnswlib's ef is shared state
  Load state_ = Load::kNone;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph_;
  std::unordered_map<std::string, hnswlib::labeltype> labels_;
  std::vector<Node> nodes_;  // by label
  size_t live_ = 0;
  std::unordered_set<std::string> touched_;  // while loading
  int64_t build_ms_ = 0;
};

VectorState* StateOf(const IndexDescriptor& index) {
  return static_cast<VectorState*>(index.runtime_state().get());
}

class VectorSearchKind final : public IndexAccessMethod {
 public:
  std::string_view kind() const override { return kVectorSearch; }

  Status ValidateKeyField(const Element& e) const override {
    if (e.IsString()) return Status::OK();
    return BadDefinition("a vectorSearch index has one field, its vector");
  }

  Status ValidateOptions(const IndexDescriptor& index, const IndexOptions& options) const override {
    if (index.num_fields() != 1) return BadDefinition("one vector field per index");
    if (options.unique || options.sparse || !options.partial_filter_expression.empty() ||
        options.expire_after_seconds || options.collation) {
      return BadDefinition("search indexes take no index options");
    }
    return Status::OK();
  }

  void AppendOptions(const IndexDescriptor& index, IndexOptionsForm,
                     BsonBuilder* out) const override {
    out->AppendDocument("searchDefinition", index.search_definition());
  }
  StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const override {
    Element d = entry.Get("searchDefinition");
    if (d.type() != BsonType::kDocument) {
      return DamagedIndexEntry("vectorSearch index without its definition");
    }
    IndexOptions options;
    options.search_definition = Document::AdoptValidated(std::string(d.Document().bytes()));
    return options;
  }

  StatusOr<std::shared_ptr<IndexRuntimeState>> NewRuntimeState(
      const IndexDescriptor& index) const override {
    if (!index.is_search_index()) {
      return Status(ErrorCode::kCannotCreateIndex,
                    "vectorSearch indexes are made by createSearchIndexes, not createIndexes");
    }
    ROCKDOC_ASSIGN_OR_RETURN(VectorDefinition def,
                             ParseVectorDefinition(index.search_definition()));
    if (def.path != index.field_names()[0]) return BadDefinition("key pattern and path differ");
    return std::shared_ptr<IndexRuntimeState>(std::make_shared<VectorState>(std::move(def)));
  }

  Status GetKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                 MultikeyPaths* multikey_paths) const override {
    keys->clear();
    if (multikey_paths != nullptr) multikey_paths->assign(index.num_fields(), MultikeyComponents());
    const VectorDefinition& def = StateOf(index)->definition();
    std::vector<float> v;
    if (!VectorOf(def, doc, &v)) return Status::OK();
    Document filter = FilterDocumentOf(def, doc);
    BsonBuilder holder;
    holder.AppendDocument("", filter);
    Document h = std::move(holder).Build();
    keystring::Builder b(0);
    b.Append(h.Get(""));
    IndexKey key;
    key.bytes = b.bytes();
    key.type_bits.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    key.type_bits += b.type_bits();
    keys->push_back(std::move(key));
    return Status::OK();
  }

  IndexEntryFormat EntryFormat(const IndexDescriptor&) const override {
    return IndexEntryFormat::kStandard;
  }

  // The entry's vector, under the vector's path (what validate shows).
  Status DecodeKey(const IndexDescriptor& index, const IndexEntryView& entry,
                   BsonBuilder* out) const override {
    const VectorDefinition& def = StateOf(index)->definition();
    std::vector<float> v;
    ROCKDOC_RETURN_IF_ERROR(EntryVector(def, entry.type_bits, &v));
    out->OpenArray(def.path);
    for (float x : v) out->AppendDouble("", x);
    out->Close();
    return Status::OK();
  }

  bool IntervalsFor(const IndexDescriptor&, size_t, const MatchExpression&, std::vector<Interval>*,
                    BoundsTightness*) const override {
    return false;  // its scan is Nearest, never a range
  }
  bool KeysAreOrdered() const override { return false; }
  bool KeysHoldValues() const override { return false; }

  void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const override {
    out->AppendString("indexName", index.name());
    out->AppendDocument("searchDefinition", index.search_definition());
  }

  Status Nearest(const IndexDescriptor& index, const NearestQuery& q, const EntrySource& source,
                 std::vector<NearestCandidate>* out) const override {
    VectorState* state = StateOf(index);
    const VectorDefinition& def = state->definition();
    if (static_cast<int64_t>(q.vector.size()) != def.num_dimensions) {
      return Status(ErrorCode::kBadValue,
                    "vector field is indexed with " + std::to_string(def.num_dimensions) +
                        " dimensions but queried with " + std::to_string(q.vector.size()));
    }
    if (!q.exact) {
      ROCKDOC_RETURN_IF_ERROR(state->EnsureLoaded(source));
      return state->Search(q, out);
    }
    // ENN: every entry at the snapshot scored; the `limit` best kept.
    std::vector<float> v;
    out->clear();
    auto worse = [](const NearestCandidate& a, const NearestCandidate& b) {
      return a.score > b.score;  // a min-heap on score
    };
    ROCKDOC_RETURN_IF_ERROR(source.scan_at_snapshot(
        [&](std::string_view id_key, std::string_view key_bytes, std::string_view type_bits) {
          ROCKDOC_RETURN_IF_ERROR(EntryVector(def, type_bits, &v));
          if (q.filter != nullptr) {
            ROCKDOC_ASSIGN_OR_RETURN(Document filter, EntryFilter(def, key_bytes, type_bits));
            if (!q.filter->Matches(filter)) return Status::OK();
          }
          double score = VectorScore(def.similarity, v.data(), q.vector.data(), v.size());
          if (static_cast<int64_t>(out->size()) < q.limit) {
            out->push_back({std::string(id_key), score});
            std::push_heap(out->begin(), out->end(), worse);
          } else if (!out->empty() && score > out->front().score) {
            std::pop_heap(out->begin(), out->end(), worse);
            out->back() = {std::string(id_key), score};
            std::push_heap(out->begin(), out->end(), worse);
          }
          return Status::OK();
        }));
    std::sort_heap(out->begin(), out->end(), worse);  // best first
    return Status::OK();
  }
};

}  // namespace

StatusOr<VectorDefinition> ParseVectorDefinition(DocumentView definition) {
  VectorDefinition def;
  for (Element top : definition) {
    if (top.key() != "fields") {
      return BadDefinition("unknown field '" + std::string(top.key()) + "'");
    }
  }
  Element fields = definition.Get("fields");
  if (fields.type() != BsonType::kArray) return BadDefinition("'fields' must be an array");
  bool have_vector = false;
  for (Element f : fields.Array()) {
    if (f.type() != BsonType::kDocument) return BadDefinition("each field must be an object");
    DocumentView d = f.Document();
    Element type = d.Get("type"), path = d.Get("path");
    if (type.type() != BsonType::kString) return BadDefinition("a field needs a string 'type'");
    if (path.type() != BsonType::kString || path.String().empty()) {
      return BadDefinition("a field needs a non-empty string 'path'");
    }
    if (type.String() == "filter") {
      for (Element e : d) {
        if (e.key() != "type" && e.key() != "path") {
          return BadDefinition("unknown field '" + std::string(e.key()) + "' in a filter field");
        }
      }
      def.filter_paths.emplace_back(path.String());
      continue;
    }
    if (type.String() != "vector") {
      return BadDefinition("field type must be 'vector' or 'filter', not '" +
                           std::string(type.String()) + "'");
    }
    if (have_vector) return BadDefinition("rockdoc indexes one vector field per index");
    have_vector = true;
    def.path = std::string(path.String());
    for (Element e : d) {
      std::string_view k = e.key();
      if (k == "type" || k == "path") continue;
      if (k == "numDimensions") {
        if (!e.IsNumber() || e.NumberAsDouble() != std::floor(e.NumberAsDouble()) ||
            e.NumberAsDouble() < 1 || e.NumberAsDouble() > kMaxVectorDimensions) {
          return BadDefinition("numDimensions must be an integer from 1 to 8192");
        }
        def.num_dimensions = static_cast<int64_t>(e.NumberAsDouble());
      } else if (k == "similarity") {
        std::string_view s = e.IsString() ? e.String() : "";
        if (s == "euclidean") {
          def.similarity = VectorSimilarity::kEuclidean;
        } else if (s == "cosine") {
          def.similarity = VectorSimilarity::kCosine;
        } else if (s == "dotProduct") {
          def.similarity = VectorSimilarity::kDotProduct;
        } else {
          return BadDefinition("similarity must be 'euclidean', 'cosine' or 'dotProduct'");
        }
      } else if (k == "quantization") {
        std::string_view s = e.IsString() ? e.String() : "";
        if (s == "scalar" || s == "binary") {
          return Status(ErrorCode::kNotImplemented,
                        "quantization '" + std::string(s) + "' is not supported by rockdoc");
        }
        if (s != "none") return BadDefinition("quantization must be 'none', 'scalar' or 'binary'");
      } else {
        return BadDefinition("unknown field '" + std::string(k) + "' in a vector field");
      }
    }
    if (def.num_dimensions == 0) return BadDefinition("a vector field needs numDimensions");
    if (!d.Get("similarity").ok()) return BadDefinition("a vector field needs similarity");
  }
  if (!have_vector) return BadDefinition("a vectorSearch index needs a field of type 'vector'");
  for (const std::string& p : def.filter_paths) {
    if (p == def.path) return BadDefinition("path '" + p + "' is both the vector and a filter");
  }
  return def;
}

double VectorScore(VectorSimilarity similarity, const float* a, const float* b, size_t dims) {
  switch (similarity) {
    case VectorSimilarity::kEuclidean: {
      double d2 = 0;
      for (size_t i = 0; i < dims; ++i) {
        double d = static_cast<double>(a[i]) - b[i];
        d2 += d * d;
      }
      return 1.0 / (1.0 + std::sqrt(d2));
    }
    case VectorSimilarity::kCosine: {
      double na = std::sqrt(static_cast<double>(Dot(a, a, dims)));
      double nb = std::sqrt(static_cast<double>(Dot(b, b, dims)));
      double c = na > 0 && nb > 0 ? Dot(a, b, dims) / (na * nb) : 0.0;
      return (1.0 + c) / 2.0;
    }
    case VectorSimilarity::kDotProduct:
      return (1.0 + Dot(a, b, dims)) / 2.0;
  }
  return 0;
}

std::optional<double> VectorScoreOf(const IndexDescriptor& index, DocumentView doc,
                                    const std::vector<float>& query) {
  const VectorDefinition& def = StateOf(index)->definition();
  std::vector<float> v;
  if (!VectorOf(def, doc, &v) || v.size() != query.size()) return std::nullopt;
  return VectorScore(def.similarity, v.data(), query.data(), v.size());
}

VectorGraphStats VectorGraphStatsOf(const IndexDescriptor& index) {
  if (index.access_method().kind() != kVectorSearch) return {};
  return StateOf(index)->Stats();
}

const IndexAccessMethod& VectorSearchAccessMethod() {
  static const VectorSearchKind* kind = new VectorSearchKind();
  return *kind;
}

}  // namespace rockdoc::internal
