// planner/canonical_query.h: a find request parsed once: the filter as a
// MatchExpression tree, the sort pattern, the projection, skip, limit and
// hint. Every error in the request (unknown operator, bad sort or
// projection) surfaces here, before any data is read.
#ifndef ROCKDOC_PLANNER_CANONICAL_QUERY_H_
#define ROCKDOC_PLANNER_CANONICAL_QUERY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "query/match_expression.h"
#include "query/query_shape.h"
#include "query/sort_pattern.h"
#include "rockdoc/options.h"

namespace rockdoc::internal {

// What the planner needs to know of a projection, and how to apply it.
struct ProjectionInfo {
  Document spec;
  // Only top-level inclusions/exclusions: PROJECTION_SIMPLE in explain.
  bool simple = false;
  // An inclusion projection (after the _id rule).
  bool inclusion = false;
  bool include_id = true;
  // Uses the positional "a.$" form: needs the filter's elemMatchKey.
  bool needs_elem_match_key = false;
  // The top-level fields an inclusion projection can output, when every
  // included path is a plain (non-dotted, no $slice/$elemMatch) field; empty
  // otherwise (then the projection cannot be covered).
  std::vector<std::string> coverable_fields;
  // The fields given as {$meta: "textScore"}: appended to each result with
  // its text score (after `apply`, which leaves them out).
  std::vector<std::string> text_score_fields;
  std::function<StatusOr<Document>(DocumentView doc, std::optional<size_t> elem_match_key)> apply;
};

StatusOr<ProjectionInfo> MakeProjectionInfo(DocumentView spec, const MatchExpression* filter);

// The $text of a filter: null when there is none; BadValue when it is not a
// top-level conjunct ("$text" under $or, $nor or $not) or there are two
// ("Too many text expressions").
StatusOr<const TextMatchExpression*> TopLevelText(const MatchExpression* root);

struct CanonicalQuery {
  Document filter;
  std::unique_ptr<MatchExpression> root;
  // The filter's $text (a top-level conjunct), or null.
  const TextMatchExpression* text = nullptr;
  Document sort_spec;
  SortPattern sort;  // empty for a $natural sort
  // sort({$natural: 1 | -1}): storage order, forward or backward (0: none).
  int natural_sort = 0;
  std::optional<ProjectionInfo> projection;
  int64_t skip = 0;
  int64_t limit = 0;  // 0 = none
  Document hint;
  std::string hint_name;
  // The command's comment, for its profile entry.
  std::optional<Value> comment;
  int64_t max_sort_bytes = int64_t{100} << 20;
  // min()/max(): the hinted index's key range [min, max) (FindOptions).
  Document min;
  Document max;
  // returnKey, showRecordId (FindOptions): a RETURN_KEY stage replaces the
  // projection; a SHOW_RECORD_ID stage appends `$recordId` after it.
  bool return_key = false;
  bool show_record_id = false;
  // A tailable cursor's plan: a forward collection scan of a capped
  // collection's insertion order, from the entry after sequence number
  // `resume_after_seq` (0: from the start). The entry at `resume_after_seq`
  // must still be there, else the scan fails with CappedPositionLost.
  bool tailable = false;
  uint64_t resume_after_seq = 0;
  // The caller counts the results and never reads them (countDocuments): a
  // plan may then answer from index keys alone, even with no projection,
  // and skip decoding them when the bounds are exactly the filter.
  bool count_only = false;
  // The collation of the filter and the sort (null: simple), and whether
  // the request named one (else the collection's default applies:
  // UseDefaultCollation).
  CollatorPtr collator;
  bool collation_given = false;
  // Sets the collation of the filter and the sort.
  void SetCollator(CollatorPtr c);
  // The collection's default, unless the request named a collation.
  void UseDefaultCollation(const CollatorPtr& c) {
    if (!collation_given && c != nullptr) SetCollator(c);
  }

  bool match_everything() const {
    return root->type() == MatchType::kAnd && root->num_children() == 0;
  }

  // The find's shape (query/query_shape.h's ShapeFind of the filter, sort,
  // projection and whether skip and limit are given): its hash and traits,
  // computed at the first call. The query statistics and the plan cache
  // both key on it. Not thread-safe: one thread plans and records a query.
  struct FindShape {
    uint64_t hash = 0;
    ShapeTraits traits;
  };
  const FindShape& find_shape() const;

 private:
  mutable std::optional<FindShape> find_shape_;
};

// Errors: those of the filter, sort and projection parsers; BadValue for a
// $natural sort or hint other than {$natural: 1 | -1}, an index hint with a
// $natural sort ("index hint not allowed with $natural sort order") or a
// $natural hint against it; 51024 for a negative skip; 51176 for min and
// max naming different fields; BadValue for a tailable query with a sort
// other than {$natural: 1}.
StatusOr<std::unique_ptr<CanonicalQuery>> MakeCanonicalQuery(DocumentView filter,
                                                             const FindOptions& options);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_PLANNER_CANONICAL_QUERY_H_
