// command/collection_options.h: the create command's options, decoded from
// one table of known names into CreateCollectionOptions (rockdoc/options.h),
// which Database::CreateCollection takes typed: decoding documents is the
// command layer's work. Also what rockdoc-restore decodes a dump's
// metadata options with (--preserveUUID creates through
// CreateCollectionWithUuid, which no command field reaches).
//
// Thread safety: stateless.
#ifndef ROCKDOC_COMMAND_COLLECTION_OPTIONS_H_
#define ROCKDOC_COMMAND_COLLECTION_OPTIONS_H_

#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// Decodes create's options (the command's own field and the generic
// arguments split off): capped, size, max, validator, validationLevel,
// validationAction, viewOn, pipeline, changeStreamPreAndPostImages ({enabled:
// <bool>}, nothing else: catalog.h ParsePreAndPostImagesOption), comment (a
// note: nothing to keep).
// Errors:
//   Location40415: a name MongoDB does not know ("BSON field 'create.x' is
//     an unknown field.");
//   NotImplemented (238): an option MongoDB has and rockdoc does not
//     (timeseries, clusteredIndex, collation, expireAfterSeconds, ...):
//     "The createCollection option 'x' is not supported by rockdoc";
//   TypeMismatch (14): a value of the wrong type, in MongoDB's words; BadValue
//     for an enumeration value that is not one (validationLevel "x").
// The values' ranges and combinations (capped without size, a view with
// other options, ...) are Database::CreateCollection's checks, for every
// caller.
StatusOr<CreateCollectionOptions> ParseCreateCollectionOptions(DocumentView options);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_COLLECTION_OPTIONS_H_
