#include "template.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <vector>

#include "rockdoc/json.h"

namespace rockdoc::lab {
namespace {

Value FromBuilt(BsonBuilder& b) {
  Document doc = std::move(b).Build();
  return Value::FromElement(doc.Get("v"));
}

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Status Bad(std::string_view fn, std::string_view what) {
  return BadValue(std::string(fn) + ": " + std::string(what));
}

StatusOr<int64_t> AsInt(const Element& e, std::string_view fn) {
  int64_t v = 0;
  if (!e.ExactInt64(&v)) return Bad(fn, "expected an integer, got " + ValueToJson(e));
  return v;
}

// The elements of an evaluated array argument.
StatusOr<std::vector<Element>> ArgList(const Value& v, std::string_view fn) {
  if (v.type() != BsonType::kArray) return Bad(fn, "expected an array of arguments");
  std::vector<Element> out;
  for (const Element& e : v.element().Array()) out.push_back(e);
  return out;
}

// Seeds from a list of elements, from `first` on.
uint64_t SeedOf(const std::vector<Element>& args, size_t first) {
  uint64_t h = 0x51ED270B27A1F00DULL;
  for (size_t i = first; i < args.size(); ++i) h = HashElement(args[i], h);
  return h;
}

// Text that looks like words, so compression behaves as on real prose
// rather than on random bytes or one repeated letter.
std::string MakeText(size_t bytes, uint64_t seed) {
  static constexpr std::string_view kWords[] = {
      "schema", "document", "embed",  "reference", "bucket", "index", "query",  "write",
      "read",   "comment",  "post",   "the",       "of",     "and",   "a",      "to",
      "mongo",  "rocks",    "lab",    "pattern",   "field",  "array", "update", "size"};
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

// Calls: `fn` is the field name ("$$concat"), `arg` its unevaluated value.
Status AppendCall(std::string_view fn, const Element& arg, const Env& env, std::string_view key,
                  BsonBuilder& out) {
  if (fn == "$$literal") {
    out.AppendElementAs(key, arg);
    return Status::OK();
  }
  if (fn == "$$generate" || fn == "$$map") {
    // Both produce an array element by element, without building the input
    // twice: $$generate {count, as: "i", template}, $$map {input, as: "this", in}.
    if (arg.type() != BsonType::kDocument) return Bad(fn, "expected a document");
    DocumentView spec = arg.Document();
    std::string as = fn == "$$generate" ? "i" : "this";
    if (Element a = spec.Get("as"); a.ok()) {
      if (a.type() != BsonType::kString) return Bad(fn, "'as' must be a string");
      as = std::string(a.String());
    }
    Element body = spec.Get(fn == "$$generate" ? "template" : "in");
    if (!body.ok()) return Bad(fn, fn == "$$generate" ? "missing 'template'" : "missing 'in'");
    out.OpenArray(key);
    if (fn == "$$generate") {
      Element count_t = spec.Get("count");
      if (!count_t.ok()) return Bad(fn, "missing 'count'");
      ROCKDOC_ASSIGN_OR_RETURN(Value count_v, Evaluate(count_t, env));
      ROCKDOC_ASSIGN_OR_RETURN(int64_t count, AsInt(count_v.element(), fn));
      for (int64_t i = 0; i < count; ++i) {
        Env inner(&env);
        inner.Set(as, IntValue(i));
        ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(body, inner, "", out));
      }
    } else {
      Element input_t = spec.Get("input");
      if (!input_t.ok()) return Bad(fn, "missing 'input'");
      ROCKDOC_ASSIGN_OR_RETURN(Value input, Evaluate(input_t, env));
      if (input.type() != BsonType::kArray) return Bad(fn, "'input' must be an array");
      for (const Element& e : input.element().Array()) {
        Env inner(&env);
        inner.Set(as, Value::FromElement(e));
        ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(body, inner, "", out));
      }
    }
    out.Close();
    return Status::OK();
  }

  // The other functions take evaluated arguments.
  ROCKDOC_ASSIGN_OR_RETURN(Value v, Evaluate(arg, env));
  if (fn == "$$range") {
    int64_t lo = 0, hi = 0;
    if (v.type() == BsonType::kArray) {
      ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
      if (args.size() != 2) return Bad(fn, "expected n or [start, end]");
      ROCKDOC_ASSIGN_OR_RETURN(lo, AsInt(args[0], fn));
      ROCKDOC_ASSIGN_OR_RETURN(hi, AsInt(args[1], fn));
    } else {
      ROCKDOC_ASSIGN_OR_RETURN(hi, AsInt(v.element(), fn));
    }
    out.OpenArray(key);
    for (int64_t i = lo; i < hi; ++i) out.AppendElementAs("", IntValue(i).element());
    out.Close();
    return Status::OK();
  }
  if (fn == "$$flatten") {
    if (v.type() != BsonType::kArray) return Bad(fn, "expected an array of arrays");
    out.OpenArray(key);
    for (const Element& inner : v.element().Array()) {
      if (inner.type() != BsonType::kArray) return Bad(fn, "expected an array of arrays");
      for (const Element& e : inner.Array()) out.AppendElementAs("", e);
    }
    out.Close();
    return Status::OK();
  }
  if (fn == "$$size") {
    if (v.type() != BsonType::kArray) return Bad(fn, "expected an array");
    out.AppendElementAs(key, IntValue(v.element().Array().CountFields()).element());
    return Status::OK();
  }
  if (fn == "$$date") {
    ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, AsInt(v.element(), fn));
    out.AppendDateTime(key, ms);
    return Status::OK();
  }
  if (fn == "$$concat") {
    ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
    std::string s;
    for (const Element& e : args) {
      int64_t i = 0;
      if (e.type() == BsonType::kString) {
        s.append(e.String());
      } else if (e.ExactInt64(&i)) {
        s.append(std::to_string(i));
      } else {
        return Bad(fn, "can only join strings and integers");
      }
    }
    out.AppendString(key, s);
    return Status::OK();
  }
  if (fn == "$$add" || fn == "$$mul" || fn == "$$div" || fn == "$$mod" || fn == "$$min" ||
      fn == "$$max") {
    ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
    if (args.empty()) return Bad(fn, "expected at least one argument");
    ROCKDOC_ASSIGN_OR_RETURN(int64_t acc, AsInt(args[0], fn));
    if ((fn == "$$div" || fn == "$$mod") && args.size() != 2) return Bad(fn, "expected [a, b]");
    for (size_t i = 1; i < args.size(); ++i) {
      ROCKDOC_ASSIGN_OR_RETURN(int64_t x, AsInt(args[i], fn));
      if (fn == "$$add") acc += x;
      if (fn == "$$mul") acc *= x;
      if ((fn == "$$div" || fn == "$$mod") && x == 0) return Bad(fn, "division by zero");
      if (fn == "$$div") acc /= x;
      if (fn == "$$mod") acc %= x;
      if (fn == "$$min") acc = std::min(acc, x);
      if (fn == "$$max") acc = std::max(acc, x);
    }
    out.AppendElementAs(key, IntValue(acc).element());
    return Status::OK();
  }
  if (fn == "$$text") {
    // [bytes, seed...]
    ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
    if (args.empty()) return Bad(fn, "expected [bytes, seed...]");
    ROCKDOC_ASSIGN_OR_RETURN(int64_t bytes, AsInt(args[0], fn));
    if (bytes < 0 || bytes > kMaxBsonObjectSize) return Bad(fn, "bytes out of range");
    out.AppendString(key, MakeText(static_cast<size_t>(bytes), SeedOf(args, 1)));
    return Status::OK();
  }
  if (fn == "$$int") {
    // [lo, hi, seed...]: uniform in [lo, hi).
    ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
    if (args.size() < 2) return Bad(fn, "expected [lo, hi, seed...]");
    ROCKDOC_ASSIGN_OR_RETURN(int64_t lo, AsInt(args[0], fn));
    ROCKDOC_ASSIGN_OR_RETURN(int64_t hi, AsInt(args[1], fn));
    if (hi <= lo) return Bad(fn, "empty range");
    uint64_t state = SeedOf(args, 2);
    uint64_t span = static_cast<uint64_t>(hi - lo);
    out.AppendElementAs(key, IntValue(lo + static_cast<int64_t>(SplitMix(&state) % span)).element());
    return Status::OK();
  }
  if (fn == "$$oid") {
    // [seed...]: a deterministic ObjectId whose timestamp is a fixed day in
    // 2026, so ids sort by their random tail as generated ones sort by counter.
    ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
    uint64_t state = SeedOf(args, 0);
    uint8_t bytes[ObjectId::kSize];
    const uint32_t seconds = 1795000000;
    bytes[0] = seconds >> 24;
    bytes[1] = (seconds >> 16) & 0xFF;
    bytes[2] = (seconds >> 8) & 0xFF;
    bytes[3] = seconds & 0xFF;
    uint64_t a = SplitMix(&state);
    for (int i = 0; i < 8; ++i) bytes[4 + i] = static_cast<uint8_t>(a >> (8 * i));
    out.AppendObjectId(key, ObjectId(bytes));
    return Status::OK();
  }
  if (fn == "$$object") {
    // [[key, value], ...]: a document whose field names are computed.
    ROCKDOC_ASSIGN_OR_RETURN(auto args, ArgList(v, fn));
    out.OpenDocument(key);
    for (const Element& pair : args) {
      if (pair.type() != BsonType::kArray || pair.Array().CountFields() != 2 ||
          pair.Array().Get("0").type() != BsonType::kString) {
        return Bad(fn, "expected [[\"name\", value], ...]");
      }
      out.AppendElementAs(pair.Array().Get("0").String(), pair.Array().Get("1"));
    }
    out.Close();
    return Status::OK();
  }
  return Bad(fn, "unknown template function");
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

Status AppendEvaluated(const Element& t, const Env& env, std::string_view key, BsonBuilder& out) {
  switch (t.type()) {
    case BsonType::kString: {
      std::string_view s = t.String();
      if (s.size() > 2 && s.substr(0, 2) == "$$") {
        std::string_view path = s.substr(2);
        size_t dot = path.find('.');
        std::string_view name = path.substr(0, dot);
        const Value* v = env.Find(name);
        if (v == nullptr) return BadValue("unknown variable " + std::string(s));
        Element e = v->element();
        if (dot != std::string_view::npos) {
          if (!e.IsContainer()) return BadValue(std::string(s) + ": variable is not a document");
          e = e.Document().GetPath(path.substr(dot + 1));
          if (!e.ok()) return BadValue(std::string(s) + ": no such field");
        }
        out.AppendElementAs(key, e);
        return Status::OK();
      }
      out.AppendElementAs(key, t);
      return Status::OK();
    }
    case BsonType::kDocument: {
      DocumentView d = t.Document();
      auto it = d.begin();
      if (it != d.end()) {
        Element first = *it;
        if (first.key().size() > 2 && first.key().substr(0, 2) == "$$") {
          if (d.CountFields() != 1) {
            return BadValue("a template function takes one field: " + ToJson(d));
          }
          Status st = AppendCall(first.key(), first, env, key, out);
          if (!st.ok()) return st;
          return Status::OK();
        }
      }
      out.OpenDocument(key);
      for (const Element& e : d) ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(e, env, e.key(), out));
      out.Close();
      return Status::OK();
    }
    case BsonType::kArray: {
      out.OpenArray(key);
      for (const Element& e : t.Array()) ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(e, env, "", out));
      out.Close();
      return Status::OK();
    }
    default:
      out.AppendElementAs(key, t);
      return Status::OK();
  }
}

StatusOr<Value> Evaluate(const Element& t, const Env& env) {
  BsonBuilder b;
  ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(t, env, "v", b));
  return FromBuilt(b);
}

StatusOr<Document> EvaluateDocument(const Element& t, const Env& env, bool allow_array) {
  if (!t.ok()) return Document();
  ROCKDOC_ASSIGN_OR_RETURN(Value v, Evaluate(t, env));
  if (v.type() != BsonType::kDocument && !(allow_array && v.type() == BsonType::kArray)) {
    return BadValue("expected a document, got " + ValueToJson(v.element()));
  }
  return Document::AdoptValidated(std::string(v.element().Document().bytes()));
}

StatusOr<Document> EvaluateFields(DocumentView t, const Env& env) {
  BsonBuilder b;
  for (const Element& e : t) ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(e, env, e.key(), b));
  return std::move(b).Build();
}

uint64_t HashElement(const Element& e, uint64_t seed) {
  // FNV-1a over the type byte and the value bytes: stable across runs and
  // machines (little-endian BSON), unlike std::hash.
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
