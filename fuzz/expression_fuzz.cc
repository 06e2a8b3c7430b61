// libFuzzer: JSON text of an aggregation expression into ParseExpression
// (query/expression/; run with -dict=fuzz/expression.dict). An expression
// that fails to parse fails with a code and a message. One that parses is
// evaluated against fixed documents (arrays, nesting, nulls, every type)
// with a $let variable in scope; aborts unless every evaluation either
// succeeds with valid BSON or fails with a code and a message, and the same
// evaluation twice gives the same bytes (expressions are pure but $$NOW,
// which is fixed here). $range is bounded to 4,096 values (64 KiB at its
// 16 bytes a value) so an expression that iterates over one (a $reduce over
// {$range: [0, 666666665]}, once a timeout here) stays within libFuzzer's
// time limit; the bound itself is the same code at any size.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "query/expression/expression.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace {

using rockdoc::fuzz::Fail;
using rockdoc::fuzz::FixedDocuments;

std::string Outcome(const rockdoc::StatusOr<rockdoc::Value>& v, std::string_view text) {
  if (!v.ok()) {
    if (v.status().code() == rockdoc::ErrorCode::kOk || v.status().message().empty()) {
      Fail("an evaluation error without a code or a message", v.status().ToString(), text);
    }
    return "error " + v.status().ToString();
  }
  if (!v->ok()) return "missing";
  rockdoc::BsonBuilder b;
  b.AppendElementAs("v", v->element());
  rockdoc::Document d = std::move(b).Build();
  rockdoc::BsonValidationOptions options;
  options.max_depth = 1000;
  options.max_size = static_cast<size_t>(1) << 30;
  rockdoc::Status valid = rockdoc::ValidateBson(d.bytes(), options);
  if (!valid.ok()) Fail("an evaluation produced invalid BSON", valid.ToString(), text);
  (void)rockdoc::internal::IsTruthy(v->element());
  return std::string(d.bytes());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  rockdoc::internal::SetRangeMemoryLimitBytes(4096 * rockdoc::internal::kRangeBytesPerValue);
  auto wrapped = rockdoc::FromJson("{\"e\": " + std::string(text) + "}");
  if (!wrapped.ok()) return 0;
  rockdoc::internal::VariableScope scope;
  if (!scope.Define("v").ok()) Fail("cannot define $$v", "", text);
  auto expr = rockdoc::internal::ParseExpression(wrapped->Get("e"), &scope);
  if (!expr.ok()) {
    if (expr.status().code() == rockdoc::ErrorCode::kOk || expr.status().message().empty()) {
      Fail("a parse error without a code or a message", expr.status().ToString(), text);
    }
    return 0;
  }
  for (const rockdoc::Document& doc : FixedDocuments()) {
    rockdoc::internal::ExpressionVariables vars;
    vars.root = doc.view();
    vars.now_ms = 1700000000000;
    vars.user.resize(scope.id_count());
    vars.user[0] = rockdoc::Value::FromElement(doc.Get("a"));
    const std::string first = Outcome((*expr)->Evaluate(vars), text);
    if (Outcome((*expr)->Evaluate(vars), text) != first) {
      Fail("the same evaluation gave two answers", text, rockdoc::fuzz::Json(doc));
    }
  }
  return 0;
}
