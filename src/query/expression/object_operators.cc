// query/expression/object_operators.cc: the object operators
// ($mergeObjects, $objectToArray, $arrayToObject, $getField, $setField,
// $unsetField).
#include <algorithm>

#include "bson/element_hash.h"
#include "query/expression/expression_internal.h"
#include "rockdoc/json.h"

namespace rockdoc::internal::expression_detail {

namespace {

StatusOr<Value> MergeObjectsOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args, vars));
  std::vector<Element> docs;
  if (values.size() == 1 && values[0].type() == BsonType::kArray) {
    for (const Element& e : values[0].element().Array()) docs.push_back(e);
  } else {
    for (const Value& v : values) docs.push_back(v.element());
  }
  // Later documents' fields win; a field keeps its first position.
  std::vector<std::pair<std::string, Element>> fields;
  for (size_t i = 0; i < docs.size(); ++i) {
    const Element& d = docs[i];
    if (!d.ok() || d.IsNull()) continue;
    if (d.type() != BsonType::kDocument) {
      return Failed(40400, "$mergeObjects requires object inputs, but input " +
                               ValueToJson(d, JsonFormat::kShell) + " is of type " +
                               std::string(BsonTypeAlias(d.type())));
    }
    for (const Element& f : d.Document()) {
      auto it = std::find_if(fields.begin(), fields.end(),
                             [&](const auto& p) { return p.first == f.key(); });
      if (it == fields.end()) {
        fields.emplace_back(std::string(f.key()), f);
      } else {
        it->second = f;
      }
    }
  }
  return ObjectOf(fields);
}

StatusOr<Value> ObjectToArrayOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (IsNullish(v)) return NullValue();
  if (v.type() != BsonType::kDocument) {
    return Failed(40390, "$objectToArray requires a document input, found: " + TypeName(v));
  }
  BsonBuilder b;
  b.OpenArray("v");
  for (const Element& f : v.element().Document()) {
    b.OpenDocument("").AppendString("k", f.key()).AppendElementAs("v", f).Close();
  }
  b.Close();
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}

StatusOr<Value> ArrayToObjectOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (IsNullish(v)) return NullValue();
  if (v.type() != BsonType::kArray) {
    return Failed(40386, "$arrayToObject requires an array input, found: " + TypeName(v));
  }
  std::vector<std::pair<std::string, Element>> fields;
  auto put = [&](std::string_view k, const Element& value) -> Status {
    if (k.find('\0') != std::string_view::npos) {
      return Failed(4940401, "Key field cannot contain an embedded null byte");
    }
    auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& p) { return p.first == k; });
    if (it == fields.end()) {
      fields.emplace_back(std::string(k), value);
    } else {
      it->second = value;
    }
    return Status::OK();
  };
  for (const Element& item : v.element().Array()) {
    if (item.type() == BsonType::kArray) {
      std::vector<Element> pair;
      for (const Element& x : item.Array()) pair.push_back(x);
      if (pair.size() != 2) {
        return Failed(40397, "$arrayToObject requires an array of size 2 arrays,found array of "
                             "size: " + std::to_string(pair.size()));
      }
      if (pair[0].type() != BsonType::kString) {
        return Failed(40395, "$arrayToObject requires an array of key-value pairs, where the key "
                             "must be of type string. Found key type: " +
                                 std::string(BsonTypeAlias(pair[0].type())));
      }
      ROCKDOC_RETURN_IF_ERROR(put(pair[0].String(), pair[1]));
    } else if (item.type() == BsonType::kDocument) {
      Element k = item.Document().Get("k"), value = item.Document().Get("v");
      size_t n = 0;
      for (const Element& x : item.Document()) {
        (void)x;
        ++n;
      }
      if (n != 2 || !k.ok() || !value.ok()) {
        return Failed(40392, "$arrayToObject requires an object keys of 'k' and 'v'. Found "
                             "incorrect number of keys:" + std::to_string(n));
      }
      if (k.type() != BsonType::kString) {
        return Failed(40394, "$arrayToObject requires an object with keys 'k' and 'v', where the "
                             "value of 'k' must be of type string. Found type: " +
                                 std::string(BsonTypeAlias(k.type())));
      }
      ROCKDOC_RETURN_IF_ERROR(put(k.String(), value));
    } else {
      return Failed(40398, "Unrecognised input type format for $arrayToObject: " +
                               std::string(BsonTypeAlias(item.type())));
    }
  }
  return ObjectOf(fields);
}

// The `field` argument of $getField/$setField/$unsetField: a string.
StatusOr<std::string> FieldArg(std::string_view op, const Value& field) {
  if (field.type() != BsonType::kString) {
    return Failed(3041704, std::string(op) + " requires 'field' to evaluate to type String, but got " +
                               TypeName(field));
  }
  return std::string(field.element().String());
}

// {field, input}; input defaults to $$CURRENT.
StatusOr<Value> GetFieldOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value field_v, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::string field, FieldArg("$getField", field_v));
  Value input;
  if (args[1] != nullptr) {
    ROCKDOC_ASSIGN_OR_RETURN(input, args[1]->Evaluate(vars));
    if (IsNullish(input)) return input.ok() ? NullValue() : Value();
    if (input.type() != BsonType::kDocument) {
      return Failed(3041705, "$getField requires 'input' to evaluate to type Object, but got " +
                                 TypeName(input));
    }
    Element e = input.element().Document().Get(field);
    return e.ok() ? Value::FromElement(e) : Value();
  }
  const DocumentView current = vars.current != nullptr ? *vars.current : vars.root;
  Element e = current.Get(field);
  return e.ok() ? Value::FromElement(e) : Value();
}

// {field, input, value} ($setField) and {field, input} ($unsetField): the
// input with the field set (or, for $$REMOVE and $unsetField, removed).
template <bool kSet>
StatusOr<Value> SetFieldOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kSet ? "$setField" : "$unsetField";
  ROCKDOC_ASSIGN_OR_RETURN(Value field_v, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::string field, FieldArg(op, field_v));
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[1]->Evaluate(vars));
  Value value;
  if (kSet) {
    ROCKDOC_ASSIGN_OR_RETURN(value, args[2]->Evaluate(vars));
  }
  if (IsNullish(input)) return NullValue();
  if (input.type() != BsonType::kDocument) {
    return Failed(4161105, std::string(op) + " requires 'input' to evaluate to type Object");
  }
  std::vector<std::pair<std::string, Element>> fields;
  bool placed = false;
  for (const Element& f : input.element().Document()) {
    if (f.key() == field) {
      placed = true;
      if (value.ok()) fields.emplace_back(field, value.element());
      continue;
    }
    fields.emplace_back(std::string(f.key()), f);
  }
  if (!placed && value.ok()) fields.emplace_back(field, value.element());
  return ObjectOf(fields);
}

}  // namespace

// {$toHashedIndexKey: v}: the key a hashed index stores for v (a missing
// value hashes as null, as a missing field does in the index).
StatusOr<Value> ToHashedIndexKeyOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  return Int64Value(HashBsonValue(v.element()));
}

// {$meta: "vectorSearchScore"}: a $vectorSearch result's score (the field
// kVectorSearchScoreField its source appended), missing elsewhere. MongoDB's
// other metadata is not kept by rockdoc: NotImplemented; a name MongoDB does
// not know is its 17308.
StatusOr<Value> MetaOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value name, args[0]->Evaluate(vars));
  const std::string_view n = name.type() == BsonType::kString ? name.element().String() : "";
  if (n == "vectorSearchScore") {
    Element e = vars.root.Get(kVectorSearchScoreField);
    return e.ok() ? Value::FromElement(e) : Value();
  }
  for (std::string_view known : {"textScore", "searchScore", "searchScoreDetails",
                                 "searchHighlights", "searchSequenceToken", "indexKey",
                                 "recordId", "sortKey", "geoNearDistance", "geoNearPoint",
                                 "randVal", "score", "scoreDetails"}) {
    if (n == known) {
      return Status(ErrorCode::kNotImplemented,
                    "$meta: '" + std::string(n) + "' is not supported by rockdoc");
    }
  }
  return Failed(17308, "Unsupported argument to $meta: " + std::string(n));
}

void AddObjectOperators(OperatorTable* positional, NamedOperatorTable* named) {
  positional->insert({
      {"$toHashedIndexKey", {&ToHashedIndexKeyOp, 1, 1}},
      {"$meta", {&MetaOp, 1, 1}},
      {"$mergeObjects", {&MergeObjectsOp, 0, SIZE_MAX}},
      {"$objectToArray", {&ObjectToArrayOp, 1, 1}},
      {"$arrayToObject", {&ArrayToObjectOp, 1, 1}},
  });
  named->insert({
      {"$getField", {&GetFieldOp, {"field", "input"}, 1, 3041703, 3041701, 3041702, "field"}},
      {"$setField", {&SetFieldOp<true>, {"field", "input", "value"}, 3, 4161100, 4161101, 4161102}},
      {"$unsetField", {&SetFieldOp<false>, {"field", "input"}, 2, 4161100, 4161101, 4161102}},
  });
}

}  // namespace rockdoc::internal::expression_detail
