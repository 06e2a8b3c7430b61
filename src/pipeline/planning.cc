// pipeline/planning.cc: the planning passes (planning.h).
#include "pipeline/planning.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/stage.h"
#include "query/expression/document_transform.h"
#include "query/match_expression.h"
#include "query/sort_pattern.h"

namespace rockdoc::internal {

namespace {

// ---- $match movement ----
//
// A $match moves ahead of the stages before it that do not change what it
// reads (as MongoDB's optimizer moves it), so that it filters earlier and,
// reaching the front, becomes the find's filter and uses an index (a view's
// reads gain the most). It passes a $sort, an $addFields/$set or $unset of
// other fields, an $unwind of another path, a $lookup into another field:
// each keeps the other fields of a document as they were, one output per
// input or copies of it, in order. The $match must parse, and name its
// fields plainly (no $expr, $where, $text: those stay where they are).

// The root fields `filter` reads (its paths' first parts); false when it
// reads something unnamed.
bool MatchRoots(DocumentView filter, std::set<std::string>* roots) {
  for (const Element& e : filter) {
    const std::string_view k = e.key();
    if (k == "$and" || k == "$or" || k == "$nor") {
      if (e.type() != BsonType::kArray) return false;
      for (const Element& clause : e.Array()) {
        if (clause.type() != BsonType::kDocument || !MatchRoots(clause.Document(), roots)) return false;
      }
    } else if (k == "$comment") {
      continue;
    } else if (k.empty() || k[0] == '$') {
      return false;
    } else {
      roots->insert(std::string(k.substr(0, k.find('.'))));
    }
  }
  return true;
}

// The root fields `stage` may change, when it is one a $match may pass
// (and well formed enough to say: the stage's own file decides, through
// its table entry); false otherwise.
bool ChangedRoots(const Element& stage, std::set<std::string>* changed) {
  const StageDef* def = FindStage(stage.key());
  return def != nullptr && def->changed_roots != nullptr && def->changed_roots(stage, changed);
}

void MoveMatchesEarlier(std::vector<Element>* stages) {
  for (size_t i = 1; i < stages->size(); ++i) {
    if ((*stages)[i].key() != "$match" || (*stages)[i].type() != BsonType::kDocument) continue;
    std::set<std::string> reads;
    if (!MatchRoots((*stages)[i].Document(), &reads)) continue;
    // How far it may move; parsed (to move only a well-formed one) only
    // when it moves at all: a $lookup's sub-pipeline opens per document.
    size_t to = i;
    for (; to > 0; --to) {
      std::set<std::string> changed;
      if (!ChangedRoots((*stages)[to - 1], &changed)) break;
      bool disjoint = true;
      for (const std::string& r : reads) disjoint = disjoint && changed.count(r) == 0;
      if (!disjoint) break;
    }
    if (to == i || !ParseMatchExpression((*stages)[i].Document()).ok()) continue;
    std::rotate(stages->begin() + static_cast<std::ptrdiff_t>(to),
                stages->begin() + static_cast<std::ptrdiff_t>(i),
                stages->begin() + static_cast<std::ptrdiff_t>(i + 1));
  }
}

// Whether a filter has an $expr (at its top or inside $and/$or/$nor).
bool MentionsExpr(DocumentView filter) {
  for (const Element& f : filter) {
    if (f.key() == "$expr") return true;
    if ((f.key() == "$and" || f.key() == "$or" || f.key() == "$nor") && f.type() == BsonType::kArray) {
      for (const Element& clause : f.Array()) {
        if (clause.type() == BsonType::kDocument && MentionsExpr(clause.Document())) return true;
      }
    }
  }
  return false;
}

}  // namespace

std::string RootOf(std::string_view path) { return std::string(path.substr(0, path.find('.'))); }

StatusOr<std::vector<Element>> StageElements(DocumentView pipeline) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, PipelineStages(pipeline));
  MoveMatchesEarlier(&stages);
  return stages;
}

int64_t TopK(const std::vector<Element>& stages, size_t next) {
  int64_t skip = 0;
  if (next < stages.size() && stages[next].key() == "$skip") {
    StatusOr<int64_t> n = StageCount("$skip", stages[next]);
    if (!n.ok()) return 0;
    skip = *n;
    ++next;
  }
  if (next >= stages.size() || stages[next].key() != "$limit") return 0;
  StatusOr<int64_t> n = StageCount("$limit", stages[next]);
  if (!n.ok() || *n > INT64_MAX - skip) return 0;
  return skip + *n;
}

StatusOr<LeadingFind> Pushdown(const std::vector<Element>& stages, const PipelineOptions& options) {
  size_t i = 0;
  BsonBuilder filter_builder;
  std::vector<Element> matches;
  FindOptions fo;
  fo.max_time_ms = options.FindMaxTimeMS();
  if (options.hint) fo.hint = *options.hint;
  if (options.hint_name) fo.hint_name = *options.hint_name;
  if (!stages.empty() && stages[0].key() == "$geoNear") {
    // The find searches nearest first; the $geoNear stage (next = 0) adds
    // each document's distance.
    LeadingFind out;
    ROCKDOC_ASSIGN_OR_RETURN(out.filter, GeoNearFindFilter(stages[0]));
    out.options = std::move(fo);
    return out;
  }
  while (i < stages.size() && stages[i].key() == "$match") {
    if (stages[i].type() != BsonType::kDocument) {
      return StageFailed(15959, "the match filter must be an expression in an object");
    }
    // A $match that may read variables bound outside ($lookup's let) runs
    // as a stage: the find knows no variables.
    if (options.variables != nullptr && MentionsExpr(stages[i].Document())) break;
    // Checked here, with MongoDB's error, before anything runs.
    ROCKDOC_RETURN_IF_ERROR(ParseMatchExpression(stages[i].Document()).status());
    matches.push_back(stages[i]);
    ++i;
  }
  if (i < stages.size() && stages[i].key() == "$sort") {
    if (stages[i].type() != BsonType::kDocument) {
      return StageFailed(15973, "the $sort key specification must be an object");
    }
    if (stages[i].Document().empty()) return StageFailed(15976, "$sort stage must have at least one sort key");
    ROCKDOC_RETURN_IF_ERROR(SortPattern::Parse(stages[i].Document()).status());
    fo.sort = Document::AdoptValidated(std::string(stages[i].Document().bytes()));
    ++i;
  }
  bool limited = false;
  while (i < stages.size() && (stages[i].key() == "$skip" || stages[i].key() == "$limit")) {
    ROCKDOC_ASSIGN_OR_RETURN(int64_t n, StageCount(stages[i].key(), stages[i]));
    if (stages[i].key() == "$skip") {
      if (limited) break;  // a skip after a limit is not a find's
      fo.skip += n;
    } else {
      fo.limit = limited ? std::min(fo.limit, n) : n;
      limited = true;
    }
    ++i;
  }
  LeadingFind out;
  Document& filter = out.filter;
  if (matches.size() == 1) {
    filter = Document::AdoptValidated(std::string(matches[0].Document().bytes()));
  } else if (matches.size() > 1) {
    filter_builder.OpenArray("$and");
    for (const Element& m : matches) filter_builder.AppendDocument("", m.Document());
    filter_builder.Close();
    filter = std::move(filter_builder).Build();
  }

  out.options = std::move(fo);
  out.next = i;
  return out;
}

}  // namespace rockdoc::internal
