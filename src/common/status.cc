#include "rockdoc/status.h"

#include <cstdio>
#include <cstdlib>

#include "common/logging.h"
#include "common/utf8.h"

namespace rockdoc {

std::string ErrorCodeName(ErrorCode code) {
  switch (code) {
#define ROCKDOC_CODE_NAME(name) \
  case ErrorCode::k##name:      \
    return #name;
    ROCKDOC_CODE_NAME(Ok)
    ROCKDOC_CODE_NAME(InternalError)
    ROCKDOC_CODE_NAME(BadValue)
    ROCKDOC_CODE_NAME(NoSuchKey)
    ROCKDOC_CODE_NAME(UnknownError)
    ROCKDOC_CODE_NAME(FailedToParse)
    ROCKDOC_CODE_NAME(UnsupportedFormat)
    ROCKDOC_CODE_NAME(TypeMismatch)
    ROCKDOC_CODE_NAME(Overflow)
    ROCKDOC_CODE_NAME(InvalidLength)
    ROCKDOC_CODE_NAME(ProtocolError)
    ROCKDOC_CODE_NAME(AuthenticationFailed)
    ROCKDOC_CODE_NAME(IllegalOperation)
    ROCKDOC_CODE_NAME(InvalidBSON)
    ROCKDOC_CODE_NAME(AlreadyInitialized)
    ROCKDOC_CODE_NAME(LockTimeout)
    ROCKDOC_CODE_NAME(NamespaceNotFound)
    ROCKDOC_CODE_NAME(IndexNotFound)
    ROCKDOC_CODE_NAME(PathNotViable)
    ROCKDOC_CODE_NAME(NonExistentPath)
    ROCKDOC_CODE_NAME(InvalidPath)
    ROCKDOC_CODE_NAME(CannotBackfillArray)
    ROCKDOC_CODE_NAME(FileNotOpen)
    ROCKDOC_CODE_NAME(ConflictingUpdateOperators)
    ROCKDOC_CODE_NAME(CursorNotFound)
    ROCKDOC_CODE_NAME(LockBusy)
    ROCKDOC_CODE_NAME(NoMatchingDocument)
    ROCKDOC_CODE_NAME(NamespaceExists)
    ROCKDOC_CODE_NAME(GraphContainsCycle)
    ROCKDOC_CODE_NAME(ViewDepthLimitExceeded)
    ROCKDOC_CODE_NAME(CommandNotSupportedOnView)
    ROCKDOC_CODE_NAME(OptionNotSupportedOnView)
    ROCKDOC_CODE_NAME(InvalidPipelineOperator)
    ROCKDOC_CODE_NAME(MaxTimeMSExpired)
    ROCKDOC_CODE_NAME(CommandNotFound)
    ROCKDOC_CODE_NAME(Unauthorized)
    ROCKDOC_CODE_NAME(DollarPrefixedFieldName)
    ROCKDOC_CODE_NAME(InvalidIdField)
    ROCKDOC_CODE_NAME(NotSingleValueField)
    ROCKDOC_CODE_NAME(InvalidDBRef)
    ROCKDOC_CODE_NAME(EmptyFieldName)
    ROCKDOC_CODE_NAME(DottedFieldName)
    ROCKDOC_CODE_NAME(NotExactValueField)
    ROCKDOC_CODE_NAME(ImmutableField)
    ROCKDOC_CODE_NAME(CannotCreateIndex)
    ROCKDOC_CODE_NAME(IndexAlreadyExists)
    ROCKDOC_CODE_NAME(InvalidOptions)
    ROCKDOC_CODE_NAME(InvalidNamespace)
    ROCKDOC_CODE_NAME(NoReplicationEnabled)
    ROCKDOC_CODE_NAME(IndexOptionsConflict)
    ROCKDOC_CODE_NAME(IndexKeySpecsConflict)
    ROCKDOC_CODE_NAME(OperationFailed)
    ROCKDOC_CODE_NAME(DBPathInUse)
    ROCKDOC_CODE_NAME(WriteConflict)
    ROCKDOC_CODE_NAME(DocumentValidationFailure)
    ROCKDOC_CODE_NAME(CommandNotSupported)
    ROCKDOC_CODE_NAME(JSInterpreterFailure)
    ROCKDOC_CODE_NAME(ExceededMemoryLimit)
    ROCKDOC_CODE_NAME(QueryPlanKilled)
    ROCKDOC_CODE_NAME(NoSuchTransaction)
    ROCKDOC_CODE_NAME(ChangeStreamFatalError)
    ROCKDOC_CODE_NAME(InvalidResumeToken)
    ROCKDOC_CODE_NAME(ChangeStreamHistoryLost)
    ROCKDOC_CODE_NAME(TooManyLogicalSessions)
    ROCKDOC_CODE_NAME(OperationNotSupportedInTransaction)
    ROCKDOC_CODE_NAME(TransactionExceededLifetimeLimitSeconds)
    ROCKDOC_CODE_NAME(CannotIndexParallelArrays)
    ROCKDOC_CODE_NAME(AmbiguousIndexKeyPattern)
    ROCKDOC_CODE_NAME(InvalidIndexSpecificationOption)
    ROCKDOC_CODE_NAME(CannotBuildIndexKeys)
    ROCKDOC_CODE_NAME(NotImplemented)
    ROCKDOC_CODE_NAME(SnapshotTooOld)
    ROCKDOC_CODE_NAME(CappedPositionLost)
    ROCKDOC_CODE_NAME(NoQueryExecutionPlans)
    ROCKDOC_CODE_NAME(QueryExceededMemoryLimitNoDiskUseAllowed)
    ROCKDOC_CODE_NAME(DataCorruptionDetected)
    ROCKDOC_CODE_NAME(UnsupportedOpQueryCommand)
    ROCKDOC_CODE_NAME(APIVersionError)
    ROCKDOC_CODE_NAME(APIStrictError)
    ROCKDOC_CODE_NAME(MechanismUnavailable)
    ROCKDOC_CODE_NAME(UserNotFound)
    ROCKDOC_CODE_NAME(DuplicateKey)
    ROCKDOC_CODE_NAME(Interrupted)
    ROCKDOC_CODE_NAME(BSONObjectTooLarge)
    ROCKDOC_CODE_NAME(OutOfDiskSpace)
#undef ROCKDOC_CODE_NAME
    case ErrorCode::kUpdateResultTooLarge:
    case ErrorCode::kUnknownBsonField:
      break;
  }
  return "Location" + std::to_string(static_cast<int32_t>(code));
}

Status::Status(ErrorCode code, std::string message) {
  if (code == ErrorCode::kOk) return;
  // Messages quote what callers sent (a namespace, a field name), and are
  // put into BSON strings (errmsg), which must be UTF-8.
  if (!IsValidUtf8(message)) message = ToValidUtf8(message);
  rep_ = std::make_shared<const Rep>(Rep{code, std::move(message), {}, {}, {}});
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out = code_name();
  out += " (";
  out += std::to_string(code_number());
  out += "): ";
  out += rep_->message;
  return out;
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return *this;
  std::string msg = ToValidUtf8(prefix);
  msg += ": ";
  msg += rep_->message;
  // Labels, errInfo and the extra fields stay with the error.
  Rep rep = *rep_;
  rep.message = std::move(msg);
  return FromRep(std::move(rep));
}

const std::vector<std::string>& Status::error_labels() const {
  static const std::vector<std::string> kNone;
  return rep_ ? rep_->labels : kNone;
}

bool Status::HasErrorLabel(std::string_view label) const {
  for (const std::string& l : error_labels()) {
    if (l == label) return true;
  }
  return false;
}

Status Status::FromRep(Rep rep) {
  Status out;
  out.rep_ = std::make_shared<const Rep>(std::move(rep));
  return out;
}

Status Status::WithErrorLabel(std::string_view label) const {
  if (ok() || HasErrorLabel(label)) return *this;
  Rep rep = *rep_;
  rep.labels.emplace_back(label);
  return FromRep(std::move(rep));
}

Status Status::WithErrorInfo(std::string bson) const {
  if (ok()) return *this;
  Rep rep = *rep_;
  rep.info = std::move(bson);
  return FromRep(std::move(rep));
}

Status Status::WithExtraInfo(std::string bson) const {
  if (ok()) return *this;
  Rep rep = *rep_;
  rep.extra = std::move(bson);
  return FromRep(std::move(rep));
}

std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

Status InternalError(std::string message) {
  return Status(ErrorCode::kInternalError, std::move(message));
}
Status BadValue(std::string message) { return Status(ErrorCode::kBadValue, std::move(message)); }
Status FailedToParse(std::string message) {
  return Status(ErrorCode::kFailedToParse, std::move(message));
}
Status TypeMismatch(std::string message) {
  return Status(ErrorCode::kTypeMismatch, std::move(message));
}
Status InvalidBSON(std::string message) {
  return Status(ErrorCode::kInvalidBSON, std::move(message));
}
Status NotImplemented(std::string message) {
  return Status(ErrorCode::kNotImplemented, std::move(message));
}

namespace internal {
void DieOnBadStatusOrAccess(const Status& status) {
  std::fprintf(stderr, "rockdoc: value() called on an error StatusOr: %s\n",
               status.ToString().c_str());
  std::abort();
}
void CheckFailed(const char* file, int line, const char* condition) {
  std::fprintf(stderr, "rockdoc: check failed at %s:%d: %s\n", file, line, condition);
  std::abort();
}
}  // namespace internal

}  // namespace rockdoc
