// tools/lab/template.h: the expression language of scenario files.
//
// Scenario files hold rockdoc operations as Extended JSON with placeholders.
// Before an operation runs, its filter, update, documents, ... are evaluated
// against an environment of variables:
//
//   "$$name"            the value of variable `name` (typed: an int stays an int)
//   "$$name.a.0.b"      a path inside a document or array variable
//   {"$$fn": args}      a function (one field whose name starts with "$$"),
//                       listed in tools/lab/README.md: $$concat, $$add, $$mul,
//                       $$div, $$mod, $$min, $$max, $$range, $$text, $$int, $$generate,
//                       $$map, $$flatten, $$size, $$date, $$oid, $$object,
//                       $$literal
//   anything else       itself, with its fields and elements evaluated
//
// Update and query operators keep their single '$' and pass through untouched.
// Random values ($$text, $$int, $$oid) are seeded by their arguments, not by
// call order, so that variants that generate the same logical data in a
// different order (comments nested in posts vs comments on their own) get
// byte-identical values.
#ifndef ROCKDOC_TOOLS_LAB_TEMPLATE_H_
#define ROCKDOC_TOOLS_LAB_TEMPLATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::lab {

// Owned values built from C++ scalars and documents.
Value IntValue(int64_t v);  // int32 when it fits, as JSON numbers parse
Value StringValue(std::string_view s);
Value DocumentValue(DocumentView doc);
Value ArrayValue(DocumentView array);
Value NullValue();

// Variables: a scope with an optional parent, looked up innermost first.
// A child must not outlive its parent.
class Env {
 public:
  Env() = default;
  explicit Env(const Env* parent) : parent_(parent) {}
  void Set(const std::string& name, Value value) { vars_[name] = std::move(value); }
  // The variable, or nullptr.
  const Value* Find(std::string_view name) const;
  // Moves this scope's own variables into `outer` (a transaction's body
  // binds its results there once it has committed).
  void MoveInto(Env& outer) {
    for (auto& [name, value] : vars_) outer.vars_[name] = std::move(value);
    vars_.clear();
  }

 private:
  const Env* parent_ = nullptr;
  std::map<std::string, Value, std::less<>> vars_;
};

// Appends the value of template `t` under `key` to `out`.
Status AppendEvaluated(const Element& t, const Env& env, std::string_view key, BsonBuilder& out);
// The value of template `t`.
StatusOr<Value> Evaluate(const Element& t, const Env& env);
// The value of template `t`, which must be a document (or, with
// allow_array, an array).
StatusOr<Document> EvaluateDocument(const Element& t, const Env& env, bool allow_array = false);
// Every field of the document `t` evaluated (a convenience for templates
// stored as whole documents).
StatusOr<Document> EvaluateFields(DocumentView t, const Env& env);

// A deterministic 64-bit hash of values, for seeds.
uint64_t HashElement(const Element& e, uint64_t seed);

// The canonical Extended JSON of a value, for comparing answers.
std::string CanonicalJson(const Element& e);

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_TEMPLATE_H_
