// The matching rules of MongoDB's unified test format ("Evaluating
// Matches"), over rockdoc's BSON elements, for spec-test runners.
//
//  - An expected document matches an actual document when every expected
//    key is present and matches, in any key order. A *root-level* actual
//    document (an operation's result document, or each document of a find
//    result) may hold extra keys; a nested one may not.
//  - Arrays match element by element and must have the same length.
//  - Numbers (int32, int64, double; not decimal128) match by value across
//    types; every other scalar must have the same type and value.
//  - A document whose only key starts with "$$" is a special operator:
//    $$exists, $$type, $$unsetOrMatches, $$lte, $$matchAsDocument and
//    $$matchAsRoot are implemented; any other one fails the match, so a test
//    that needs it cannot pass silently.
//
// Collection contents (a test's `outcome`) are compared exactly instead: no
// extra keys anywhere, no special operators, key order free, numbers by
// value.
//
// Every function returns "" on a match, else one line saying where and how
// the values differ ("$.insertedIds.1: expected 2, got missing").
//
// Thread safety: pure functions.
#ifndef ROCKDOC_TESTS_UNIFIED_MATCHER_H_
#define ROCKDOC_TESTS_UNIFIED_MATCHER_H_

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace rockdoc::test {

// Which parts of an actual value are root-level documents.
enum class RootMode {
  kNone,          // nested value: documents must match exactly
  kDocument,      // the value itself, when a document, may have extra keys
  kEachDocument,  // an array whose document elements may have extra keys
};

// Extra keys that a root-level document was allowed to hold (for reports:
// a pass that relies on them is worth a look).
struct MatchNotes {
  std::vector<std::string> extra_root_keys;
};

inline std::string DescribeValue(const Element& e) {
  if (!e.ok()) return "missing";
  return ValueToJson(e, JsonFormat::kShell);
}

inline bool IsFlexibleNumber(const Element& e) {
  return e.type() == BsonType::kInt32 || e.type() == BsonType::kInt64 ||
         e.type() == BsonType::kDouble;
}

// Scalars: the same type (any of int32/int64/double for numbers) and value.
inline bool ScalarsEqual(const Element& expected, const Element& actual) {
  if (IsFlexibleNumber(expected) && IsFlexibleNumber(actual)) {
    return CompareValues(expected, actual) == 0;
  }
  return expected.type() == actual.type() && CompareValues(expected, actual) == 0;
}

// A document whose first and only key starts with "$$".
inline bool IsSpecialOperator(const Element& e) {
  if (e.type() != BsonType::kDocument) return false;
  DocumentView d = e.Document();
  auto it = d.begin();
  if (it == d.end()) return false;
  std::string_view key = (*it).key();
  ++it;
  return it == d.end() && key.size() > 2 && key[0] == '$' && key[1] == '$';
}

inline std::string MatchValue(const Element& expected, const Element& actual, RootMode root,
                              const std::string& path, MatchNotes* notes);

// Evaluates a special operator against `actual` (which may be missing).
inline std::string MatchOperator(const Element& op_doc, const Element& actual, RootMode root,
                                 const std::string& path, MatchNotes* notes) {
  Element op = *op_doc.Document().begin();
  std::string_view name = op.key();
  if (name == "$$exists") {
    if (op.type() != BsonType::kBool) return path + ": $$exists takes a boolean";
    if (op.Bool() == actual.ok()) return "";
    return path + (op.Bool() ? ": expected to exist, got missing"
                             : ": expected to be missing, got " + DescribeValue(actual));
  }
  if (name == "$$type") {
    if (!actual.ok())
      return path + ": expected a value of $$type " + DescribeValue(op) + ", got missing";
    std::vector<std::string> aliases;
    if (op.type() == BsonType::kString) {
      aliases.emplace_back(op.String());
    } else if (op.type() == BsonType::kArray) {
      for (Element a : op.Array()) {
        if (a.type() != BsonType::kString) return path + ": $$type takes strings";
        aliases.emplace_back(a.String());
      }
    } else {
      return path + ": $$type takes a string or an array of strings";
    }
    std::string_view actual_alias = BsonTypeAlias(actual.type());
    for (const std::string& alias : aliases) {
      if (alias == actual_alias || (alias == "number" && actual.IsNumber())) return "";
    }
    return path + ": expected $$type " + DescribeValue(op) + ", got " + std::string(actual_alias) +
           " " + DescribeValue(actual);
  }
  if (name == "$$unsetOrMatches") {
    if (!actual.ok()) return "";
    return MatchValue(op, actual, root, path, notes);
  }
  if (name == "$$lte") {
    if (!op.IsNumber()) return path + ": $$lte takes a number";
    if (!actual.ok() || !actual.IsNumber()) {
      return path + ": expected a number <= " + DescribeValue(op) + ", got " +
             DescribeValue(actual);
    }
    if (CompareValues(actual, op) <= 0) return "";
    return path + ": expected <= " + DescribeValue(op) + ", got " + DescribeValue(actual);
  }
  if (name == "$$matchAsRoot") {
    return MatchValue(op, actual, RootMode::kDocument, path, notes);
  }
  if (name == "$$matchAsDocument") {
    if (actual.type() != BsonType::kString) {
      return path + ": $$matchAsDocument needs a string, got " + DescribeValue(actual);
    }
    auto parsed = FromJson(actual.String());
    if (!parsed.ok()) return path + ": $$matchAsDocument: " + parsed.status().ToString();
    BsonBuilder b;
    b.AppendDocument("v", *parsed);
    Document holder = std::move(b).Build();
    return MatchValue(op, holder.Get("v"), RootMode::kNone, path, notes);
  }
  return path + ": special operator " + std::string(name) + " is not supported by this runner";
}

// Matches `actual` (missing when absent) against `expected`.
inline std::string MatchValue(const Element& expected, const Element& actual, RootMode root,
                              const std::string& path, MatchNotes* notes) {
  if (IsSpecialOperator(expected)) return MatchOperator(expected, actual, root, path, notes);
  if (!actual.ok()) return path + ": expected " + DescribeValue(expected) + ", got missing";
  if (expected.type() == BsonType::kDocument) {
    if (actual.type() != BsonType::kDocument) {
      return path + ": expected a document " + DescribeValue(expected) + ", got " +
             DescribeValue(actual);
    }
    DocumentView exp = expected.Document();
    DocumentView act = actual.Document();
    std::set<std::string_view> expected_keys;
    for (Element field : exp) {
      expected_keys.insert(field.key());
      std::string sub = path + "." + std::string(field.key());
      Element actual_field = act.Get(field.key());
      std::string why = MatchValue(field, actual_field, RootMode::kNone, sub, notes);
      if (!why.empty()) return why;
    }
    for (Element field : act) {
      if (expected_keys.count(field.key()) != 0) continue;
      if (root != RootMode::kDocument) {
        return path + ": unexpected field " + std::string(field.key()) + ": " +
               DescribeValue(field) + " in " + DescribeValue(actual);
      }
      if (notes != nullptr) notes->extra_root_keys.push_back(path + "." + std::string(field.key()));
    }
    return "";
  }
  if (expected.type() == BsonType::kArray) {
    if (actual.type() != BsonType::kArray) {
      return path + ": expected an array " + DescribeValue(expected) + ", got " +
             DescribeValue(actual);
    }
    std::vector<Element> exp(expected.Array().begin(), expected.Array().end());
    std::vector<Element> act(actual.Array().begin(), actual.Array().end());
    if (exp.size() != act.size()) {
      return path + ": expected " + std::to_string(exp.size()) + " elements " +
             DescribeValue(expected) + ", got " + std::to_string(act.size()) + " " +
             DescribeValue(actual);
    }
    RootMode element_root = root == RootMode::kEachDocument ? RootMode::kDocument : RootMode::kNone;
    for (size_t i = 0; i < exp.size(); ++i) {
      std::string why =
          MatchValue(exp[i], act[i], element_root, path + "." + std::to_string(i), notes);
      if (!why.empty()) return why;
    }
    return "";
  }
  if (ScalarsEqual(expected, actual)) return "";
  return path + ": expected " + std::string(BsonTypeAlias(expected.type())) + " " +
         DescribeValue(expected) + ", got " + std::string(BsonTypeAlias(actual.type())) + " " +
         DescribeValue(actual);
}

// Exact comparison, for collection contents: same keys (any order) at every
// level, arrays of the same length, scalars by ScalarsEqual.
inline std::string MatchExact(const Element& expected, const Element& actual,
                              const std::string& path) {
  if (!actual.ok()) return path + ": expected " + DescribeValue(expected) + ", got missing";
  if (expected.type() == BsonType::kDocument || expected.type() == BsonType::kArray) {
    if (actual.type() != expected.type()) {
      return path + ": expected " + DescribeValue(expected) + ", got " + DescribeValue(actual);
    }
    std::vector<Element> exp(expected.Document().begin(), expected.Document().end());
    std::vector<Element> act(actual.Document().begin(), actual.Document().end());
    if (exp.size() != act.size()) {
      return path + ": expected " + DescribeValue(expected) + ", got " + DescribeValue(actual);
    }
    for (size_t i = 0; i < exp.size(); ++i) {
      // Arrays by position; documents by key, in any order.
      Element counterpart =
          expected.type() == BsonType::kArray ? act[i] : actual.Document().Get(exp[i].key());
      std::string why = MatchExact(exp[i], counterpart, path + "." + std::string(exp[i].key()));
      if (!why.empty()) {
        return why + " (in " + DescribeValue(actual) + ")";
      }
    }
    return "";
  }
  if (ScalarsEqual(expected, actual)) return "";
  return path + ": expected " + std::string(BsonTypeAlias(expected.type())) + " " +
         DescribeValue(expected) + ", got " + std::string(BsonTypeAlias(actual.type())) + " " +
         DescribeValue(actual);
}

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace rockdoc::test

#endif  // ROCKDOC_TESTS_UNIFIED_MATCHER_H_
