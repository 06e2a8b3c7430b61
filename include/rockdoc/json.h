// rockdoc/json.h: JSON and MongoDB Extended JSON v2 in and out.
//
// Parsing uses simdjson and keeps field order. Both canonical and relaxed
// Extended JSON are accepted, and the legacy forms the BSON corpus lists as
// degenerate ({"$binary": "..", "$type": ".."}, {"$regex": .., "$options":
// ..}, {"$uuid": ".."}, ...). A bare number under $date is refused, as the
// corpus requires.
// Plain JSON numbers become int32 when integral and in range, else int64,
// else double, as mongoimport does.
//
// Thread safety: all functions are thread-safe.
//
// Example:
//   auto doc = rockdoc::FromJson(R"({"_id": {"$oid": "5f1d7f0b9d3c2a1b2c3d4e5f"}, "n": 1})");
//   std::string text = rockdoc::ToJson(*doc, rockdoc::JsonFormat::kCanonical);
#ifndef ROCKDOC_JSON_H_
#define ROCKDOC_JSON_H_

#include <string>
#include <string_view>

#include "rockdoc/document.h"
#include "rockdoc/export.h"
#include "rockdoc/status.h"

namespace rockdoc {

enum class JsonFormat {
  // Extended JSON v2 canonical: every type explicit ({"$numberInt": "1"}).
  kCanonical,
  // Extended JSON v2 relaxed: native JSON numbers where lossless, ISO dates.
  kRelaxed,
  // mongosh's printing: ObjectId('...'), ISODate('...'), Long('...'),
  // Decimal128('...'), Timestamp({ t: ..., i: ... }), 'single-quoted'
  // strings, unquoted simple keys.
  kShell,
};

// Parses one JSON object into a document. Errors are FailedToParse (9) and
// name the byte offset, line and column, and what was wrong.
ROCKDOC_EXPORT StatusOr<Document> FromJson(std::string_view json);

// The bytes FromPaddedJson may read past the end of its text.
inline constexpr size_t kJsonPadding = 64;
// FromJson without copying the text: for text that lies in a larger buffer
// (a file of JSON lines read whole, a network buffer). Precondition: the
// kJsonPadding bytes after `json` are readable (their contents do not
// matter); the parser reads up to them, never writes. The same errors.
ROCKDOC_EXPORT StatusOr<Document> FromPaddedJson(std::string_view json);

// Writes a document on one line ({"a": 1, "b": "x"}, a space after ':' and
// ','), in the given format.
ROCKDOC_EXPORT std::string ToJson(DocumentView doc, JsonFormat format = JsonFormat::kRelaxed);
// Writes a single value in the given format (no key).
ROCKDOC_EXPORT std::string ValueToJson(const Element& value,
                                       JsonFormat format = JsonFormat::kRelaxed);

}  // namespace rockdoc

#endif  // ROCKDOC_JSON_H_
