// command/retryable_writes.cc: retryable writes (a write command with an
// lsid and a txnNumber but no autocommit), applied once per statement
// however often a driver retries them, as MongoDB's (its statement ids are
// each statement's index in the command, the ones MongoDB assigns when a
// driver sends none).
//
// The session (command/server_sessions.h) records what each statement of
// its current retryable write did. A retry reports those statements from
// the record (listing them in `retriedStmtIds`) and runs only the others:
// an insert's pending documents as one batch, an update's or delete's
// statements one by one (each one's n, nModified and upserted _id is what
// a later retry must report), a findAndModify whole (its reply is kept).
// Commands of one session run one at a time, so a retry that arrives while
// the first attempt runs waits for it and then finds its record.
#include <algorithm>
#include <set>
#include <vector>

#include "command/command.h"
#include "command/handlers.h"
#include "command/server_sessions.h"

namespace rockdoc::internal {

namespace {

// The array field of a write command's statements.
std::string_view StatementField(std::string_view command) {
  if (command == "insert") return "documents";
  if (command == "update") return "updates";
  return "deletes";
}

// The command with `field` holding only the statements `ids` of `all`.
Document SubCommand(DocumentView cmd, std::string_view field,
                    const std::vector<DocumentView>& all, const std::vector<int32_t>& ids) {
  BsonBuilder b;
  for (Element e : cmd) {
    if (e.key() == field) {
      b.OpenArray(field);
      for (int32_t id : ids) b.AppendDocument("", all[id]);
      b.Close();
    } else {
      b.AppendElement(e);
    }
  }
  return std::move(b).Build();
}

StatusOr<Document> Run(CommandContext& ctx, const CommandDefinition& command, DocumentView cmd) {
  BsonBuilder reply;
  ROCKDOC_RETURN_IF_ERROR(command.run(ctx, cmd, &reply));
  return std::move(reply).Build();
}

int64_t Count(DocumentView reply, std::string_view field) {
  Element e = reply.Get(field);
  return e.IsNumber() ? static_cast<int64_t>(e.NumberAsDouble()) : 0;
}

// A write error of a sub-command, with its index mapped back to the
// statement's in the command the client sent.
struct MappedError {
  int32_t index;
  Document error;
};

void CollectErrors(DocumentView reply, const std::vector<int32_t>& ids,
                   std::vector<MappedError>* out) {
  Element errors = reply.Get("writeErrors");
  if (!errors.IsArray()) return;
  for (Element e : errors.Array()) {
    if (!e.IsDocument()) continue;
    const int32_t local = e.Document().Get("index").Int32();
    const int32_t index = local >= 0 && local < static_cast<int32_t>(ids.size()) ? ids[local] : local;
    BsonBuilder b;
    for (Element f : e.Document()) {
      if (f.key() == "index") {
        b.AppendInt32("index", index);
      } else {
        b.AppendElement(f);
      }
    }
    out->push_back(MappedError{index, std::move(b).Build()});
  }
}

}  // namespace

Status RunRetryableWrite(CommandContext& ctx, const CommandDefinition& command, DocumentView cmd,
                         ServerSession* s, BsonBuilder* reply) {
  const std::string_view name = command.name;
  if (name == "findAndModify" || name == "findandmodify") {
    if (!s->find_and_modify_reply) {
      ROCKDOC_ASSIGN_OR_RETURN(Document r, Run(ctx, command, cmd));
      s->find_and_modify_reply = std::move(r);
      for (Element e : *s->find_and_modify_reply) reply->AppendElement(e);
      return Status::OK();
    }
    for (Element e : *s->find_and_modify_reply) reply->AppendElement(e);
    reply->OpenArray("retriedStmtIds");
    reply->AppendInt32("", 0);
    reply->Close();
    return Status::OK();
  }

  const std::string_view field = StatementField(name);
  Element statements = cmd.Get(field);
  Element ordered_field = cmd.Get("ordered");
  std::vector<DocumentView> all;
  bool well_formed = statements.IsArray() && (!ordered_field.ok() || ordered_field.IsBool());
  if (well_formed) {
    for (Element e : statements.Array()) {
      if (!e.IsDocument()) well_formed = false;
      all.push_back(e.IsDocument() ? e.Document() : DocumentView());
    }
  }
  if (!well_formed || all.empty()) {
    // The handler reports what is wrong with it; nothing runs.
    return command.run(ctx, cmd, reply);
  }
  const bool ordered = !ordered_field.ok() || ordered_field.Bool();
  // A malformed statement fails the command before any runs, as without a
  // txnNumber (update and delete run here one statement at a time).
  ROCKDOC_RETURN_IF_ERROR(CheckWriteStatements(name, cmd));

  std::vector<int32_t> retried;
  std::vector<MappedError> errors;
  int64_t n = 0, modified = 0;
  std::vector<std::pair<int32_t, Value>> upserted;
  auto add = [&](const StatementOutcome& o, int32_t id) {
    n += o.n;
    modified += o.modified;
    if (o.upserted_id) upserted.emplace_back(id, *o.upserted_id);
  };

  if (name == "insert") {
    std::vector<int32_t> pending;
    for (int32_t id = 0; id < static_cast<int32_t>(all.size()); ++id) {
      auto it = s->executed.find(id);
      if (it != s->executed.end()) {
        retried.push_back(id);
        add(it->second, id);
      } else {
        pending.push_back(id);
      }
    }
    if (!pending.empty()) {
      ROCKDOC_ASSIGN_OR_RETURN(Document r,
                               Run(ctx, command, SubCommand(cmd, field, all, pending)));
      CollectErrors(r, pending, &errors);
      std::set<int32_t> failed;
      for (const MappedError& e : errors) failed.insert(e.index);
      // Ordered: the batch stopped at its first error.
      const int32_t stop = ordered && !errors.empty()
                               ? std::min_element(errors.begin(), errors.end(),
                                                  [](const MappedError& a, const MappedError& b) {
                                                    return a.index < b.index;
                                                  })->index
                               : INT32_MAX;
      for (int32_t id : pending) {
        if (id >= stop) break;
        if (failed.count(id)) continue;
        StatementOutcome o;
        o.n = 1;
        s->executed[id] = o;
        add(o, id);
      }
    }
  } else {
    for (int32_t id = 0; id < static_cast<int32_t>(all.size()); ++id) {
      auto it = s->executed.find(id);
      if (it != s->executed.end()) {
        retried.push_back(id);
        add(it->second, id);
        continue;
      }
      ROCKDOC_ASSIGN_OR_RETURN(Document r, Run(ctx, command, SubCommand(cmd, field, all, {id})));
      const size_t before = errors.size();
      CollectErrors(r, {id}, &errors);
      if (errors.size() > before) {
        if (ordered) break;
        continue;
      }
      StatementOutcome o;
      o.n = Count(r, "n");
      o.modified = Count(r, "nModified");
      Element up = r.Get("upserted");
      if (up.IsArray()) {
        for (Element u : up.Array()) {
          if (u.IsDocument()) o.upserted_id = Value::FromElement(u.Document().Get("_id"));
        }
      }
      s->executed[id] = o;
      add(o, id);
    }
  }

  AppendNumber(reply, "n", n);
  if (name == "update") {
    AppendNumber(reply, "nModified", modified);
    if (!upserted.empty()) {
      reply->OpenArray("upserted");
      for (const auto& [index, id] : upserted) {
        reply->OpenDocument("");
        reply->AppendInt32("index", index);
        reply->AppendElementAs("_id", id.element());
        reply->Close();
      }
      reply->Close();
    }
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end(),
              [](const MappedError& a, const MappedError& b) { return a.index < b.index; });
    reply->OpenArray("writeErrors");
    for (const MappedError& e : errors) reply->AppendDocument("", e.error);
    reply->Close();
  }
  if (!retried.empty()) {
    reply->OpenArray("retriedStmtIds");
    for (int32_t id : retried) reply->AppendInt32("", id);
    reply->Close();
  }
  return Status::OK();
}

}  // namespace rockdoc::internal
