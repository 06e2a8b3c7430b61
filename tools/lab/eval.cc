#include "eval.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "query/expression/expression.h"
#include "rockdoc/json.h"

namespace rockdoc::lab {
namespace {

using internal::ExpressionPtr;
using internal::ExpressionVariables;
using internal::VariableScope;

Value FromBuilt(BsonBuilder& b) {
  Document doc = std::move(b).Build();
  return Value::FromElement(doc.Get("v"));
}

// ---- the lab's operators: seeded values ----

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Status Bad(std::string_view fn, std::string_view what) {
  return BadValue(std::string(fn) + ": " + std::string(what));
}

StatusOr<int64_t> AsInt(const Value& v, std::string_view fn) {
  int64_t i = 0;
  if (!v.element().ExactInt64(&i)) {
    return Bad(fn, "expected an integer, got " +
                       (v.ok() ? ValueToJson(v.element()) : std::string("missing")));
  }
  return i;
}

// Seeds from the arguments, from `first` on.
StatusOr<uint64_t> SeedOf(const std::vector<Value>& args, size_t first, std::string_view fn) {
  uint64_t h = 0x51ED270B27A1F00DULL;
  for (size_t i = first; i < args.size(); ++i) {
    if (!args[i].ok()) return Bad(fn, "a seed is missing");
    h = HashElement(args[i].element(), h);
  }
  return h;
}

// Text that looks like words, so compression behaves as on real prose
// rather than on random bytes or one repeated letter.
std::string MakeText(size_t bytes, uint64_t seed) {
  static constexpr std::string_view kWords[] = {
      "schema", "document", "embed", "reference", "bucket", "index", "query",  "write",
      "read",   "comment",  "post",  "the",       "of",     "and",   "a",      "to",
      "mongo",  "rocks",    "lab",   "pattern",   "field",  "array", "update", "size"};
  std::string out;
  out.reserve(bytes);
  uint64_t state = seed;
  while (out.size() < bytes) {
    if (!out.empty()) out.push_back(' ');
    out.append(kWords[SplitMix(&state) % std::size(kWords)]);
  }
  out.resize(bytes);
  return out;
}

// {$labText: [bytes, seed...]}: word-like text of that many bytes.
StatusOr<Value> LabText(const std::vector<Value>& args) {
  ROCKDOC_ASSIGN_OR_RETURN(int64_t bytes, AsInt(args[0], "$labText"));
  if (bytes < 0 || bytes > kMaxBsonObjectSize) return Bad("$labText", "bytes out of range");
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t seed, SeedOf(args, 1, "$labText"));
  return StringValue(MakeText(static_cast<size_t>(bytes), seed));
}

// {$labInt: [lo, hi, seed...]}: an integer uniform in [lo, hi).
StatusOr<Value> LabInt(const std::vector<Value>& args) {
  ROCKDOC_ASSIGN_OR_RETURN(int64_t lo, AsInt(args[0], "$labInt"));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t hi, AsInt(args[1], "$labInt"));
  if (hi <= lo) return Bad("$labInt", "empty range");
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t state, SeedOf(args, 2, "$labInt"));
  const uint64_t span = static_cast<uint64_t>(hi - lo);
  return IntValue(lo + static_cast<int64_t>(SplitMix(&state) % span));
}

// {$labObjectId: [seed...]}: an ObjectId whose timestamp is a fixed day in
// 2026, so ids sort by their random tail as generated ones sort by counter.
StatusOr<Value> LabObjectId(const std::vector<Value>& args) {
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t state, SeedOf(args, 0, "$labObjectId"));
  uint8_t bytes[ObjectId::kSize];
  const uint32_t seconds = 1795000000;
  bytes[0] = seconds >> 24;
  bytes[1] = (seconds >> 16) & 0xFF;
  bytes[2] = (seconds >> 8) & 0xFF;
  bytes[3] = seconds & 0xFF;
  const uint64_t a = SplitMix(&state);
  for (int i = 0; i < 8; ++i) bytes[4 + i] = static_cast<uint8_t>(a >> (8 * i));
  BsonBuilder b;
  b.AppendObjectId("v", ObjectId(bytes));
  return FromBuilt(b);
}

void RegisterLabOperators() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Failing here is a programming error (a name MongoDB has since taken).
    internal::RegisterExtensionOperator("$labText", &LabText, 1, SIZE_MAX).IgnoreError();
    internal::RegisterExtensionOperator("$labInt", &LabInt, 2, SIZE_MAX).IgnoreError();
    internal::RegisterExtensionOperator("$labObjectId", &LabObjectId, 0, SIZE_MAX).IgnoreError();
  });
}

// ---- expressions, parsed once ----

// The names of the variables an expression reads ("$$post._id": post).
void CollectNames(const Element& e, std::vector<std::string>* names) {
  switch (e.type()) {
    case BsonType::kString: {
      std::string_view s = e.String();
      if (s.size() > 2 && s.substr(0, 2) == "$$") {
        std::string name(
            s.substr(2, s.find('.') == std::string_view::npos ? s.npos : s.find('.') - 2));
        if (std::find(names->begin(), names->end(), name) == names->end()) {
          names->push_back(std::move(name));
        }
      }
      return;
    }
    case BsonType::kDocument:
      for (const Element& f : e.Document()) CollectNames(f, names);
      return;
    case BsonType::kArray:
      for (const Element& f : e.Array()) CollectNames(f, names);
      return;
    default:
      return;
  }
}

// A parsed expression and the variables it was parsed with, in id order.
struct Parsed {
  ExpressionPtr expr;
  std::vector<std::string> names;
};

// Parsed expressions, by the expression's bytes and which of the names it
// reads are the lab's variables (the rest are the engine's: $$ROOT, $$this
// of an inner $map, ...). Timed operations evaluate the same few holes
// thousands of times: they are parsed once.
StatusOr<const Parsed*> ParseCached(const Element& e, const Env& env) {
  thread_local std::unordered_map<std::string, std::unique_ptr<Parsed>> cache;
  std::vector<std::string> names;
  CollectNames(e, &names);
  std::string key(1, static_cast<char>(e.type()));
  key.append(reinterpret_cast<const char*>(e.value_data()), e.value_size());
  std::vector<std::string> defined;
  for (const std::string& n : names) {
    const bool lab = env.Find(n) != nullptr;
    key.push_back(lab ? '1' : '0');
    if (lab) defined.push_back(n);
  }
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  RegisterLabOperators();
  VariableScope scope;
  for (const std::string& n : defined) {
    StatusOr<int> id = scope.Define(n);
    if (!id.ok()) return id.status().WithContext("variable $$" + n);
  }
  StatusOr<ExpressionPtr> expr = internal::ParseExpression(e, &scope);
  if (!expr.ok()) return expr.status().WithContext(ValueToJson(e));
  if (cache.size() > 100000) cache.clear();  // bounded: scenarios have a few hundred
  auto parsed = std::make_unique<Parsed>(Parsed{std::move(*expr), std::move(defined)});
  const Parsed* out = parsed.get();
  cache.emplace(std::move(key), std::move(parsed));
  return out;
}

StatusOr<Value> EvaluateMaybeMissing(const Element& e, const Env& env) {
  ROCKDOC_ASSIGN_OR_RETURN(const Parsed* p, ParseCached(e, env));
  static const Document kEmpty;
  ExpressionVariables vars;
  vars.root = kEmpty.view();
  vars.user.reserve(p->names.size());
  for (const std::string& n : p->names) vars.user.push_back(*env.Find(n));
  StatusOr<Value> v = p->expr->Evaluate(vars);
  if (!v.ok()) return v.status().WithContext(ValueToJson(e));
  return v;
}

}  // namespace

Value IntValue(int64_t v) {
  BsonBuilder b;
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    b.AppendInt32("v", static_cast<int32_t>(v));
  } else {
    b.AppendInt64("v", v);
  }
  return FromBuilt(b);
}

Value StringValue(std::string_view s) {
  BsonBuilder b;
  b.AppendString("v", s);
  return FromBuilt(b);
}

Value DocumentValue(DocumentView doc) {
  BsonBuilder b;
  b.AppendDocument("v", doc);
  return FromBuilt(b);
}

Value ArrayValue(DocumentView array) {
  BsonBuilder b;
  b.AppendArray("v", array);
  return FromBuilt(b);
}

Value NullValue() {
  BsonBuilder b;
  b.AppendNull("v");
  return FromBuilt(b);
}

const Value* Env::Find(std::string_view name) const {
  for (const Env* e = this; e != nullptr; e = e->parent_) {
    auto it = e->vars_.find(name);
    if (it != e->vars_.end()) return &it->second;
  }
  return nullptr;
}

StatusOr<Value> Evaluate(const Element& e, const Env& env) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, EvaluateMaybeMissing(e, env));
  if (!v.ok())
    return BadValue("evaluates to nothing (a variable's path that finds nothing?): " +
                    ValueToJson(e));
  return v;
}

Status AppendFilled(const Element& t, const Env& env, std::string_view key, BsonBuilder& out) {
  switch (t.type()) {
    case BsonType::kString: {
      if (t.String().substr(0, 2) == "$$") {
        ROCKDOC_ASSIGN_OR_RETURN(Value v, Evaluate(t, env));
        out.AppendElementAs(key, v.element());
        return Status::OK();
      }
      out.AppendElementAs(key, t);
      return Status::OK();
    }
    case BsonType::kDocument: {
      DocumentView d = t.Document();
      for (const Element& f : d) {
        if (f.key().substr(0, 2) != "$$") continue;
        if (f.key() != "$$eval" || d.CountFields() != 1) {
          return BadValue("the lab's only $$ key is {\"$$eval\": <expression>}, alone: " +
                          ToJson(d));
        }
        ROCKDOC_ASSIGN_OR_RETURN(Value v, Evaluate(f, env));
        out.AppendElementAs(key, v.element());
        return Status::OK();
      }
      out.OpenDocument(key);
      for (const Element& f : d) ROCKDOC_RETURN_IF_ERROR(AppendFilled(f, env, f.key(), out));
      out.Close();
      return Status::OK();
    }
    case BsonType::kArray: {
      out.OpenArray(key);
      for (const Element& e : t.Array()) ROCKDOC_RETURN_IF_ERROR(AppendFilled(e, env, "", out));
      out.Close();
      return Status::OK();
    }
    default:
      out.AppendElementAs(key, t);
      return Status::OK();
  }
}

StatusOr<Value> Fill(const Element& t, const Env& env) {
  BsonBuilder b;
  ROCKDOC_RETURN_IF_ERROR(AppendFilled(t, env, "v", b));
  return FromBuilt(b);
}

StatusOr<Document> FillDocument(const Element& t, const Env& env, bool allow_array) {
  if (!t.ok()) return Document();
  ROCKDOC_ASSIGN_OR_RETURN(Value v, Fill(t, env));
  if (v.type() != BsonType::kDocument && !(allow_array && v.type() == BsonType::kArray)) {
    return BadValue("expected a document, got " + ValueToJson(v.element()));
  }
  return Document::AdoptValidated(std::string(v.element().Document().bytes()));
}

Status ForEachItem(const Element& t, const Env& env,
                   const std::function<Status(const Element&)>& fn) {
  // {"$$eval": {"$map": {input, as, in}}}: `in` for each element of `input`,
  // one at a time (the same items as the $map, never all in memory).
  if (t.type() == BsonType::kDocument && t.Document().CountFields() == 1) {
    Element eval = t.Document().Get("$$eval");
    if (eval.type() == BsonType::kDocument && eval.Document().CountFields() == 1 &&
        eval.Document().Get("$map").type() == BsonType::kDocument) {
      DocumentView spec = eval.Document().Get("$map").Document();
      Element as = spec.Get("as"), in = spec.Get("in");
      for (const Element& f : spec) {
        if (f.key() != "input" && f.key() != "as" && f.key() != "in") {
          return BadValue("$map: unknown argument " + std::string(f.key()));
        }
      }
      if (!in.ok() || (as.ok() && as.type() != BsonType::kString)) {
        return BadValue("$map needs 'input', 'in' and a string 'as': " + ToJson(spec));
      }
      const std::string var = as.ok() ? std::string(as.String()) : "this";
      ROCKDOC_ASSIGN_OR_RETURN(Value input, Evaluate(spec.Get("input"), env));
      if (input.type() != BsonType::kArray) {
        return BadValue("$map's input must be an array: " + ToJson(spec));
      }
      for (const Element& e : input.element().Array()) {
        Env inner(&env);
        inner.Set(var, Value::FromElement(e));
        ROCKDOC_ASSIGN_OR_RETURN(Value item, EvaluateMaybeMissing(in, inner));
        if (!item.ok()) item = NullValue();  // as $map makes a missing item null
        ROCKDOC_RETURN_IF_ERROR(fn(item.element()));
      }
      return Status::OK();
    }
  }
  ROCKDOC_ASSIGN_OR_RETURN(Value list, Fill(t, env));
  if (list.type() != BsonType::kArray) return BadValue("expected an array of items");
  for (const Element& e : list.element().Array()) ROCKDOC_RETURN_IF_ERROR(fn(e));
  return Status::OK();
}

uint64_t HashElement(const Element& e, uint64_t seed) {
  // FNV-1a over the type byte and the value bytes: stable across runs and
  // machines (little-endian BSON), unlike std::hash. An integer of any
  // numeric type hashes as IntValue makes it.
  int64_t i = 0;
  if (e.IsNumber() && e.type() != BsonType::kDecimal128 && e.type() != BsonType::kInt32 &&
      e.ExactInt64(&i)) {
    const Value normal = IntValue(i);
    if (normal.type() != e.type()) return HashElement(normal.element(), seed);
  }
  uint64_t h = seed ^ 0xCBF29CE484222325ULL;
  auto mix = [&h](uint8_t byte) {
    h ^= byte;
    h *= 0x100000001B3ULL;
  };
  mix(static_cast<uint8_t>(e.type()));
  const uint8_t* p = e.value_data();
  for (size_t i = 0; i < e.value_size(); ++i) mix(p[i]);
  return h;
}

std::string CanonicalJson(const Element& e) { return ValueToJson(e, JsonFormat::kCanonical); }

}  // namespace rockdoc::lab
