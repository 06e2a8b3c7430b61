// tools/lab/eval.h: the values a scenario file computes, in the engine's own
// aggregation expressions (src/query/expression/), with the lab's variables
// bound as `$$name` (MongoDB's `let`: an expression reads them, never sets
// them). tools/lab/README.md, "Values and expressions", is the reference.
//
// Two kinds of places, one rule: what is sent to a database is data, the
// rest is an expression.
//   - An expression (params, let, answer, measure, the lab's let and forEach
//     operations) is one aggregation expression: {"$add": ["$$i", 1]},
//     {"$map": {...}}, "$$post._id", {"_id": "$$p"} (an object expression).
//   - Data (every field of an operation sent to rockdoc or SQLite: filter,
//     update, document, pipeline, params, ...) goes to the engine as
//     written, its `$` operators untouched, except two holes the lab fills:
//     a string "$$name" or "$$name.a.b" (the variable, an expression), and
//     a one-field document {"$$eval": <expression>} (its value). Any other
//     key starting with "$$" is an error (an old template not converted).
//
// Beside MongoDB's operators the expressions have three of the lab's own,
// registered with RegisterExtensionOperator: $labText, $labInt and
// $labObjectId, deterministic "random" values seeded by their arguments (not
// by call order), so that variants that generate the same logical data in a
// different order (comments nested in posts vs comments on their own) get
// byte-identical values.
//
// Thread safety: the parsed expressions are cached per thread; an Env is
// not shared between threads.
#ifndef ROCKDOC_TOOLS_LAB_EVAL_H_
#define ROCKDOC_TOOLS_LAB_EVAL_H_

#include <cstdint>
#include <functional>
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
// A child must not outlive its parent. Names are MongoDB's user variable
// names (a lowercase letter first, then letters, digits and _).
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

// The value of the aggregation expression `e` with `env`'s variables. An
// expression that evaluates to missing (a path that finds nothing) is an
// error here, where a value is needed.
StatusOr<Value> Evaluate(const Element& e, const Env& env);

// Appends the data `t` under `key` to `out`, its holes ("$$name",
// {"$$eval": e}) filled.
Status AppendFilled(const Element& t, const Env& env, std::string_view key, BsonBuilder& out);
// The data `t`, filled.
StatusOr<Value> Fill(const Element& t, const Env& env);
// The data `t`, filled, which must be a document (or, with allow_array, an
// array); an absent `t` is the empty document.
StatusOr<Document> FillDocument(const Element& t, const Env& env, bool allow_array = false);

// Calls `fn` with each item of the data `t`: the elements of the array it
// fills to; for {"$$eval": {"$map": {input, as, in}}}, each element as it
// is computed (so a million rows never sit in memory as one array; the
// items are the same).
Status ForEachItem(const Element& t, const Env& env,
                   const std::function<Status(const Element&)>& fn);

// A deterministic 64-bit hash of a value, for seeds: an integer hashes
// alike whatever its numeric type (int32, int64, a whole double), so that
// {"$mod": ...} of a long seeds as the same int does.
uint64_t HashElement(const Element& e, uint64_t seed);

// The canonical Extended JSON of a value, for comparing answers.
std::string CanonicalJson(const Element& e);

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_EVAL_H_
