// query/update/update_description.h: a change stream's updateDescription
// for an update of `before` into `after`: what MongoDB's update events
// report, computed from the two versions as MongoDB's document diff
// (document_diff_calculator) computes an oplog entry's diff.
//
//   updatedFields    {path: new value} for each field added or changed; an
//                    embedded document or array is entered and its changed
//                    parts named ("a.b", "arr.3"), never rewritten whole;
//   removedFields    [path] for each field removed;
//   truncatedArrays  [{field: path, newSize: n}] for each array that got
//                    shorter (its remaining elements' changes are in
//                    updatedFields);
//   disambiguatedPaths {path: [field name | array index (int), ...]} for each
//                    path above that a dotted path leaves ambiguous (a field
//                    name that is all digits or holds a dot, MongoDB 6.1's
//                    rule); absent when there is none. Change streams show
//                    it under showExpandedEvents only ({} when absent).
//
// A value that changed type (a document that became an array, 1 that became
// 1.0) is replaced whole. A field order change alone is not reported.
//
// Thread safety: pure functions.
#ifndef ROCKDOC_QUERY_UPDATE_UPDATE_DESCRIPTION_H_
#define ROCKDOC_QUERY_UPDATE_UPDATE_DESCRIPTION_H_

#include "rockdoc/document.h"

namespace rockdoc::internal {

// {updatedFields: {...}, removedFields: [...], truncatedArrays: [...],
//  disambiguatedPaths?: {...}}.
Document ComputeUpdateDescription(DocumentView before, DocumentView after);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_QUERY_UPDATE_UPDATE_DESCRIPTION_H_
