// query/update/update_driver.h: MongoDB's update language as pure functions
// over BSON.
//
// Given a stored document and an update specification, UpdateDriver produces
// the new document, or MongoDB's error, before anything is written. Nothing
// here touches storage: the caller (updateOne / updateMany /
// findOneAndUpdate / upserts) finds the targets, calls Apply, checks the
// result, and writes `Result::doc` together with the index entries that
// `Result::changed_paths` says may have changed.
//
// Two kinds of update exist, as in MongoDB:
//   - operator updates ({$set: {...}, $inc: {...}}): parsed once into a tree
//     of operator nodes (one class per operator, modifier_nodes.h) with all
//     arguments checked, then applied to each target document;
//   - replacements (no top-level `$` field): the new document is the
//     replacement, keeping the old `_id` first.
//
// Semantics follow MongoDB 5.0+: new fields are created in lexicographic
// order of their names (numeric names in numeric order); an operator with an
// empty argument ({$set: {}}) is a no-op, not an error; paths create missing
// intermediate documents and pad arrays with nulls; `_id` is immutable.
//
// Performance: only the nodes on updated paths are decoded; every unchanged
// subtree is copied as raw bytes, so $set of one field of a 1 MB document
// costs one copy of the document plus the field.
//
// Thread safety: a parsed UpdateDriver is immutable; Apply may run on many
// threads at once. Ownership: the driver copies the update and the array
// filters, so its arguments need not outlive Parse.
//
// Example:
//   auto driver = UpdateDriver::Parse(update_doc, /*array_filters=*/{});
//   if (!driver.ok()) return driver.status();              // FailedToParse, ...
//   UpdateContext ctx;
//   ctx.now_millis = NowMillis();
//   auto result = driver->Apply(stored_doc, ctx);
//   if (!result.ok()) return result.status();              // per-document errors
//   if (result->modified) Write(result->doc, result->changed_paths);
#ifndef ROCKDOC_QUERY_UPDATE_UPDATE_DRIVER_H_
#define ROCKDOC_QUERY_UPDATE_UPDATE_DRIVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/deadline.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc {

struct FilterVariables;

// Per-document inputs of Apply.
struct UpdateContext {
  // True when Apply builds the document an upsert inserts (from
  // SeedUpsertDocument; ProduceUpsertDocument sets it): $setOnInsert then
  // applies, and top-level `$`-prefixed field names are allowed, as for
  // inserts.
  bool is_upsert_insert = false;
  // The array position the query matched, for the positional `$` operator
  // (MongoDB's "matched array index"). Required when uses_positional().
  std::optional<size_t> positional_index;
  // "Now" for $currentDate, in milliseconds since the epoch; a timestamp is
  // Timestamp(now_millis / 1000, timestamp_increment).
  int64_t now_millis = 0;
  uint32_t timestamp_increment = 1;
  // maxTimeMS: the long loops of operators ($addToSet $each, $push $sort,
  // $pull) stop with MaxTimeMSExpired past it. Null: no limit.
  const internal::Deadline* deadline = nullptr;
};

class UpdateDriver {
 public:
  // Parses an update document. `array_filters` are the `arrayFilters`
  // option's documents (empty when none): each must have one top-level
  // identifier ({"elem.grade": {$gte: 85}} defines `elem`), and each defined
  // identifier must be used by a `$[identifier]` of the update, exactly once
  // defined.
  //
  // Errors (MongoDB's codes and messages):
  //   FailedToParse (9): unknown operator or a plain field beside operators
  //     ("Unknown modifier: $foo. Expected a valid update modifier or
  //     pipeline-style update specified as an array"), an operator whose
  //     argument is not a document, an unused or duplicate array filter;
  //   ConflictingUpdateOperators (40): two paths where one is a prefix of, or
  //     equal to, the other ("Updating the path 'a.b' would create a conflict
  //     at 'a'");
  //   BadValue (2) / TypeMismatch (14) / FailedToParse (9): an operator's
  //     argument is invalid ($inc of a string, $push $slice not an integer,
  //     ...); an undefined `$[identifier]` ("No array filter found for
  //     identifier 'x' in path 'a.$[x]'"); a positional operator first in a
  //     path or used twice;
  //   EmptyFieldName (56): "" or "a..b" as a path.
  static StatusOr<UpdateDriver> Parse(DocumentView update,
                                      const std::vector<Document>& array_filters);

  // Parses an update pipeline: `stages` is the array [{$set: ...}, ...]
  // (its bytes, as a BSON array). Each stage is one of $addFields/$set,
  // $project, $unset, $replaceRoot/$replaceWith (query/expression/
  // document_transform.h); any other stage is InvalidOptions (72) "<stage>
  // is not allowed to be used within an update", an unknown name 40324.
  // Apply runs the stages over the document (a missing `_id` comes back
  // from the original, a changed one is ImmutableField (66)); fields may
  // then have `$` or `.` in their names, as MongoDB 5.0+ allows there.
  // `let`, when not null: variables the stages may use ({$$name}, the
  // command's `let`; query/expr_match_expression.h BindLetVariables).
  static StatusOr<UpdateDriver> ParsePipeline(DocumentView stages,
                                              const FilterVariables* let = nullptr);

  UpdateDriver(UpdateDriver&&) noexcept;
  UpdateDriver& operator=(UpdateDriver&&) noexcept;
  ~UpdateDriver();

  // True for a replacement document (no `$` operators); false for an
  // operator update and a pipeline.
  bool is_replacement() const;
  // True when the update uses the positional `$` (the caller must then pass
  // the matched array position in UpdateContext::positional_index).
  bool uses_positional() const;

  struct Result {
    // The new document. When `modified` is false it is a copy of the input.
    Document doc;
    // False when the result is byte-identical to the input ($set to the same
    // value, $addToSet of a present element, $pull matching nothing, ...):
    // the caller writes nothing (MongoDB's nModified does not count it).
    // True, as MongoDB, after a $push that inserted elements even when its
    // $slice gave back the same array.
    bool modified = false;
    // The concrete paths whose values changed, created or disappeared, with
    // array positions as they are in the document ("grades.1.mean"); for a
    // replacement, the top-level fields that differ. An index on path P
    // needs rewriting when some changed path is a prefix of P or P a prefix
    // of it, ignoring positional components (see PathMayAffect).
    std::vector<std::string> changed_paths;
  };

  // Applies the update to `doc`, which is never modified. Errors:
  //   PathNotViable (28): a path crosses a non-container ("Cannot create
  //     field 'b' in element {a: 1}");
  //   TypeMismatch (14) / BadValue (2): an operator's type precondition
  //     ("Cannot apply $inc to a value of non-numeric type. ...", "The field
  //     'x' must be an array but is of type int in document {_id: 1}"), int64
  //     overflow in $inc/$mul, array updates on a missing path or non-array;
  //   BadValue (2): `$` without UpdateContext::positional_index;
  //   ConflictingUpdateOperators (40): two `$[...]` parts of the update reach
  //     the same element path;
  //   ImmutableField (66): the update changes `_id`;
  //   DollarPrefixedFieldName (52): a top-level `$` field would be written
  //     by an update that is not an upsert insert;
  //   Location17419: the result is larger than kMaxBsonObjectSize
  //     ("Resulting document after update is larger than 16777216").
  StatusOr<Result> Apply(DocumentView doc, const UpdateContext& ctx) const;

  // The document an upsert inserts when nothing matched `filter`: the seed
  // (SeedUpsertDocument: every equality for an operator update, only `_id`
  // for a replacement) with this update applied as an upsert insert
  // (`ctx.is_upsert_insert` is implied). The caller adds an ObjectId `_id`
  // when the result has none. Errors: SeedUpsertDocument's and Apply's
  // (ImmutableField (66) when a replacement's `_id` differs from the one the
  // filter fixes), and InvalidIdField (53) when the `_id` would be an array,
  // a regex or undefined.
  StatusOr<Document> ProduceUpsertDocument(DocumentView filter, UpdateContext ctx) const;

 private:
  struct Impl;
  explicit UpdateDriver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Which of a filter's equalities an upsert copies into its new document.
enum class UpsertSeed {
  kAllEqualities,  // operator updates ({$set: ...})
  kIdOnly,         // replacements: only `_id`, which must be fixed whole
};

// The document an upsert starts from when no document matched `filter`
// (MongoDB's populateDocumentWithQueryFields, defined by its upsert_fields
// tests): the filter's equalities after MongoDB's normalisation ({a: 1},
// {a: {$eq: 1}}, {a: {$in: [1]}}, {a: {$all: [1]}}, conditions combined by
// $and, a one-clause $or), in path order, dotted paths creating nested
// documents, `_id` first. Other predicates ($gt, $ne, $in or $all of several
// values, $elemMatch, $or of several clauses, $nor, regexes) contribute
// nothing. Errors:
//   NotSingleValueField (54): a path fixed twice ({x: {$all: [1, 2]}},
//     "cannot infer query fields to set, path 'x' is matched twice") or below
//     a fixed path ("... both paths 'x.x' and 'x' are matched"), also for
//     `_id` with kIdOnly;
//   NotExactValueField (63), kIdOnly: `_id` fixed part by part
//     ({"_id.x": 1}: "field at '_id' must be exactly specified, field at
//     sub-path '_id.x'found");
//   the filter's own parse errors.
//
// Example:
//   filter {name: "x", "meta.v": {$eq: 2}, n: {$gt: 1}} seeds
//   {meta: {v: 2}, name: "x"}.
StatusOr<Document> SeedUpsertDocument(DocumentView filter,
                                      UpsertSeed kind = UpsertSeed::kAllEqualities);

// True when a change at `changed_path` (from Result::changed_paths) may
// change the values an index on `index_path` extracts: one path is a prefix
// of the other, component-wise, where a numeric component of
// `changed_path` may stand for an array position that index paths skip.
bool PathMayAffect(std::string_view changed_path, std::string_view index_path);

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_UPDATE_UPDATE_DRIVER_H_
