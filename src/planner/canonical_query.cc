#include "planner/canonical_query.h"

#include "query/expr_match_expression.h"

namespace rockdoc::internal {

namespace {

// The direction of a {$natural: 1 | -1} sort or hint (`what`), 0 when
// `spec` names no $natural. MongoDB accepts $natural only alone and only
// as 1 or -1 (of any numeric type): BadValue "$natural sort cannot be set
// to a value other than -1 or 1." otherwise.
StatusOr<int> NaturalDirection(DocumentView spec, std::string_view what) {
  Element natural = spec.Get("$natural");
  if (!natural.ok()) return 0;
  if (natural.IsNumber() && spec.CountFields() == 1) {
    const double d = natural.NumberAsDouble();
    if (d == 1 || d == -1) return d > 0 ? 1 : -1;
  }
  return BadValue("$natural " + std::string(what) +
                  " cannot be set to a value other than -1 or 1.");
}

// Whether `a` and `b` have the same field names in the same order.
bool SameFieldNames(DocumentView a, DocumentView b) {
  auto ia = a.begin(), ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    if ((*ia).key() != (*ib).key()) return false;
  }
  return ia == a.end() && ib == b.end();
}

}  // namespace

StatusOr<std::unique_ptr<CanonicalQuery>> MakeCanonicalQuery(DocumentView filter,
                                                             const FindOptions& options) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(filter.bytes()));
  auto cq = std::make_unique<CanonicalQuery>();
  cq->filter = Document::AdoptValidated(std::string(filter.bytes()));
  cq->comment = options.comment;
  std::shared_ptr<FilterVariables> let;
  if (!options.let.empty()) {
    ROCKDOC_RETURN_IF_ERROR(ValidateBson(options.let.bytes()));
    ROCKDOC_ASSIGN_OR_RETURN(let, BindLetVariables(options.let.view()));
  }
  ROCKDOC_ASSIGN_OR_RETURN(cq->root, ParseMatchExpression(cq->filter, std::move(let)));
  ROCKDOC_ASSIGN_OR_RETURN(cq->text, TopLevelText(cq->root.get()));
  ROCKDOC_ASSIGN_OR_RETURN(cq->natural_sort, NaturalDirection(options.sort, "sort"));
  ROCKDOC_ASSIGN_OR_RETURN(const int natural_hint, NaturalDirection(options.hint, "hint"));
  if (cq->natural_sort != 0) {
    // Storage order: a collection scan in that direction, no SORT stage.
    if ((!options.hint.empty() && natural_hint == 0) || !options.hint_name.empty()) {
      return BadValue("index hint not allowed with $natural sort order");
    }
    if (natural_hint != 0 && natural_hint != cq->natural_sort) {
      return BadValue("$natural hint must be in the same direction as $natural sort order");
    }
    cq->sort_spec = Document::AdoptValidated(std::string(options.sort.bytes()));
  } else if (!options.sort.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(cq->sort, SortPattern::Parse(options.sort, true));
    if (cq->sort.has_text_score() && cq->text == nullptr) {
      return Status(static_cast<ErrorCode>(40218),
                    "query requires text score metadata, but it is not available");
    }
    cq->sort_spec = cq->sort.ToDocument();
  }
  if (!options.projection.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(ProjectionInfo p,
                             MakeProjectionInfo(options.projection, cq->root.get()));
    if (!p.text_score_fields.empty() && cq->text == nullptr) {
      return Status(static_cast<ErrorCode>(40218),
                    "query requires text score metadata, but it is not available");
    }
    cq->projection = std::move(p);
  }
  if (options.skip < 0) {
    // The find command's IDL check (skip: {gte: 0}).
    return Status(static_cast<ErrorCode>(51024),
                  "BSON field 'skip' value must be >= 0, actual value '" +
                      std::to_string(options.skip) + "'");
  }
  cq->skip = options.skip;
  cq->limit = options.limit < 0 ? -options.limit : options.limit;
  cq->hint = options.hint;
  cq->hint_name = options.hint_name;
  if (!options.min.empty() || !options.max.empty()) {
    ROCKDOC_RETURN_IF_ERROR(ValidateBson(options.min.bytes()));
    ROCKDOC_RETURN_IF_ERROR(ValidateBson(options.max.bytes()));
    if (!options.min.empty() && !options.max.empty() && !SameFieldNames(options.min, options.max)) {
      return Status(static_cast<ErrorCode>(51176), "min and max must have the same field names");
    }
    cq->min = options.min;
    cq->max = options.max;
  }
  cq->return_key = options.return_key;
  cq->show_record_id = options.show_record_id;
  if (cq->return_key) cq->projection.reset();  // ignored, as MongoDB's RETURN_KEY ignores it
  if (options.tailable) {
    if (!options.sort.empty() && cq->natural_sort != 1) {
      return BadValue("cannot use tailable option with a sort other than {$natural: 1}");
    }
    cq->tailable = true;
  }
  cq->max_sort_bytes = options.max_blocking_sort_bytes;
  if (options.collation) {
    ROCKDOC_ASSIGN_OR_RETURN(CollatorPtr collator, Collator::Make(*options.collation));
    cq->collation_given = true;
    cq->SetCollator(std::move(collator));
  }
  return cq;
}

void CanonicalQuery::SetCollator(CollatorPtr c) {
  collator = std::move(c);
  root->SetCollator(collator);
  sort.set_collator(collator);
  find_shape_.reset();
}

const CanonicalQuery::FindShape& CanonicalQuery::find_shape() const {
  if (!find_shape_) {
    FindShape shape;
    shape.hash = ShapeFind(filter, sort_spec, projection ? projection->spec.view() : DocumentView(),
                           skip != 0, limit != 0, nullptr, &shape.traits);
    // The collation is part of the shape (the plan cache keys on it: an
    // index serves one collation only).
    if (collator != nullptr) {
      shape.hash ^= std::hash<std::string>()(collator->spec().bytes()) * 0x9E3779B97F4A7C15ull;
    }
    find_shape_ = shape;
  }
  return *find_shape_;
}

}  // namespace rockdoc::internal
