// index/access_method.h: what a kind of index does, behind one interface
// (in the spirit of MongoDB's IndexAccessMethod). An index kind decides:
//   * which key patterns and options it accepts (createIndex's checks) and
//     how its options are written to the catalog and shown by listIndexes;
//   * the keys of a document (key generation, multikey paths);
//   * the layout of its entries (IndexEntryFormat; the bytes are in
//     storage/format.h with every other key layout);
//   * how a predicate becomes bounds over its keys, whether a scan gives
//     documents in key order (a sort) and whether its keys can answer a
//     projection (a covered plan), and how a key decodes back to values;
//   * what explain says of it.
// The write path (store/), the scans (exec/) and the planner ask the
// descriptor's access method and never test for a kind, so a new kind
// (hashed, wildcard, text) is one new implementation registered by the name
// its key patterns use ({a: "hashed"}), not a branch in every layer.
//
// rockdoc's built-in kinds are the ordered ("btree") index, the hashed
// index (hashed_access_method.cc) and 2dsphere (geo_access_method.cc). The btree: keystring
// keys in the key pattern's directions, MongoDB's multikey semantics
// (index/key_generator.h), exact bounds (index/index_bounds.h). TTL is an
// option of btree indexes, as in MongoDB.
//
// Thread safety: access methods are stateless singletons, shared by every
// index of their kind; all methods are const and thread-safe. Registration
// (RegisterIndexKind) is thread-safe too.
//
// Example:
//   const IndexAccessMethod& am = desc->access_method();
//   std::vector<IndexKey> keys;
//   ROCKDOC_RETURN_IF_ERROR(am.GetKeys(*desc, doc, &keys, nullptr));
#ifndef ROCKDOC_INDEX_ACCESS_METHOD_H_
#define ROCKDOC_INDEX_ACCESS_METHOD_H_

#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "index/index_bounds.h"
#include "index/index_descriptor.h"
#include "index/index_entry.h"
#include "index/key_generator.h"
#include "query/geometry.h"
#include "index/vector_search.h"
#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// Where an index's options are written: the catalog keeps every field it
// needs to rebuild the descriptor; listIndexes shows what MongoDB shows
// (defaults omitted).
enum class IndexOptionsForm { kCatalog, kListIndexes };

// Whether an index may answer a query at all, beyond what its bounds say.
enum class IndexEligibility {
  // The ordered index's rule: when its bounds restrict a leading field or
  // it gives the sort.
  kByBounds,
  // Never: it would miss matches (a 2dsphere index holds only documents
  // with a geometry, so a query without a geo predicate on it).
  kNever,
  // Always, its leading fields bounded or not (a geo predicate on a
  // compound 2dsphere index's geo field restricts the scan on its own).
  kAlways,
};

// What a kind keeps of its own options, parsed once per descriptor
// (IndexAccessMethod::MakeState; IndexDescriptor::kind_state()).
class IndexKindState {
 public:
  virtual ~IndexKindState() = default;
};

class TextIndexSpec;  // index/text_index.h

class IndexAccessMethod {
 public:
  virtual ~IndexAccessMethod() = default;

  // The kind's name ("btree"), or the plugin name of its key patterns.
  virtual std::string_view kind() const = 0;

  // ---- Option validation and persistence ----

  // The value of one key pattern field (1 or -1 for btree), checked before
  // its name (the descriptor checks names, for every kind alike).
  // CannotCreateIndex (67) with MongoDB's messages. Checks of the whole
  // pattern belong in ValidateOptions.
  virtual Status ValidateKeyField(const Element& field) const = 0;
  // The options, against the descriptor built from the key pattern (`index`
  // has its fields and name). CannotCreateIndex (67) or BadValue (2).
  virtual Status ValidateOptions(const IndexDescriptor& index,
                                 const IndexOptions& options) const = 0;
  // Appends the index's options to the open document of `out`.
  virtual void AppendOptions(const IndexDescriptor& index, IndexOptionsForm form,
                             BsonBuilder* out) const = 0;
  // The options AppendOptions(kCatalog) wrote. DataCorruptionDetected (296)
  // when they are missing or mistyped.
  virtual StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const = 0;

  // Rewrites a key pattern and options given to createIndex into the form
  // the index keeps (text: {a: "text"} becomes {_fts: "text", _ftsx: 1}
  // with weights {a: 1}); the kept form must come back unchanged. Errors as
  // ValidateOptions'. Default: unchanged.
  virtual Status Normalize(Document* /*key_pattern*/, IndexOptions* /*options*/) const {
    return Status::OK();
  }
  // The kind's parsed options, kept by the descriptor (null: none).
  virtual std::shared_ptr<const IndexKindState> MakeState(DocumentView /*key_pattern*/,
                                                          const IndexOptions&) const {
    return nullptr;
  }
  // Whether two indexes of this kind have the same kind-specific options
  // (createIndex's "already exists" rules).
  virtual bool SameKindOptions(const IndexDescriptor&, const IndexDescriptor&) const {
    return true;
  }
  // Whether a collection may hold one index of this kind only (text).
  virtual bool OnePerCollection() const { return false; }

  // ---- Keys and entries ----

  // The keys of `doc`, sorted by bytes without duplicates (empty when the
  // document is not in the index); *multikey_paths (if not null) receives
  // the path components where arrays were expanded.
  virtual Status GetKeys(const IndexDescriptor& index, DocumentView doc,
                         std::vector<IndexKey>* keys, MultikeyPaths* multikey_paths) const = 0;
  // The layout of the index's entries.
  virtual IndexEntryFormat EntryFormat(const IndexDescriptor& index) const = 0;
  // Appends an entry's key values to the open document of `out`, one field
  // per key field with its original type (what a covered plan returns).
  virtual Status DecodeKey(const IndexDescriptor& index, const IndexEntryView& entry,
                           BsonBuilder* out) const = 0;

  // ---- Bounds and scan ----

  // The intervals of field `field`'s key values that a leaf predicate on
  // that field's path allows, and how exactly they answer it (see
  // IntervalsForLeaf). False: the predicate gives no bounds on this kind.
  virtual bool IntervalsFor(const IndexDescriptor& index, size_t field, const MatchExpression& leaf,
                            std::vector<Interval>* out, BoundsTightness* tightness) const = 0;
  // Whether a scan returns entries in the order of the key values (so it
  // can provide a sort), and whether the keys hold the values themselves
  // (so a plan can be covered).
  virtual bool KeysAreOrdered() const = 0;
  virtual bool KeysHoldValues() const = 0;
  // Whether the index may answer a query with conjuncts `preds` (the
  // planner asks before it builds bounds).
  virtual IndexEligibility Eligibility(const IndexDescriptor& index,
                                       const std::vector<const MatchExpression*>& preds) const {
    (void)index;
    (void)preds;
    return IndexEligibility::kByBounds;
  }

  // ---- Nearest-first scans ($near, $nearSphere, $geoNear) ----
  // A scan that is not one set of ranges: the plan scans growing regions
  // around a point (MongoDB's GEO_NEAR_2DSPHERE), each given as intervals of
  // one field, and returns documents in distance order.

  // The field a near search bounds, or none when the kind cannot search.
  virtual std::optional<size_t> NearField(const IndexDescriptor& index) const {
    (void)index;
    return std::nullopt;
  }
  // The intervals of field `field` that hold every document within
  // `radius` radians of `center` (a superset). False: not this kind.
  virtual bool NearIntervals(const IndexDescriptor& index, size_t field, const GeoPoint& center,
                             double radius, std::vector<Interval>* out) const {
    (void)index;
    (void)field;
    (void)center;
    (void)radius;
    (void)out;
    return false;
  }
  // Whether the planner may answer ordinary predicates with scans of this
  // index (false for text: its entries are terms, one per word).
  virtual bool AnswersPlainQueries() const { return true; }
  // The index's text search ($text), or null when it has none.
  virtual const TextIndexSpec* TextSearch(const IndexDescriptor&) const { return nullptr; }

  // ---- Search indexes: scans that are not ranges ----

  // The state this kind keeps beside the entries of `index` (null: none),
  // made once per descriptor; the place to check a search definition.
  // Errors: the kind's own for a bad definition.
  virtual StatusOr<std::shared_ptr<IndexRuntimeState>> NewRuntimeState(
      const IndexDescriptor& index) const {
    (void)index;
    return std::shared_ptr<IndexRuntimeState>();
  }
  // The nearest entries to a query (vectorSearch): see index/vector_search.h
  // for the query and the answer. The kinds that have ranges only answer
  // NotImplemented.
  virtual Status Nearest(const IndexDescriptor& index, const NearestQuery& query,
                         const EntrySource& source, std::vector<NearestCandidate>* out) const {
    (void)index, (void)query, (void)source, (void)out;
    return Status(ErrorCode::kNotImplemented,
                  "index kind '" + std::string(kind()) + "' has no nearest-neighbour search");
  }

  // ---- Explain ----

  // The fields explain's IXSCAN / COUNT_SCAN show of the index, appended to
  // the open document: keyPattern, indexName, isMultiKey, multiKeyPaths,
  // isUnique, isSparse, isPartial, indexVersion.
  virtual void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const = 0;
};

// The ordered index, rockdoc's first kind.
const IndexAccessMethod& BtreeAccessMethod();
// {a: "text"}: terms with their scores (index/text_index.h); registered
// under "text" from the start.
const IndexAccessMethod& TextAccessMethod();
// {a: "hashed"}: keys on MongoDB's hash of the value (bson/element_hash.h);
// registered under "hashed" from the start.
const IndexAccessMethod& HashedAccessMethod();
// {loc: "2dsphere"}: S2 cell ids of the geometry's covering
// (index/geo_access_method.cc); registered under "2dsphere" from the start.
const IndexAccessMethod& Geo2dsphereAccessMethod();
// {path: "vectorSearch"}: a search index over vectors, made by
// createSearchIndexes (index/vector_search.h); registered from the start.
const IndexAccessMethod& VectorSearchAccessMethod();

// The access method for a key pattern: btree for numeric directions, or
// the kind registered under the plugin name its string values give. Errors,
// with MongoDB's codes: CannotCreateIndex (67) "Unknown index plugin 'x'",
// and MongoDB's own refusals (geoHaystack; "wildcard" as a value);
// NotImplemented (238) "text indexes are not supported by rockdoc" for
// MongoDB's kinds that rockdoc does not build (2d, text,
// columnstore, and wildcard for a "$**" path); BadValue (2) when a pattern
// mixes two plugins.
StatusOr<const IndexAccessMethod*> AccessMethodFor(DocumentView key_pattern);

// CannotCreateIndex (67) when `options` give a 2dsphereIndexVersion (for
// the kinds other than 2dsphere, which would ignore it).
Status CheckNoSphereVersion(const IndexOptions& options);
// InvalidIndexSpecificationOption (197) when `options` hold a text index's
// options (weights, default_language, ...): every other kind's check.
Status RefuseTextOptions(const IndexOptions& options);

// DataCorruptionDetected (296): "catalog index entry is damaged: <message>".
Status DamagedIndexEntry(std::string message);

// Makes key patterns naming `plugin` ({a: "<plugin>"}) use `method`, which
// must outlive every index of its kind. Returns false (and changes
// nothing) when the name is taken.
bool RegisterIndexKind(std::string plugin, const IndexAccessMethod* method);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_ACCESS_METHOD_H_
