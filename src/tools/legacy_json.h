// tools/legacy_json.h: mongoimport --legacy input, Extended JSON v1 as the
// mongo shell and old mongoexport wrote it, rewritten as Extended JSON v2
// text for the v2 parser.
//
// What --legacy adds to what JSON import always reads (v2, and the v1
// "$"-forms the v2 parser accepts: {"$date": <ms>}, {"$binary": "..",
// "$type": ".."}, {"$regex": "..", "$options": ".."}, ...):
// - the shell's constructors, with or without `new`: ObjectId("hex"),
//   Date(ms) / Date("iso"), ISODate("iso"), NumberLong(n or "n"),
//   NumberInt(n or "n"), NumberDecimal("x"), Timestamp(t, i),
//   BinData(subtype, "base64"), HexData(subtype, "hex"), UUID("hex"),
//   DBRef("coll", id), MinKey / MaxKey (with or without "()"),
//   Symbol("s");
// - regular expression literals /pattern/flags;
// - undefined, NaN, Infinity, -Infinity;
// - single-quoted strings and unquoted (identifier) keys.
// Anything else the shell accepts (functions, comments, other
// constructors) is an error naming what it found, never passed on.
#ifndef ROCKDOC_TOOLS_LEGACY_JSON_H_
#define ROCKDOC_TOOLS_LEGACY_JSON_H_

#include <string>
#include <string_view>

#include "rockdoc/status.h"

namespace rockdoc::tools {

// One value (a document, in import) of legacy text as Extended JSON v2
// text. FailedToParse names the offset and what was expected.
StatusOr<std::string> LegacyJsonToV2(std::string_view text);

// The one v1 form every JSON import reads that the v2 parser does not:
// {"$date": <integer milliseconds>} becomes {"$date": {"$numberLong":
// "<ms>"}} (outside strings; other text unchanged).
std::string UpgradeLegacyJson(std::string_view text);

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_LEGACY_JSON_H_
