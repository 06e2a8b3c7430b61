// command/change_stream_options.cc: the $changeStream stage's fields
// decoded from one table (command/change_stream_options.h).
#include "command/change_stream_options.h"

#include <string>

#include "command/command.h"

namespace rockdoc::internal {

namespace {

Status ResumeTokenRow(const Element& e, std::optional<Document>* out) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  *out = Document::AdoptValidated(std::string(e.Document().bytes()));
  return Status::OK();
}
constexpr OptionField<ChangeStreamSpec> kChangeStreamFields[] = {
    {"fullDocument",
     [](const Element& e, ChangeStreamSpec* o) -> Status {
       if (!e.IsString()) return WrongType(e, "type 'string'");
       o->options.full_document = std::string(e.String());
       return Status::OK();
     }},
    {"fullDocumentBeforeChange",
     [](const Element& e, ChangeStreamSpec* o) -> Status {
       if (!e.IsString()) return WrongType(e, "type 'string'");
       o->options.full_document_before_change = std::string(e.String());
       return Status::OK();
     }},
    {"resumeAfter",
     [](const Element& e, ChangeStreamSpec* o) {
       return ResumeTokenRow(e, &o->options.resume_after);
     }},
    {"startAfter", [](const Element& e,
                      ChangeStreamSpec* o) { return ResumeTokenRow(e, &o->options.start_after); }},
    {"startAtOperationTime",
     [](const Element& e, ChangeStreamSpec* o) -> Status {
       if (!e.IsTimestamp()) return WrongType(e, "type 'timestamp'");
       o->options.start_at_operation_time = e.Timestamp();
       return Status::OK();
     }},
    {"allChangesForCluster",
     &BoolRow<ChangeStreamSpec, &ChangeStreamSpec::all_changes_for_cluster>},
    {"showExpandedEvents",
     [](const Element& e, ChangeStreamSpec* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->options.show_expanded_events, BoolField(e));
       return Status::OK();
     }},
    {"allowToRunOnConfigDB", nullptr},
    {"allowToRunOnSystemNS", nullptr},
};

}  // namespace

StatusOr<ChangeStreamSpec> ParseChangeStreamSpec(DocumentView stage) {
  ChangeStreamSpec spec;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("$changeStream", stage, kChangeStreamFields, &spec));
  return spec;
}

}  // namespace rockdoc::internal
