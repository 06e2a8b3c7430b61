// command/index_options.h: the options of an index specification, decoded
// from one table of known names (createIndexes' `indexes` entries, and the
// specifications mongorestore's metadata carries through that command).
// The API takes them typed (IndexOptions, IndexModel in rockdoc/options.h):
// decoding documents is the command layer's work, as every other command
// option's.
//
// Thread safety: stateless.
#ifndef ROCKDOC_COMMAND_INDEX_OPTIONS_H_
#define ROCKDOC_COMMAND_INDEX_OPTIONS_H_

#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// Decodes an index specification's options ({name, unique, sparse,
// partialFilterExpression, expireAfterSeconds, v, background, ...}; `key`
// is the caller's). Errors:
//   InvalidIndexSpecificationOption (197): a name MongoDB does not know
//     ("The field 'x' is not valid for an index specification. ...");
//   NotImplemented (238): an option MongoDB has and rockdoc does not
//     implement (2dsphereIndexVersion, wildcardProjection, ...): "The
//     index option 'x' is not supported by rockdoc";
//   TypeMismatch (14): a value of the wrong type; CannotCreateIndex (67):
//     v other than 2 (v:1 is NotImplemented), expireAfterSeconds out of range.
// `background`, `dropDups` and `ns` are accepted and have no effect, as in
// MongoDB since 4.2 (`background` stays in the specification, as MongoDB's).
StatusOr<IndexOptions> ParseIndexOptions(DocumentView options);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_INDEX_OPTIONS_H_
