// Collection updates: updateOne/updateMany (and replaceOne through them),
// findOneAndUpdate/findOneAndReplace, with upserts, and the explain of
// updates and deletes. Each document's change is one transaction: lock,
// re-read, re-match, apply the update (query/update/update_driver.h), check
// 16 MiB, write only when something changed.

#include "api/collection_internal.h"
#include "common/clock.h"
#include "query/expr_match_expression.h"
#include "query/update/update_driver.h"
#include "rockdoc/client.h"
#include "store/write_ops.h"

namespace rockdoc {

using internal::CollectionLock;
using internal::OpContext;
using internal::OpKind;

namespace {

struct UpdateRequest {
  DocumentView filter;
  DocumentView update;
  bool pipeline = false;  // `update` is an update pipeline's array
  bool multi = false;
  bool upsert = false;
  const std::vector<Document>* array_filters = nullptr;
  DocumentView sort;
  DocumentView hint;
  std::string_view hint_name;
  DocumentView let;  // the command's variables
  const std::optional<Document>* collation = nullptr;
  // findOneAndUpdate: which version to hand back.
  bool want_document = false;
  bool return_after = false;
  int64_t max_time_ms = 0;
  bool bypass_document_validation = false;
};

// The update of a request: operators, a replacement, or a pipeline.
StatusOr<UpdateDriver> ParseUpdate(const UpdateRequest& req) {
  static const std::vector<Document> kNoFilters;
  if (!req.pipeline) {
    return UpdateDriver::Parse(req.update, req.array_filters ? *req.array_filters : kNoFilters);
  }
  if (req.array_filters != nullptr && !req.array_filters->empty()) {
    return Status(ErrorCode::kFailedToParse,
                  "arrayFilters may not be specified for pipeline-style updates");
  }
  if (req.let.empty()) return UpdateDriver::ParsePipeline(req.update);
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<FilterVariables> let, BindLetVariables(req.let));
  return UpdateDriver::ParsePipeline(req.update, let.get());
}

// The find that selects an update's targets, the same for the update and
// its explain: the sort (which document a single-document update changes),
// the hint, and a limit of one unless multi.
StatusOr<FindOptions> TargetFindOptions(const UpdateRequest& req) {
  if (req.multi && !req.sort.empty()) {
    // MongoDB's message; every match is updated, so a sort would be dropped.
    return Status(ErrorCode::kFailedToParse, "Cannot specify sort with multi=true");
  }
  FindOptions fo;
  fo.sort = Document::AdoptValidated(std::string(req.sort.bytes()));
  fo.hint = Document::AdoptValidated(std::string(req.hint.bytes()));
  fo.hint_name = std::string(req.hint_name);
  fo.let = Document::AdoptValidated(std::string(req.let.bytes()));
  if (req.collation != nullptr) fo.collation = *req.collation;
  if (!req.multi) fo.limit = 1;
  return fo;
}

// The writer of an update's targets: re-matches the current version,
// applies the update, checks the result and (unless a dry run: `txn` null)
// writes it. `returned` (findOneAndUpdate) gets the version to hand back.
internal::TargetWriter UpdateWriter(const internal::Engine& engine,
                                    const internal::CollectionMeta* meta,
                                    const UpdateRequest& req, const UpdateDriver& driver,
                                    const internal::CanonicalQuery& cq, int64_t now,
                                    const internal::Deadline& deadline,
                                    std::optional<Document>* returned) {
  return [&engine, meta, &req, &driver, &cq, now, &deadline, returned](
             internal::KvTransaction* txn, std::string_view key, const Document& doc,
             internal::WriteDelta* delta, size_t* bytes) -> StatusOr<internal::TargetOutcome> {
    if (req.want_document) returned->reset();  // from an attempt rolled back
    MatchDetails details;
    if (driver.uses_positional()) details.RequestElemMatchKey();
    ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*cq.root, doc, &details));
    if (!matched) return internal::TargetOutcome::kNoMatch;
    UpdateContext ctx;
    ctx.now_millis = now;
    ctx.deadline = &deadline;
    if (details.has_elem_match_key()) ctx.positional_index = details.elem_match_key();
    if (driver.uses_positional() && !ctx.positional_index) {
      return BadValue("The positional operator did not find the match needed from the query.");
    }
    ROCKDOC_ASSIGN_OR_RETURN(UpdateDriver::Result r, driver.Apply(doc, ctx));
    internal::TargetOutcome outcome = internal::TargetOutcome::kMatched;
    if (r.modified) {
      ROCKDOC_RETURN_IF_ERROR(internal::CheckUpdateResultSize(
          r.doc, driver.is_replacement() ? nullptr : &r.changed_paths));
      if (txn != nullptr) {
        ROCKDOC_RETURN_IF_ERROR(internal::ReplaceDocument(
            engine, txn, *meta, key, doc, r.doc, delta, req.bypass_document_validation,
            driver.is_replacement() ? internal::ReplaceKind::kReplace
                                    : internal::ReplaceKind::kUpdate));
      }
      *bytes = r.doc.size();
      outcome = internal::TargetOutcome::kWritten;
    }
    if (req.want_document) *returned = req.return_after ? std::move(r.doc) : doc;
    return outcome;
  };
}

StatusOr<UpdateResult> RunUpdateOnce(const std::shared_ptr<internal::Engine>& engine,
                                     const std::string& db, const std::string& name,
                                     const UpdateRequest& req, std::optional<Document>* returned,
                                     const OpContext& op) {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckMaxTimeMS(req.max_time_ms));
  const internal::Deadline deadline = internal::Deadline::AfterMillis(req.max_time_ms);
  auto use = engine->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(req.update.bytes()));
  // The update is parsed and checked before anything is read.
  ROCKDOC_ASSIGN_OR_RETURN(UpdateDriver driver, ParseUpdate(req));
  if (req.multi && driver.is_replacement()) {
    return FailedToParse("multi update is not supported for replacement-style update");
  }
  ROCKDOC_ASSIGN_OR_RETURN(FindOptions fo, TargetFindOptions(req));
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(req.filter, fo));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard, CollectionLock::Acquire(*engine, db, name, CollectionLock::Mode::kShared, req.upsert));
  UpdateResult result;
  const internal::CollectionMeta* meta = guard.meta();
  internal::ApplyDefaultCollation(cq.get(), meta);
  const int64_t now = internal::WallMillis();
  if (meta != nullptr) {
    internal::TargetWriter write =
        UpdateWriter(*engine, meta, req, driver, *cq, now, deadline, returned);
    // With one target, a concurrent writer may make it stop matching before
    // we lock it: look again, a bounded number of times.
    for (int attempt = 0; attempt < (req.multi ? 1 : 8); ++attempt) {
      ROCKDOC_ASSIGN_OR_RETURN(
          internal::WriteCounts counts,
          internal::RunWritePlan(engine, *meta, *cq, deadline, op,
                                 internal::WriteStage::Kind::kUpdate, write));
      result.matched_count += counts.matched;
      result.modified_count += counts.written;
      for (std::string& w : counts.warnings) result.warnings.push_back(std::move(w));
      if (counts.targets == 0 || req.multi || result.matched_count > 0) break;
    }
  }
  if (result.matched_count > 0 || !req.upsert) return result;

  UpdateContext ctx;
  ctx.now_millis = now;
  ctx.is_upsert_insert = true;
  ROCKDOC_ASSIGN_OR_RETURN(Document seeded, driver.ProduceUpsertDocument(req.filter, ctx));
  ROCKDOC_RETURN_IF_ERROR(internal::CheckUpdateResultSize(seeded));
  ROCKDOC_ASSIGN_OR_RETURN(Document doc, internal::PrepareInsert(seeded));
  ROCKDOC_RETURN_IF_ERROR(internal::InsertOneDocument(*engine, *meta, doc, deadline, op.txn,
                                                      req.bypass_document_validation,
                                                      &result.warnings));
  result.upserted_id = Value::FromElement(*doc.begin());
  if (req.want_document && req.return_after) *returned = std::move(doc);
  return result;
}

// An upsert that finds nothing and then loses the race to insert (another
// writer inserted the same _id first) is tried again and then matches, as
// MongoDB retries it; a duplicate that persists is a real conflict.
StatusOr<UpdateResult> RunUpdate(const std::shared_ptr<internal::Engine>& engine,
                                 const std::string& db, const std::string& name,
                                 const UpdateRequest& req, std::optional<Document>* returned,
                                 const std::shared_ptr<internal::SessionState>& session,
                                 std::string_view command) {
  return internal::RunOperation<StatusOr<UpdateResult>>(
      session, OpKind::kWrite, command, [&](const OpContext& op) -> StatusOr<UpdateResult> {
        // Inside a transaction the insert cannot lose a race it could win
        // by retrying: a concurrent insert is a write conflict there.
        const int upsert_attempts = op.in_transaction() ? 1 : 3;
        for (int attempt = 1;; ++attempt) {
          StatusOr<UpdateResult> r = RunUpdateOnce(engine, db, name, req, returned, op);
          if (r.ok() || !req.upsert || attempt >= upsert_attempts ||
              r.status().code() != ErrorCode::kDuplicateKey) {
            return r;
          }
        }
      });
}

StatusOr<std::optional<Document>> Project(std::optional<Document> doc, const Document& spec) {
  if (!doc || spec.empty()) return doc;
  ROCKDOC_ASSIGN_OR_RETURN(auto p, internal::MakeProjectionInfo(spec, nullptr));
  ROCKDOC_ASSIGN_OR_RETURN(Document projected, p.apply(*doc, std::nullopt));
  return std::optional<Document>(std::move(projected));
}

}  // namespace

namespace {

// updateOne / updateMany's request: `sort` picks the one document an
// updateOne changes; updateMany ignores it.
UpdateRequest RequestFor(DocumentView filter, DocumentView update, const UpdateOptions& options,
                         bool multi, bool pipeline = false) {
  UpdateRequest req;
  req.filter = filter;
  req.update = update;
  req.pipeline = pipeline;
  req.multi = multi;
  req.upsert = options.upsert;
  req.array_filters = &options.array_filters;
  req.sort = options.sort;
  req.hint = options.hint;
  req.hint_name = options.hint_name;
  req.let = options.let;
  req.collation = &options.collation;
  req.max_time_ms = options.max_time_ms;
  req.bypass_document_validation = options.bypass_document_validation;
  return req;
}

}  // namespace

StatusOr<UpdateResult> Collection::UpdateOne(DocumentView filter, DocumentView update,
                                             const UpdateOptions& options) const {
  return RunUpdate(engine_, db_name_, name_, RequestFor(filter, update, options, false), nullptr,
                   session_, "update");
}

StatusOr<UpdateResult> Collection::UpdateMany(DocumentView filter, DocumentView update,
                                              const UpdateOptions& options) const {
  return RunUpdate(engine_, db_name_, name_, RequestFor(filter, update, options, true), nullptr,
                   session_, "update");
}

StatusOr<UpdateResult> Collection::UpdateOne(DocumentView filter, const UpdatePipeline& update,
                                             const UpdateOptions& options) const {
  return RunUpdate(engine_, db_name_, name_, RequestFor(filter, update.stages, options, false, true),
                   nullptr, session_, "update");
}

StatusOr<UpdateResult> Collection::UpdateMany(DocumentView filter, const UpdatePipeline& update,
                                              const UpdateOptions& options) const {
  return RunUpdate(engine_, db_name_, name_, RequestFor(filter, update.stages, options, true, true),
                   nullptr, session_, "update");
}

StatusOr<std::optional<Document>> Collection::FindOneAndUpdate(
    DocumentView filter, const UpdatePipeline& update, const FindOneAndModifyOptions& options,
    UpdateResult* result) const {
  return FindOneAndUpdateImpl(filter, update.stages, true, options, result);
}

StatusOr<std::optional<Document>> Collection::FindOneAndUpdate(
    DocumentView filter, DocumentView update, const FindOneAndModifyOptions& options,
    UpdateResult* result) const {
  return FindOneAndUpdateImpl(filter, update, false, options, result);
}

StatusOr<std::optional<Document>> Collection::FindOneAndUpdateImpl(
    DocumentView filter, DocumentView update, bool pipeline, const FindOneAndModifyOptions& options,
    UpdateResult* result) const {
  UpdateRequest req;
  req.filter = filter;
  req.update = update;
  req.pipeline = pipeline;
  req.upsert = options.upsert;
  req.array_filters = &options.array_filters;
  req.sort = options.sort;
  req.want_document = true;
  req.return_after = options.return_document == ReturnDocument::kAfter;
  req.hint = options.hint;
  req.hint_name = options.hint_name;
  req.let = options.let;
  req.collation = &options.collation;
  req.max_time_ms = options.max_time_ms;
  req.bypass_document_validation = options.bypass_document_validation;
  std::optional<Document> returned;
  ROCKDOC_ASSIGN_OR_RETURN(
      UpdateResult done,
      RunUpdate(engine_, db_name_, name_, req, &returned, session_, "findAndModify"));
  if (result != nullptr) *result = std::move(done);
  return Project(std::move(returned), options.projection);
}

StatusOr<std::optional<Document>> Collection::FindOneAndReplace(
    DocumentView filter, DocumentView replacement, const FindOneAndModifyOptions& options,
    UpdateResult* result) const {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(replacement.bytes()));
  for (Element e : replacement) {
    if (!e.key().empty() && e.key()[0] == '$') {
      return BadValue("replacement document must not contain update operators: " +
                      std::string(e.key()));
    }
  }
  return FindOneAndUpdate(filter, replacement, options, result);
}

namespace {

// The explain of a write: the plan that finds its targets under the
// UPDATE or DELETE stage, run dry (explain never writes).
StatusOr<Document> ExplainWrite(const std::shared_ptr<internal::Engine>& engine,
                                const Collection& coll, DocumentView filter,
                                const FindOptions& fo, ExplainVerbosity verbosity,
                                internal::WriteStage::Kind kind,
                                const std::function<internal::TargetWriter(
                                    const internal::CollectionMeta*,
                                    const internal::CanonicalQuery&)>& make_writer) {
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, fo));
  ROCKDOC_ASSIGN_OR_RETURN(
      auto meta, internal::LookupForRead(*engine, coll.database_name(), coll.name()));
  internal::ApplyDefaultCollation(cq.get(), meta.get());
  return internal::ExplainWritePlan(engine, meta.get(), coll.full_name(), *cq, verbosity, kind,
                                    make_writer(meta.get(), *cq));
}

}  // namespace

StatusOr<Document> Collection::ExplainUpdate(DocumentView filter, const UpdatePipeline& update,
                                             bool multi, const UpdateOptions& options,
                                             ExplainVerbosity verbosity) const {
  return ExplainUpdateImpl(filter, update.stages, true, multi, options, verbosity);
}

StatusOr<Document> Collection::ExplainUpdate(DocumentView filter, DocumentView update, bool multi,
                                             const UpdateOptions& options,
                                             ExplainVerbosity verbosity) const {
  return ExplainUpdateImpl(filter, update, false, multi, options, verbosity);
}

StatusOr<Document> Collection::ExplainUpdateImpl(DocumentView filter, DocumentView update,
                                                 bool pipeline, bool multi,
                                                 const UpdateOptions& options,
                                                 ExplainVerbosity verbosity) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "explain"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(update.bytes()));
  // The plan the update itself would run: its sort and hint included.
  const UpdateRequest req = RequestFor(filter, update, options, multi, pipeline);
  ROCKDOC_ASSIGN_OR_RETURN(UpdateDriver driver, ParseUpdate(req));
  ROCKDOC_ASSIGN_OR_RETURN(FindOptions fo, TargetFindOptions(req));
  const internal::Deadline no_deadline;
  const int64_t now = internal::WallMillis();
  return ExplainWrite(engine_, *this, filter, fo, verbosity, internal::WriteStage::Kind::kUpdate,
                      [&](const internal::CollectionMeta* meta, const internal::CanonicalQuery& cq) {
                        return UpdateWriter(*engine_, meta, req, driver, cq, now, no_deadline,
                                            nullptr);
                      });
}

StatusOr<Document> Collection::ExplainDelete(DocumentView filter, bool multi,
                                             ExplainVerbosity verbosity) const {
  return ExplainDelete(filter, multi, DeleteOptions(), verbosity);
}

StatusOr<Document> Collection::ExplainDelete(DocumentView filter, bool multi,
                                             const DeleteOptions& options,
                                             ExplainVerbosity verbosity) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "explain"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  FindOptions fo;
  fo.hint = options.hint;
  fo.hint_name = options.hint_name;
  fo.let = options.let;
  fo.collation = options.collation;
  if (!multi) fo.limit = 1;
  return ExplainWrite(
      engine_, *this, filter, fo, verbosity, internal::WriteStage::Kind::kDelete,
      [](const internal::CollectionMeta*, const internal::CanonicalQuery& cq) {
        // Run dry only: says which documents would go.
        return [&cq](internal::KvTransaction*, std::string_view, const Document& current,
                     internal::WriteDelta*, size_t*) -> StatusOr<internal::TargetOutcome> {
          ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*cq.root, current));
          return matched ? internal::TargetOutcome::kWritten : internal::TargetOutcome::kNoMatch;
        };
      });
}

}  // namespace rockdoc
