// query/query_shape.h: a query's shape, MongoDB's idea behind $queryStats:
// the filter, sort, projection and pipeline with every literal value
// replaced by a placeholder of its type, so that {age: {$gt: 30}} and
// {age: {$gt: 41}} are one shape and {age: {$gt: "x"}} another.
//
// The placeholders are MongoDB's debug shape's: "?number" (int, long,
// double, decimal), "?string", "?object", "?bool", "?date", "?objectId",
// "?null", "?binData", "?timestamp", "?regex", "?minKey", "?maxKey",
// "?undefined", "?javascript"; an array "?array<?number>" when its
// elements share a type, "?array<>" otherwise. A field compared by value is
// written as MongoDB normalizes it, {a: 1} as {a: {$eq: "?number"}}; a
// regex literal as {$regex: "?string", $options: "?string"} (whether it is
// case-insensitive is a trait of the run, ShapeTraits). Field paths
// and variables in expressions ("$a", "$$ROOT"), sort directions and the
// names a stage refers to ($lookup's from/localField/foreignField/as,
// $unwind's path) are kept: they are the shape.
//
// Every shape is computed twice over: as a 64-bit hash, with no allocation
// (what a query pays each time it runs), and as the document itself, built
// only when a shape is seen for the first time.
//
// Thread safety: pure functions.
#ifndef ROCKDOC_QUERY_QUERY_SHAPE_H_
#define ROCKDOC_QUERY_QUERY_SHAPE_H_

#include <cstdint>
#include <string_view>

#include "rockdoc/document.h"

namespace rockdoc::internal {

// What a shape walk noticed on the way.
struct ShapeTraits {
  // A $regex with the i flag: a case-insensitive run (a trait of the run:
  // one shape may run with and without the flag).
  bool case_insensitive = false;
  // The filter selects by one reference field alone (_id, or a name
  // ending in "Id" or "_id": postId, author_id), a value or an $in list:
  // how an application-level join reads its other side.
  bool id_lookup = false;
};

// A find's shape: {filter, sort?, projection?, skip?, limit?} (skip and
// limit as "?number" when given). `out` null: only the hash and traits.
uint64_t ShapeFind(DocumentView filter, DocumentView sort, DocumentView projection, bool has_skip,
                   bool has_limit, BsonBuilder* out, ShapeTraits* traits);

// An aggregate's shape: {pipeline: [...]}, each stage's.
uint64_t ShapePipeline(DocumentView pipeline, BsonBuilder* out, ShapeTraits* traits);

// The placeholder of a value's type ("?number" ...), as above.
std::string_view ShapePlaceholder(BsonType type);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_QUERY_QUERY_SHAPE_H_
