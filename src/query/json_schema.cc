// query/json_schema.cc: $jsonSchema, parsed into keyword checks, evaluated
// by one function that either answers yes/no (stopping at the first
// failure) or lists every failed keyword (MongoDB's error details).
#include "query/json_schema.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bson/numeric.h"
#include "query/regex.h"
#include "rockdoc/json.h"

namespace rockdoc {

namespace json_schema_internal {

enum class Extra { kAny, kNone, kSchema };  // additionalProperties / additionalItems

struct Dependency {
  std::string property;
  std::vector<std::string> required;  // the array form
  std::unique_ptr<Node> schema;       // the schema form
};

struct Node {
  Document spec;  // this schema's own document (specifiedAs copies from it)

  std::string type_keyword;  // "bsonType" or "type"; empty: no type constraint
  MatchTypeSet types;
  std::vector<Value> enum_values;
  bool has_enum = false;
  std::vector<std::string> required;

  bool has_properties = false;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> properties;
  std::vector<std::pair<std::shared_ptr<const Regex>, std::unique_ptr<Node>>> pattern_properties;
  Extra additional_properties = Extra::kAny;
  std::unique_ptr<Node> additional_properties_schema;
  std::optional<int64_t> min_properties, max_properties;
  std::vector<Dependency> dependencies;

  std::unique_ptr<Node> items;                     // every item
  std::vector<std::unique_ptr<Node>> items_tuple;  // item i against schema i
  bool items_is_tuple = false;
  Extra additional_items = Extra::kAny;
  std::unique_ptr<Node> additional_items_schema;
  std::optional<int64_t> min_items, max_items;
  bool unique_items = false;

  Value minimum, maximum, multiple_of;
  bool exclusive_minimum = false, exclusive_maximum = false;
  std::optional<int64_t> min_length, max_length;
  std::shared_ptr<const Regex> pattern;

  std::vector<std::unique_ptr<Node>> all_of, any_of, one_of;
  std::unique_ptr<Node> not_schema;
};

}  // namespace json_schema_internal

namespace {

using json_schema_internal::Dependency;
using json_schema_internal::Extra;
using json_schema_internal::Node;

Status ParseError(std::string message) {
  return Status(ErrorCode::kFailedToParse, std::move(message));
}

Status KeywordTypeError(std::string_view keyword, std::string_view what) {
  return Status(ErrorCode::kTypeMismatch,
                "$jsonSchema keyword '" + std::string(keyword) + "' must be " + std::string(what));
}

StatusOr<std::unique_ptr<Node>> ParseNode(DocumentView schema);

StatusOr<std::unique_ptr<Node>> ParseSubschema(const Element& e, std::string_view keyword) {
  if (e.type() != BsonType::kDocument) return KeywordTypeError(keyword, "an object");
  return ParseNode(e.Document());
}

StatusOr<int64_t> ParseCount(const Element& e) {
  int64_t n = 0;
  if (!e.IsNumber() || !e.ExactInt64(&n)) {
    return KeywordTypeError(e.key(), "a representable as a long integer");
  }
  if (n < 0) {
    return ParseError("$jsonSchema keyword '" + std::string(e.key()) +
                      "' must be a non-negative integer");
  }
  return n;
}

StatusOr<std::vector<std::unique_ptr<Node>>> ParseSchemaArray(const Element& e) {
  if (e.type() != BsonType::kArray) return KeywordTypeError(e.key(), "an array");
  std::vector<std::unique_ptr<Node>> out;
  for (const Element& item : e.Array()) {
    if (item.type() != BsonType::kDocument) {
      return KeywordTypeError(e.key(), "an array of objects");
    }
    ROCKDOC_ASSIGN_OR_RETURN(auto node, ParseNode(item.Document()));
    out.push_back(std::move(node));
  }
  if (out.empty()) {
    return ParseError("$jsonSchema keyword '" + std::string(e.key()) +
                      "' must be a nonempty array");
  }
  return out;
}

StatusOr<std::vector<std::string>> ParseNameArray(const Element& e) {
  if (e.type() != BsonType::kArray) return KeywordTypeError(e.key(), "an array");
  std::vector<std::string> out;
  for (const Element& item : e.Array()) {
    if (item.type() != BsonType::kString) {
      return KeywordTypeError(e.key(), "an array of strings");
    }
    for (const std::string& seen : out) {
      if (seen == item.String()) {
        return ParseError("$jsonSchema keyword '" + std::string(e.key()) +
                          "' array cannot contain duplicate values");
      }
    }
    out.emplace_back(item.String());
  }
  if (out.empty()) {
    return ParseError("$jsonSchema keyword '" + std::string(e.key()) +
                      "' cannot be an empty array");
  }
  return out;
}

Status ParseExtra(const Element& e, Extra* mode, std::unique_ptr<Node>* schema) {
  if (e.type() == BsonType::kBool) {
    *mode = e.Bool() ? Extra::kAny : Extra::kNone;
    return Status::OK();
  }
  if (e.type() != BsonType::kDocument) return KeywordTypeError(e.key(), "a boolean or an object");
  ROCKDOC_ASSIGN_OR_RETURN(*schema, ParseNode(e.Document()));
  *mode = Extra::kSchema;
  return Status::OK();
}

Status AddJsonType(std::string_view name, MatchTypeSet* set) {
  if (name == "object") {
    set->types.set(static_cast<uint8_t>(BsonType::kDocument));
  } else if (name == "array") {
    set->types.set(static_cast<uint8_t>(BsonType::kArray));
  } else if (name == "number") {
    set->all_numbers = true;
  } else if (name == "boolean") {
    set->types.set(static_cast<uint8_t>(BsonType::kBool));
  } else if (name == "string") {
    set->types.set(static_cast<uint8_t>(BsonType::kString));
  } else if (name == "null") {
    set->types.set(static_cast<uint8_t>(BsonType::kNull));
  } else if (name == "integer") {
    return BadValue("JSON type 'integer' is not currently supported.");
  } else {
    return BadValue("Unknown JSON Schema type: " + std::string(name));
  }
  return Status::OK();
}

Status ParseTypeKeyword(const Element& e, Node* node) {
  const bool bson = e.key() == "bsonType";
  auto add = [&](const Element& name) -> Status {
    if (name.type() != BsonType::kString) {
      return KeywordTypeError(e.key(), "either a string or an array of strings");
    }
    return bson ? AddTypeAliasToSet(name.String(), &node->types)
                : AddJsonType(name.String(), &node->types);
  };
  if (e.type() == BsonType::kArray) {
    if (e.Array().empty()) {
      return ParseError("$jsonSchema keyword '" + std::string(e.key()) +
                        "' must name at least one type");
    }
    for (const Element& name : e.Array()) ROCKDOC_RETURN_IF_ERROR(add(name));
  } else {
    ROCKDOC_RETURN_IF_ERROR(add(e));
  }
  node->type_keyword = std::string(e.key());
  return Status::OK();
}

Status ParseKeyword(const Element& e, Node* node) {
  const std::string_view k = e.key();
  if (k == "bsonType" || k == "type") {
    if (!node->type_keyword.empty()) {
      return ParseError("Cannot specify both $jsonSchema keywords 'type' and 'bsonType'");
    }
    return ParseTypeKeyword(e, node);
  }
  if (k == "enum") {
    if (e.type() != BsonType::kArray) return KeywordTypeError(k, "an array");
    for (const Element& v : e.Array()) node->enum_values.push_back(Value::FromElement(v));
    if (node->enum_values.empty()) {
      return ParseError("$jsonSchema keyword 'enum' cannot be an empty array");
    }
    node->has_enum = true;
    return Status::OK();
  }
  if (k == "required") {
    ROCKDOC_ASSIGN_OR_RETURN(node->required, ParseNameArray(e));
    return Status::OK();
  }
  if (k == "properties") {
    if (e.type() != BsonType::kDocument) return KeywordTypeError(k, "an object");
    for (const Element& p : e.Document()) {
      if (p.type() != BsonType::kDocument) {
        return Status(ErrorCode::kTypeMismatch, "Nested schema for $jsonSchema property '" +
                                                    std::string(p.key()) + "' must be an object");
      }
      ROCKDOC_ASSIGN_OR_RETURN(auto sub, ParseNode(p.Document()));
      node->properties.emplace_back(std::string(p.key()), std::move(sub));
    }
    node->has_properties = true;
    return Status::OK();
  }
  if (k == "patternProperties") {
    if (e.type() != BsonType::kDocument) return KeywordTypeError(k, "an object");
    for (const Element& p : e.Document()) {
      if (p.type() != BsonType::kDocument) {
        return KeywordTypeError(k, "an object whose values are objects");
      }
      ROCKDOC_ASSIGN_OR_RETURN(auto regex, Regex::Compile(p.key(), ""));
      ROCKDOC_ASSIGN_OR_RETURN(auto sub, ParseNode(p.Document()));
      node->pattern_properties.emplace_back(std::move(regex), std::move(sub));
    }
    return Status::OK();
  }
  if (k == "additionalProperties") {
    return ParseExtra(e, &node->additional_properties, &node->additional_properties_schema);
  }
  if (k == "minProperties") {
    ROCKDOC_ASSIGN_OR_RETURN(node->min_properties, ParseCount(e));
    return Status::OK();
  }
  if (k == "maxProperties") {
    ROCKDOC_ASSIGN_OR_RETURN(node->max_properties, ParseCount(e));
    return Status::OK();
  }
  if (k == "dependencies") {
    if (e.type() != BsonType::kDocument) return KeywordTypeError(k, "an object");
    for (const Element& d : e.Document()) {
      Dependency dep;
      dep.property = std::string(d.key());
      if (d.type() == BsonType::kDocument) {
        ROCKDOC_ASSIGN_OR_RETURN(dep.schema, ParseNode(d.Document()));
      } else if (d.type() == BsonType::kArray) {
        ROCKDOC_ASSIGN_OR_RETURN(dep.required, ParseNameArray(d));
      } else {
        return KeywordTypeError(k, "an object whose values are objects or arrays of strings");
      }
      node->dependencies.push_back(std::move(dep));
    }
    return Status::OK();
  }
  if (k == "items") {
    if (e.type() == BsonType::kDocument) {
      ROCKDOC_ASSIGN_OR_RETURN(node->items, ParseNode(e.Document()));
      return Status::OK();
    }
    if (e.type() != BsonType::kArray) return KeywordTypeError(k, "an array or an object");
    for (const Element& item : e.Array()) {
      if (item.type() != BsonType::kDocument) return KeywordTypeError(k, "an array of objects");
      ROCKDOC_ASSIGN_OR_RETURN(auto sub, ParseNode(item.Document()));
      node->items_tuple.push_back(std::move(sub));
    }
    node->items_is_tuple = true;
    return Status::OK();
  }
  if (k == "additionalItems") {
    return ParseExtra(e, &node->additional_items, &node->additional_items_schema);
  }
  if (k == "minItems") {
    ROCKDOC_ASSIGN_OR_RETURN(node->min_items, ParseCount(e));
    return Status::OK();
  }
  if (k == "maxItems") {
    ROCKDOC_ASSIGN_OR_RETURN(node->max_items, ParseCount(e));
    return Status::OK();
  }
  if (k == "uniqueItems") {
    if (e.type() != BsonType::kBool) return KeywordTypeError(k, "a boolean");
    node->unique_items = e.Bool();
    return Status::OK();
  }
  if (k == "minimum" || k == "maximum") {
    if (!e.IsNumber()) return KeywordTypeError(k, "a number");
    (k == "minimum" ? node->minimum : node->maximum) = Value::FromElement(e);
    return Status::OK();
  }
  if (k == "exclusiveMinimum" || k == "exclusiveMaximum") {
    if (e.type() != BsonType::kBool) return KeywordTypeError(k, "a boolean");
    (k == "exclusiveMinimum" ? node->exclusive_minimum : node->exclusive_maximum) = e.Bool();
    return Status::OK();
  }
  if (k == "multipleOf") {
    if (!e.IsNumber()) return KeywordTypeError(k, "a number");
    if (!(e.NumberAsDouble() > 0)) {
      return ParseError("$jsonSchema keyword 'multipleOf' must have a positive value");
    }
    node->multiple_of = Value::FromElement(e);
    return Status::OK();
  }
  if (k == "minLength") {
    ROCKDOC_ASSIGN_OR_RETURN(node->min_length, ParseCount(e));
    return Status::OK();
  }
  if (k == "maxLength") {
    ROCKDOC_ASSIGN_OR_RETURN(node->max_length, ParseCount(e));
    return Status::OK();
  }
  if (k == "pattern") {
    if (e.type() != BsonType::kString) return KeywordTypeError(k, "a string");
    ROCKDOC_ASSIGN_OR_RETURN(node->pattern, Regex::Compile(e.String(), ""));
    return Status::OK();
  }
  if (k == "allOf") {
    ROCKDOC_ASSIGN_OR_RETURN(node->all_of, ParseSchemaArray(e));
    return Status::OK();
  }
  if (k == "anyOf") {
    ROCKDOC_ASSIGN_OR_RETURN(node->any_of, ParseSchemaArray(e));
    return Status::OK();
  }
  if (k == "oneOf") {
    ROCKDOC_ASSIGN_OR_RETURN(node->one_of, ParseSchemaArray(e));
    return Status::OK();
  }
  if (k == "not") {
    ROCKDOC_ASSIGN_OR_RETURN(node->not_schema, ParseSubschema(e, k));
    return Status::OK();
  }
  if (k == "title" || k == "description") {
    if (e.type() != BsonType::kString) return KeywordTypeError(k, "a string");
    return Status::OK();
  }
  if (k == "$ref" || k == "$schema" || k == "default" || k == "definitions" || k == "format" ||
      k == "id") {
    return ParseError("$jsonSchema keyword '" + std::string(k) + "' is not currently supported");
  }
  if (k == "encrypt" || k == "encryptMetadata") {
    return NotImplemented("$jsonSchema keyword '" + std::string(k) +
                          "' (client-side field level encryption) is not supported by rockdoc");
  }
  return ParseError("Unknown $jsonSchema keyword: " + std::string(k));
}

StatusOr<std::unique_ptr<Node>> ParseNode(DocumentView schema) {
  auto node = std::make_unique<Node>();
  node->spec = Document::AdoptValidated(std::string(schema.bytes()));
  for (const Element& e : schema) ROCKDOC_RETURN_IF_ERROR(ParseKeyword(e, node.get()));
  if (node->exclusive_minimum && !node->minimum.ok()) {
    return ParseError("$jsonSchema keyword 'minimum' must be a present if exclusiveMinimum is "
                      "present");
  }
  if (node->exclusive_maximum && !node->maximum.ok()) {
    return ParseError("$jsonSchema keyword 'maximum' must be a present if exclusiveMaximum is "
                      "present");
  }
  return node;
}

// ---------------------------------------------------------------------------
// Evaluation.

// The value a schema is applied to: the top-level document, or an element.
struct Subject {
  const Element* element = nullptr;  // null: the root document
  DocumentView root;

  BsonType type() const { return element ? element->type() : BsonType::kDocument; }
  DocumentView object() const { return element ? element->Document() : root; }
  void AppendAs(BsonBuilder* b, std::string_view key) const {
    if (element) {
      b->AppendElementAs(key, *element);
    } else {
      b->AppendDocument(key, root);
    }
  }
};

// Reports go to `out` (an open array), one document per failed keyword;
// with `out` null, evaluation stops at the first failure.
class Checker {
 public:
  explicit Checker(BsonBuilder* out) : out_(out) {}
  bool Check(const Node& node, const Subject& v);

 private:
  bool explaining() const { return out_ != nullptr; }
  // Opens a rule document {operatorName, specifiedAs: {keyword: ...}}.
  void OpenRule(const Node& node, std::string_view keyword, bool specified = true) {
    out_->OpenDocument("");
    out_->AppendString("operatorName", keyword);
    if (specified) {
      out_->OpenDocument("specifiedAs");
      out_->AppendElement(node.spec.view().Get(keyword));
      out_->Close();
    }
  }
  void Rule(const Node& node, std::string_view keyword, std::string_view reason,
            const Subject* considered) {
    OpenRule(node, keyword);
    out_->AppendString("reason", reason);
    if (considered) considered->AppendAs(out_, "consideredValue");
    out_->Close();
  }
  // Whether `sub` holds for `v`; when explaining, its failures go in a
  // `details` array of the open document.
  bool Sub(const Node& sub, const Subject& v) {
    if (!explaining()) return Check(sub, v);
    out_->OpenArray("details");
    bool ok = Check(sub, v);
    out_->Close();
    return ok;
  }
  bool Quiet(const Node& sub, const Subject& v) { return Checker(nullptr).Check(sub, v); }

  bool CheckObject(const Node& node, const Subject& v);
  bool CheckArray(const Node& node, const Subject& v);
  bool CheckLogical(const Node& node, const Subject& v);

  BsonBuilder* out_;
};

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool IsMultipleOf(const Element& value, const Element& divisor) {
  int64_t a = 0, b = 0;
  if (value.ExactInt64(&a) && divisor.ExactInt64(&b) && b != 0) return a % b == 0;
  const double q = value.NumberAsDouble() / divisor.NumberAsDouble();
  return std::isfinite(q) && q == std::floor(q);
}

bool Checker::Check(const Node& node, const Subject& v) {
  bool ok = true;
  auto fail = [&]() {
    ok = false;
    return !explaining();  // true: stop here
  };
  const BsonType type = v.type();
  if (!node.type_keyword.empty() && !node.types.Has(type)) {
    if (fail()) return false;
    OpenRule(node, node.type_keyword);
    out_->AppendString("reason", "type did not match");
    v.AppendAs(out_, "consideredValue");
    out_->AppendString("consideredType", BsonTypeAlias(type));
    out_->Close();
  }
  if (node.has_enum) {
    bool found = false;
    for (const Value& candidate : node.enum_values) {
      if (v.element ? CompareValues(*v.element, candidate.element()) == 0
                    : candidate.element().type() == BsonType::kDocument &&
                          CompareDocuments(v.root, candidate.element().Document()) == 0) {
        found = true;
        break;
      }
    }
    if (!found) {
      if (fail()) return false;
      Rule(node, "enum", "value was not found in enum", &v);
    }
  }
  if (v.element && v.element->IsNumber()) {
    const Element& n = *v.element;
    if (node.minimum.ok()) {
      int c = CompareValues(n, node.minimum.element());
      if (c < 0 || (c == 0 && node.exclusive_minimum)) {
        if (fail()) return false;
        Rule(node, "minimum", "comparison failed", &v);
      }
    }
    if (node.maximum.ok()) {
      int c = CompareValues(n, node.maximum.element());
      if (c > 0 || (c == 0 && node.exclusive_maximum)) {
        if (fail()) return false;
        Rule(node, "maximum", "comparison failed", &v);
      }
    }
    if (node.multiple_of.ok() && !IsMultipleOf(n, node.multiple_of.element())) {
      if (fail()) return false;
      Rule(node, "multipleOf", "considered value is not a multiple of the specified value", &v);
    }
  }
  if (type == BsonType::kString) {
    std::string_view s = v.element->String();
    const size_t length = Utf8Length(s);
    if (node.min_length && length < static_cast<uint64_t>(*node.min_length)) {
      if (fail()) return false;
      Rule(node, "minLength", "specified string length was not satisfied", &v);
    }
    if (node.max_length && length > static_cast<uint64_t>(*node.max_length)) {
      if (fail()) return false;
      Rule(node, "maxLength", "specified string length was not satisfied", &v);
    }
    if (node.pattern && !RegexMatches(*node.pattern, s, "$jsonSchema")) {
      if (fail()) return false;
      Rule(node, "pattern", "regular expression did not match", &v);
    }
  }
  if (type == BsonType::kDocument && !CheckObject(node, v)) {
    if (fail()) return false;
  }
  if (type == BsonType::kArray && !CheckArray(node, v)) {
    if (fail()) return false;
  }
  if (!CheckLogical(node, v)) {
    if (fail()) return false;
  }
  return ok;
}

bool Checker::CheckObject(const Node& node, const Subject& v) {
  const DocumentView obj = v.object();
  bool ok = true;
  auto fail = [&]() {
    ok = false;
    return !explaining();
  };
  if (!node.required.empty()) {
    std::vector<std::string_view> missing;
    for (const std::string& name : node.required) {
      if (!obj.Has(name)) missing.push_back(name);
    }
    if (!missing.empty()) {
      if (fail()) return false;
      OpenRule(node, "required");
      out_->OpenArray("missingProperties");
      for (std::string_view name : missing) out_->AppendString("", name);
      out_->Close().Close();
    }
  }
  if (node.min_properties || node.max_properties) {
    int64_t count = 0;
    for (const Element& e : obj) {
      (void)e;
      ++count;
    }
    for (const char* keyword : {"minProperties", "maxProperties"}) {
      const bool is_min = keyword[1] == 'i';
      const std::optional<int64_t>& bound = is_min ? node.min_properties : node.max_properties;
      if (bound && (is_min ? count < *bound : count > *bound)) {
        if (fail()) return false;
        OpenRule(node, keyword);
        out_->AppendString("reason", "specified number of properties was not satisfied");
        out_->AppendInt32("numberOfProperties", static_cast<int32_t>(count));
        out_->Close();
      }
    }
  }
  if (node.has_properties) {
    bool opened = false;
    for (const auto& [name, sub] : node.properties) {
      Element value = obj.Get(name);
      if (!value.ok()) continue;
      Subject s{&value, {}};
      if (!explaining()) {
        if (!Check(*sub, s)) return false;
        continue;
      }
      if (Quiet(*sub, s)) continue;
      ok = false;
      if (!opened) {
        OpenRule(node, "properties", false);
        out_->OpenArray("propertiesNotSatisfied");
        opened = true;
      }
      out_->OpenDocument("");
      out_->AppendString("propertyName", name);
      Sub(*sub, s);
      out_->Close();
    }
    if (opened) out_->Close().Close();
  }
  if (!node.pattern_properties.empty() || node.additional_properties != Extra::kAny) {
    std::vector<std::string_view> additional;
    bool pattern_opened = false;
    for (const Element& field : obj) {
      Subject s{&field, {}};
      bool named = false;
      for (const auto& [name, sub] : node.properties) named = named || name == field.key();
      for (const auto& [regex, sub] : node.pattern_properties) {
        if (!RegexMatches(*regex, field.key(), "$jsonSchema")) continue;
        named = true;
        if (Quiet(*sub, s)) continue;
        if (fail()) return false;
        if (!pattern_opened) {
          OpenRule(node, "patternProperties", false);
          out_->OpenArray("propertiesNotSatisfied");
          pattern_opened = true;
        }
        out_->OpenDocument("");
        out_->AppendString("propertyName", field.key());
        out_->AppendString("regexMatched", regex->pattern());
        Sub(*sub, s);
        out_->Close();
      }
      if (named) continue;
      if (node.additional_properties == Extra::kNone) {
        if (fail()) return false;
        additional.push_back(field.key());
      } else if (node.additional_properties == Extra::kSchema &&
                 !Quiet(*node.additional_properties_schema, s)) {
        if (fail()) return false;
        OpenRule(node, "additionalProperties", false);
        out_->AppendString("reason",
                           "at least one additional property did not match the subschema");
        out_->AppendString("failingProperty", field.key());
        Sub(*node.additional_properties_schema, s);
        out_->Close();
      }
    }
    if (pattern_opened) out_->Close().Close();
    if (!additional.empty()) {
      OpenRule(node, "additionalProperties");
      out_->OpenArray("additionalProperties");
      for (std::string_view name : additional) out_->AppendString("", name);
      out_->Close().Close();
    }
  }
  for (const Dependency& dep : node.dependencies) {
    if (!obj.Has(dep.property)) continue;
    if (dep.schema) {
      if (Quiet(*dep.schema, v)) continue;
      if (fail()) return false;
      OpenRule(node, "dependencies", false);
      out_->AppendString("conditionalProperty", dep.property);
      Sub(*dep.schema, v);
      out_->Close();
      continue;
    }
    std::vector<std::string_view> missing;
    for (const std::string& name : dep.required) {
      if (!obj.Has(name)) missing.push_back(name);
    }
    if (missing.empty()) continue;
    if (fail()) return false;
    OpenRule(node, "dependencies", false);
    out_->AppendString("conditionalProperty", dep.property);
    out_->OpenArray("missingProperties");
    for (std::string_view name : missing) out_->AppendString("", name);
    out_->Close().Close();
  }
  return ok;
}

bool Checker::CheckArray(const Node& node, const Subject& v) {
  const DocumentView array = v.element->Array();
  bool ok = true;
  auto fail = [&]() {
    ok = false;
    return !explaining();
  };
  std::vector<Element> items(array.begin(), array.end());
  const int64_t count = static_cast<int64_t>(items.size());
  if ((node.min_items && count < *node.min_items) || (node.max_items && count > *node.max_items)) {
    const char* keyword = node.min_items && count < *node.min_items ? "minItems" : "maxItems";
    if (fail()) return false;
    Rule(node, keyword, "array did not match specified length", &v);
  }
  if (node.unique_items) {
    for (size_t i = 0; i < items.size(); ++i) {
      bool duplicate = false;
      for (size_t j = 0; j < i && !duplicate; ++j) {
        duplicate = CompareValues(items[i], items[j]) == 0;
      }
      if (!duplicate) continue;
      if (fail()) return false;
      OpenRule(node, "uniqueItems");
      out_->AppendString("reason", "found a duplicate item");
      v.AppendAs(out_, "consideredValue");
      out_->AppendElementAs("duplicatedValue", items[i]);
      out_->Close();
      break;
    }
  }
  auto item_failed = [&](const Node& sub, size_t index, std::string_view keyword,
                         std::string_view reason) {
    OpenRule(node, keyword, false);
    out_->AppendString("reason", reason);
    out_->AppendInt32("itemIndex", static_cast<int32_t>(index));
    Subject s{&items[index], {}};
    Sub(sub, s);
    out_->Close();
  };
  if (node.items) {
    for (size_t i = 0; i < items.size(); ++i) {
      Subject s{&items[i], {}};
      if (Quiet(*node.items, s)) continue;
      if (fail()) return false;
      item_failed(*node.items, i, "items", "At least one item did not match the sub-schema");
      break;
    }
  }
  if (node.items_is_tuple) {
    for (size_t i = 0; i < items.size(); ++i) {
      Subject s{&items[i], {}};
      if (i < node.items_tuple.size()) {
        if (Quiet(*node.items_tuple[i], s)) continue;
        if (fail()) return false;
        item_failed(*node.items_tuple[i], i, "items",
                    "At least one item did not match the sub-schema");
        break;
      }
      if (node.additional_items == Extra::kAny) break;
      if (node.additional_items == Extra::kSchema) {
        if (Quiet(*node.additional_items_schema, s)) continue;
        if (fail()) return false;
        item_failed(*node.additional_items_schema, i, "additionalItems",
                    "At least one additional item did not match the sub-schema");
        break;
      }
      if (fail()) return false;
      OpenRule(node, "additionalItems");
      out_->AppendString("reason", "found additional items");
      out_->OpenArray("additionalItems");
      for (size_t j = i; j < items.size(); ++j) out_->AppendElementAs("", items[j]);
      out_->Close().Close();
      break;
    }
  }
  return ok;
}

bool Checker::CheckLogical(const Node& node, const Subject& v) {
  bool ok = true;
  auto fail = [&]() {
    ok = false;
    return !explaining();
  };
  // allOf / anyOf / oneOf: which subschemas `v` fails.
  auto failing = [&](const std::vector<std::unique_ptr<Node>>& list) {
    std::vector<size_t> out;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!Quiet(*list[i], v)) out.push_back(i);
    }
    return out;
  };
  auto report = [&](const char* keyword, const std::vector<std::unique_ptr<Node>>& list,
                    const std::vector<size_t>& indexes) {
    OpenRule(node, keyword, false);
    out_->OpenArray("schemasNotSatisfied");
    for (size_t i : indexes) {
      out_->OpenDocument("");
      out_->AppendInt32("index", static_cast<int32_t>(i));
      Sub(*list[i], v);
      out_->Close();
    }
    out_->Close().Close();
  };
  if (!node.all_of.empty()) {
    std::vector<size_t> bad = failing(node.all_of);
    if (!bad.empty()) {
      if (fail()) return false;
      report("allOf", node.all_of, bad);
    }
  }
  if (!node.any_of.empty()) {
    std::vector<size_t> bad = failing(node.any_of);
    if (bad.size() == node.any_of.size()) {
      if (fail()) return false;
      report("anyOf", node.any_of, bad);
    }
  }
  if (!node.one_of.empty()) {
    std::vector<size_t> bad = failing(node.one_of);
    const size_t matching = node.one_of.size() - bad.size();
    if (matching != 1) {
      if (fail()) return false;
      if (matching == 0) {
        report("oneOf", node.one_of, bad);
      } else {
        OpenRule(node, "oneOf", false);
        out_->AppendString("reason", "more than one subschema matched");
        out_->OpenArray("matchingSchemaIndexes");
        for (size_t i = 0, b = 0; i < node.one_of.size(); ++i) {
          if (b < bad.size() && bad[b] == i) {
            ++b;
          } else {
            out_->AppendInt32("", static_cast<int32_t>(i));
          }
        }
        out_->Close().Close();
      }
    }
  }
  if (node.not_schema && Quiet(*node.not_schema, v)) {
    if (fail()) return false;
    OpenRule(node, "not");
    out_->AppendString("reason", "child expression matched");
    out_->Close();
  }
  return ok;
}

// ---------------------------------------------------------------------------
// Validation details for any filter.

std::string_view LeafReason(const MatchExpression& e, const Element& value) {
  if (!value.ok()) return "field was missing";
  switch (e.type()) {
    case MatchType::kEq:
    case MatchType::kLt:
    case MatchType::kLte:
    case MatchType::kGt:
    case MatchType::kGte: return "comparison failed";
    case MatchType::kIn: return "no matching value found in array";
    case MatchType::kType: return "type did not match";
    case MatchType::kRegex: return "regular expression did not match";
    case MatchType::kSize: return "array length was not equal to given size";
    default: return "expression did not match";
  }
}

void AppendDetails(const MatchExpression& e, DocumentView doc, BsonBuilder* b) {
  b->AppendString("operatorName", MatchTypeName(e.type()));
  switch (e.type()) {
    case MatchType::kJsonSchema:
      b->OpenArray("schemaRulesNotSatisfied");
      static_cast<const JsonSchemaMatchExpression&>(e).AppendRulesNotSatisfied(doc, b);
      b->Close();
      return;
    case MatchType::kAnd:
    case MatchType::kOr:
      b->OpenArray("clausesNotSatisfied");
      for (size_t i = 0; i < e.num_children(); ++i) {
        if (e.child(i)->Matches(doc)) continue;
        b->OpenDocument("");
        b->AppendInt32("index", static_cast<int32_t>(i));
        b->OpenDocument("details");
        AppendDetails(*e.child(i), doc, b);
        b->Close().Close();
      }
      b->Close();
      return;
    default: break;
  }
  b->AppendDocument("specifiedAs", e.Serialize().view());
  if (e.is_logical() || e.path().empty()) {
    b->AppendString("reason", e.type() == MatchType::kAlwaysFalse
                                  ? "expression always evaluates to false"
                                  : "child expression matched");
    return;
  }
  Element value = doc.GetPath(e.path());
  b->AppendString("reason", LeafReason(e, value));
  if (value.ok()) b->AppendElementAs("consideredValue", value);
  if (value.ok() && e.type() == MatchType::kType) {
    b->AppendString("consideredType", BsonTypeAlias(value.type()));
  }
}

}  // namespace

StatusOr<std::unique_ptr<MatchExpression>> JsonSchemaMatchExpression::Parse(
    const Element& schema) {
  if (schema.type() != BsonType::kDocument) {
    return Status(ErrorCode::kTypeMismatch, "$jsonSchema must be an object");
  }
  ROCKDOC_ASSIGN_OR_RETURN(auto root, ParseNode(schema.Document()));
  return std::unique_ptr<MatchExpression>(new JsonSchemaMatchExpression(
      Document::AdoptValidated(std::string(schema.Document().bytes())), std::move(root)));
}

JsonSchemaMatchExpression::JsonSchemaMatchExpression(Document schema, std::unique_ptr<Node> root)
    : MatchExpression(MatchType::kJsonSchema), schema_(std::move(schema)), root_(std::move(root)) {}

JsonSchemaMatchExpression::~JsonSchemaMatchExpression() = default;

bool JsonSchemaMatchExpression::Matches(DocumentView doc, MatchDetails*) const {
  return Checker(nullptr).Check(*root_, Subject{nullptr, doc});
}

bool JsonSchemaMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  if (!value.ok()) return false;
  return Checker(nullptr).Check(*root_, Subject{&value, {}});
}

void JsonSchemaMatchExpression::SerializeTo(BsonBuilder* builder) const {
  builder->AppendDocument("$jsonSchema", schema_.view());
}

void JsonSchemaMatchExpression::AppendRulesNotSatisfied(DocumentView doc,
                                                        BsonBuilder* rules) const {
  Checker(rules).Check(*root_, Subject{nullptr, doc});
}

std::string JsonSchemaMatchExpression::DebugLine() const {
  return "$jsonSchema " + ToJson(schema_.view(), JsonFormat::kShell);
}

Document ValidationFailureDetails(const MatchExpression& validator, DocumentView doc) {
  BsonBuilder b;
  AppendDetails(validator, doc, &b);
  return std::move(b).Build();
}

}  // namespace rockdoc
