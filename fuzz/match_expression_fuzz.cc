// libFuzzer: JSON text of a filter into ParseMatchExpression (run with
// -dict=fuzz/match_expression.dict). A filter that fails to parse fails with
// a code and a message. One that parses is evaluated against fixed documents
// (arrays, nesting, nulls, every type), and must keep its meaning through
// the rewrites MongoDB relies on; aborts otherwise:
//   * Serialize() (explain's parsedQuery) is valid BSON, parses again, the
//     reparsed tree matches exactly the same documents, and serializing it
//     again gives the same bytes (a fixed point);
//   * {$nor: [F]} matches exactly where F does not; {$and: [F, F]} and
//     {$or: [F]} exactly where F does.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace {

using rockdoc::fuzz::Fail;
using rockdoc::fuzz::FixedDocuments;
using rockdoc::fuzz::Json;

// Which fixed documents `expr` matches, one bit each; evaluates
// MatchesSingleElement on every top-level value on the way (no crash).
uint32_t MatchSet(const rockdoc::MatchExpression& expr) {
  uint32_t bits = 0;
  const auto& docs = FixedDocuments();
  for (size_t i = 0; i < docs.size(); ++i) {
    rockdoc::MatchDetails details;
    details.RequestElemMatchKey();
    const bool hit = expr.Matches(docs[i], &details);
    if (hit != expr.Matches(docs[i])) Fail("details change the answer", Json(docs[i]), "");
    if (hit) bits |= 1u << i;
    for (const rockdoc::Element& e : docs[i]) (void)expr.MatchesSingleElement(e);
  }
  (void)expr.MatchesSingleElement(rockdoc::Element());
  return bits;
}

// True when some leaf tests a DBRef field ($ref, $id, $db): as in MongoDB,
// {$id: {$eq: 1}} parses as an equality to the document {$eq: 1}, so the
// serialized form of such a leaf does not read back as itself.
bool HasDbRefPath(const rockdoc::MatchExpression& expr) {
  const std::string& path = expr.path();
  if (path == "$ref" || path == "$id" || path == "$db") return true;
  for (size_t i = 0; i < expr.num_children(); ++i) {
    if (HasDbRefPath(*expr.child(i))) return true;
  }
  return false;
}

// Parses {op: [filter, ...]} built around `filter` and returns its match set.
uint32_t WrappedMatchSet(std::string_view op, rockdoc::DocumentView filter, int copies,
                         std::string_view json) {
  rockdoc::BsonBuilder b;
  b.OpenArray(op);
  for (int i = 0; i < copies; ++i) b.AppendDocument("", filter);
  b.Close();
  rockdoc::Document wrapped = std::move(b).Build();
  auto expr = rockdoc::ParseMatchExpression(wrapped);
  if (!expr.ok())
    Fail("a parsed filter does not parse when wrapped", expr.status().ToString(), json);
  return MatchSet(**expr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto filter = rockdoc::FromJson(text);
  if (!filter.ok()) return 0;
  auto expr = rockdoc::ParseMatchExpression(*filter);
  if (!expr.ok()) {
    if (expr.status().code() == rockdoc::ErrorCode::kOk || expr.status().message().empty()) {
      Fail("error without a code or a message", expr.status().ToString(), text);
    }
    return 0;
  }
  (void)(*expr)->DebugString();
  const uint32_t hits = MatchSet(**expr);

  // explain's parsedQuery means the same filter.
  rockdoc::Document serialized = (*expr)->Serialize();
  rockdoc::BsonValidationOptions options;
  options.max_depth = 1000;
  options.max_size = static_cast<size_t>(1) << 30;
  rockdoc::Status valid = rockdoc::ValidateBson(serialized.bytes(), options);
  if (!valid.ok()) Fail("Serialize produced invalid BSON", valid.ToString(), text);
  if (!HasDbRefPath(**expr)) {
    const std::string serialized_json = Json(serialized);
    auto reparsed = rockdoc::ParseMatchExpression(serialized);
    if (!reparsed.ok()) {
      Fail("the serialized filter does not parse", reparsed.status().ToString(),
           std::string(text) + "\n--- serialized\n" + serialized_json);
    }
    if (MatchSet(**reparsed) != hits) {
      Fail("the serialized filter matches other documents", text, serialized_json);
    }
    rockdoc::Document again = (*reparsed)->Serialize();
    if (again.bytes() != serialized.bytes()) {
      Fail("serializing the serialized filter changes it", serialized_json, Json(again));
    }
  }

  // Logical identities.
  const uint32_t all = (1u << FixedDocuments().size()) - 1;
  if (WrappedMatchSet("$nor", *filter, 1, text) != (all & ~hits)) {
    Fail("{$nor: [F]} is not the complement of F", text, "");
  }
  if (WrappedMatchSet("$and", *filter, 2, text) != hits) Fail("{$and: [F, F]} differs", text, "");
  if (WrappedMatchSet("$or", *filter, 1, text) != hits) Fail("{$or: [F]} differs", text, "");
  return 0;
}
