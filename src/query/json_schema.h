// query/json_schema.h: MongoDB's `$jsonSchema` query operator (JSON Schema
// draft 4 with MongoDB's `bsonType`), and the `errInfo.details` MongoDB
// reports for a document that fails a collection's validator.
//
// `{$jsonSchema: {...}}` is parsed once into a tree of keyword checks and
// stands in a filter like any top-level operator ({$jsonSchema: s, a: 1}).
// The keywords are MongoDB's: bsonType, type, enum, required, properties,
// patternProperties, additionalProperties, minProperties, maxProperties,
// dependencies, items, additionalItems, minItems, maxItems, uniqueItems,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
// minLength, maxLength, pattern, allOf, anyOf, oneOf, not, title and
// description. As in JSON Schema, a keyword constrains only values of the
// type it is about (`minimum` ignores strings; `properties` ignores
// numbers), and a property's schema applies only when the property exists
// (`required` says it must). Keywords MongoDB refuses fail as MongoDB fails
// them: $ref, $schema, default, definitions, format and id are
// FailedToParse (9) "$jsonSchema keyword 'format' is not currently
// supported"; an unknown one is FailedToParse "Unknown $jsonSchema keyword:
// x"; `type: "integer"` is BadValue "JSON type 'integer' is not currently
// supported"; a keyword of the wrong type is TypeMismatch (14).
//
// Thread safety: a parsed expression is immutable.
#ifndef ROCKDOC_QUERY_JSON_SCHEMA_H_
#define ROCKDOC_QUERY_JSON_SCHEMA_H_

#include <memory>
#include <string>

#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc {

namespace json_schema_internal {
struct Node;
}  // namespace json_schema_internal

class JsonSchemaMatchExpression : public MatchExpression {
 public:
  // `schema` is the operand of $jsonSchema (an object, else TypeMismatch).
  static StatusOr<std::unique_ptr<MatchExpression>> Parse(const Element& schema);
  ~JsonSchemaMatchExpression() override;

  bool Matches(DocumentView doc, MatchDetails* details = nullptr) const override;
  // A value that is not an object fails unless the schema allows its type.
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  // {$jsonSchema: <the schema as given>}.
  void SerializeTo(BsonBuilder* builder) const override;

  // Appends, to the array `rules` has open, one document per keyword that
  // `doc` does not satisfy: MongoDB's `schemaRulesNotSatisfied`
  // ({operatorName: "required", specifiedAs: {...}, missingProperties:
  // [...]}, {operatorName: "properties", propertiesNotSatisfied: [...]}, ...).
  void AppendRulesNotSatisfied(DocumentView doc, BsonBuilder* rules) const;

 protected:
  std::string DebugLine() const override;

 private:
  JsonSchemaMatchExpression(Document schema, std::unique_ptr<json_schema_internal::Node> root);
  Document schema_;
  std::unique_ptr<json_schema_internal::Node> root_;
};

// What MongoDB puts in a DocumentValidationFailure's errInfo.details for a
// document `doc` that fails `validator`: {operatorName: "$jsonSchema",
// schemaRulesNotSatisfied: [...]} for a schema; {operatorName: "$and",
// clausesNotSatisfied: [{index, details}]} for several clauses; for a leaf,
// {operatorName: "$gt", specifiedAs: {a: {$gt: 5}}, reason: "comparison
// failed" | "field was missing", consideredValue?}.
Document ValidationFailureDetails(const MatchExpression& validator, DocumentView doc);

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_JSON_SCHEMA_H_
