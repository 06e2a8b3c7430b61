// command/change_stream_options.h: the fields of a $changeStream stage
// (MongoDB's DocumentSourceChangeStreamSpec), decoded from one table of
// known names: the aggregate command's first stage, and the C API's
// rockdoc_watch, take them this way. The API takes them typed
// (ChangeStreamOptions in rockdoc/options.h).
//
// Thread safety: stateless.
#ifndef ROCKDOC_COMMAND_CHANGE_STREAM_OPTIONS_H_
#define ROCKDOC_COMMAND_CHANGE_STREAM_OPTIONS_H_

#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

struct ChangeStreamSpec {
  ChangeStreamOptions options;
  // Every database's changes (the admin database's {aggregate: 1} only).
  bool all_changes_for_cluster = false;
};

// Decodes {fullDocument, fullDocumentBeforeChange, resumeAfter, startAfter,
// startAtOperationTime, allChangesForCluster, showExpandedEvents, ...}.
// Errors: 40415 for a name MongoDB does not know ("BSON field
// '$changeStream.x' is an unknown field."), TypeMismatch (14) for a value of
// the wrong type. The values themselves are checked by Watch.
StatusOr<ChangeStreamSpec> ParseChangeStreamSpec(DocumentView stage);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_CHANGE_STREAM_OPTIONS_H_
