// rockdoc/status.h: errors as values.
//
// Every fallible rockdoc call returns a `Status` or a `StatusOr<T>`. A Status
// carries one of MongoDB's numeric error codes (the same numbers and names the
// server reports, so `e.code === 11000` means what it does against MongoDB) and
// a human-readable message. No exception crosses the public API.
//
// Thread safety: Status and StatusOr are values; distinct objects may be used
// from different threads freely, one object needs external synchronisation.
//
// Example:
//   rockdoc::StatusOr<rockdoc::Document> doc = rockdoc::FromJson("{\"a\": 1}");
//   if (!doc.ok()) {
//     std::cerr << doc.status().ToString() << "\n";  // "FailedToParse (9): ..."
//   }
#ifndef ROCKDOC_STATUS_H_
#define ROCKDOC_STATUS_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "rockdoc/export.h"
namespace rockdoc {

// MongoDB's error codes (src/mongo/base/error_codes.yml). These numbers are
// part of the user-visible contract: do not change them. Codes without a name
// in MongoDB (raised at a single place) print as "Location<code>".
enum class ErrorCode : int32_t {
  kOk = 0,
  kInternalError = 1,
  kBadValue = 2,
  kNoSuchKey = 4,
  kUnknownError = 8,
  kFailedToParse = 9,
  kUnsupportedFormat = 12,
  kUserNotFound = 11,
  kUnauthorized = 13,
  kTypeMismatch = 14,
  kOverflow = 15,
  kInvalidLength = 16,
  kProtocolError = 17,
  kAuthenticationFailed = 18,
  kIllegalOperation = 20,
  kInvalidBSON = 22,
  kAlreadyInitialized = 23,
  kLockTimeout = 24,
  kNamespaceNotFound = 26,
  kIndexNotFound = 27,
  kPathNotViable = 28,
  kNonExistentPath = 29,
  kInvalidPath = 30,
  kCannotBackfillArray = 34,
  kFileNotOpen = 38,
  kConflictingUpdateOperators = 40,
  kCursorNotFound = 43,
  kLockBusy = 46,
  kNoMatchingDocument = 47,
  kNamespaceExists = 48,
  kMaxTimeMSExpired = 50,
  kDollarPrefixedFieldName = 52,
  kInvalidIdField = 53,
  kNotSingleValueField = 54,
  kInvalidDBRef = 55,
  kEmptyFieldName = 56,
  kDottedFieldName = 57,
  kCommandNotFound = 59,
  kNotExactValueField = 63,
  kImmutableField = 66,
  kCannotCreateIndex = 67,
  kIndexAlreadyExists = 68,
  kInvalidOptions = 72,
  kInvalidNamespace = 73,
  kNoReplicationEnabled = 76,
  kIndexOptionsConflict = 85,
  kIndexKeySpecsConflict = 86,
  kGraphContainsCycle = 93,
  kOperationFailed = 96,
  kDBPathInUse = 98,
  kWriteConflict = 112,
  kDocumentValidationFailure = 121,
  kCommandNotSupported = 115,
  kCappedPositionLost = 136,
  kJSInterpreterFailure = 139,
  kExceededMemoryLimit = 146,
  kQueryPlanKilled = 175,
  kViewDepthLimitExceeded = 165,
  kCommandNotSupportedOnView = 166,
  kOptionNotSupportedOnView = 167,
  kInvalidPipelineOperator = 168,
  kCannotIndexParallelArrays = 171,
  kAmbiguousIndexKeyPattern = 172,
  kInvalidIndexSpecificationOption = 197,
  kCannotBuildIndexKeys = 201,
  kNotImplemented = 238,
  kSnapshotTooOld = 239,
  kNoSuchTransaction = 251,
  kInvalidResumeToken = 260,
  kTooManyLogicalSessions = 261,
  kOperationNotSupportedInTransaction = 263,
  kChangeStreamFatalError = 280,
  kChangeStreamHistoryLost = 286,
  kTransactionExceededLifetimeLimitSeconds = 290,
  kNoQueryExecutionPlans = 291,
  kQueryExceededMemoryLimitNoDiskUseAllowed = 292,
  kDataCorruptionDetected = 296,
  kAPIVersionError = 322,  // an apiVersion other than "1"
  kAPIStrictError = 323,   // apiStrict: true and a command outside API Version 1
  kMechanismUnavailable = 334,
  kUnsupportedOpQueryCommand = 352,
  kDuplicateKey = 11000,
  kInterrupted = 11601,
  kBSONObjectTooLarge = 10334,
  kOutOfDiskSpace = 14031,
  // Location codes: MongoDB raises these at one place each, with no name.
  kUpdateResultTooLarge = 17419,  // "Resulting document after update is larger than ..."
  kUnknownBsonField = 40415,      // "BSON field 'create.x' is an unknown field."
};

// The name MongoDB reports as `codeName` ("BadValue", "DuplicateKey",
// "Location17419" for unnamed codes).
ROCKDOC_EXPORT std::string ErrorCodeName(ErrorCode code);

// Status: success, or an error code with a message.
class [[nodiscard]] ROCKDOC_EXPORT Status {
 public:
  // An OK status.
  Status() = default;
  Status(ErrorCode code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  ErrorCode code() const { return rep_ ? rep_->code : ErrorCode::kOk; }
  int32_t code_number() const { return static_cast<int32_t>(code()); }
  std::string code_name() const { return ErrorCodeName(code()); }
  // The message alone ("" for OK): always valid UTF-8 (bytes of what a
  // caller quoted that are not become '?'), as a BSON string must be.
  std::string_view message() const {
    return rep_ ? std::string_view(rep_->message) : std::string_view();
  }
  // "OK", or "<CodeName> (<code>): <message>".
  std::string ToString() const;

  // Returns a copy whose message is `prefix + ": " + message()`.
  Status WithContext(std::string_view prefix) const;

  // MongoDB's error labels ("TransientTransactionError",
  // "UnknownTransactionCommitResult"): what a caller may do about the error.
  const std::vector<std::string>& error_labels() const;
  bool HasErrorLabel(std::string_view label) const;
  // A copy with `label` added (once). Labels do not take part in ==.
  Status WithErrorLabel(std::string_view label) const;

  // MongoDB's `errInfo`: a BSON document with the error's details (a
  // DocumentValidationFailure's failingDocumentId and details), as its raw
  // bytes; empty when there is none. Not part of ==.
  std::string_view error_info() const {
    return rep_ ? std::string_view(rep_->info) : std::string_view();
  }
  // A copy carrying `bson` (a valid BSON document) as its errInfo.
  Status WithErrorInfo(std::string bson) const;

  // MongoDB's ErrorExtraInfo: fields an error carries beside its code and
  // message, at the top level of the error document (a command's error
  // reply, a write error), as the raw bytes of a BSON document whose fields
  // they are; empty when there are none. A DuplicateKey's are
  // {keyPattern: {a: 1}, keyValue: {a: 5}} (MongoDB 4.4+), which drivers
  // and ORMs read. Not part of ==.
  std::string_view extra_info() const {
    return rep_ ? std::string_view(rep_->extra) : std::string_view();
  }
  // A copy carrying `bson` (a valid BSON document) as its extra fields.
  Status WithExtraInfo(std::string bson) const;

  // Marks a status as deliberately ignored. Searchable.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }
  friend bool operator!=(const Status& a, const Status& b) { return !(a == b); }

 private:
  struct Rep {
    ErrorCode code;
    std::string message;
    std::vector<std::string> labels;
    std::string info;
    std::string extra;
  };
  // A status with `rep` (a changed copy of this one's).
  static Status FromRep(Rep rep);
  // Shared so copies are cheap; never mutated after construction.
  std::shared_ptr<const Rep> rep_;
};

ROCKDOC_EXPORT std::ostream& operator<<(std::ostream& os, const Status& s);

// Factory functions, one per frequently used code.
ROCKDOC_EXPORT Status InternalError(std::string message);
ROCKDOC_EXPORT Status BadValue(std::string message);
ROCKDOC_EXPORT Status FailedToParse(std::string message);
ROCKDOC_EXPORT Status TypeMismatch(std::string message);
ROCKDOC_EXPORT Status InvalidBSON(std::string message);
ROCKDOC_EXPORT Status NotImplemented(std::string message);

// StatusOr<T>: a T, or a non-OK Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // Constructing from an OK status is a programmer error; it becomes an
  // InternalError so that it is never mistaken for a value.
  StatusOr(Status status) : rep_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(rep_).ok()) {
      rep_ = Status(ErrorCode::kInternalError, "StatusOr constructed from OK status");
    }
  }
  StatusOr(const T& value) : rep_(value) {}        // NOLINT
  StatusOr(T&& value) : rep_(std::move(value)) {}  // NOLINT
  template <typename U,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, T> &&
                                        !std::is_same_v<std::decay_t<U>, Status>>>
  StatusOr(U&& value) : rep_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(rep_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status::OK() : std::get<Status>(rep_); }

  // Access the value. Calling these on an error aborts with the status.
  const T& value() const& {
    CheckValue();
    return std::get<T>(rep_);
  }
  T& value() & {
    CheckValue();
    return std::get<T>(rep_);
  }
  T&& value() && {
    CheckValue();
    return std::get<T>(std::move(rep_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<T>(rep_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void CheckValue() const;
  std::variant<Status, T> rep_;
};

namespace internal {
[[noreturn]] ROCKDOC_EXPORT void DieOnBadStatusOrAccess(const Status& status);
}  // namespace internal

template <typename T>
void StatusOr<T>::CheckValue() const {
  if (!ok()) internal::DieOnBadStatusOrAccess(std::get<Status>(rep_));
}

}  // namespace rockdoc

#define ROCKDOC_STATUS_CONCAT_INNER_(a, b) a##b
#define ROCKDOC_STATUS_CONCAT_(a, b) ROCKDOC_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define ROCKDOC_RETURN_IF_ERROR(expr)                       \
  do {                                                      \
    ::rockdoc::Status rockdoc_status_tmp_ = (expr);         \
    if (!rockdoc_status_tmp_.ok()) return rockdoc_status_tmp_; \
  } while (0)

// `ROCKDOC_ASSIGN_OR_RETURN(auto x, MakeX());` declares/assigns from a
// StatusOr, returning its status from the enclosing function on error.
#define ROCKDOC_ASSIGN_OR_RETURN(lhs, rexpr)                                       \
  ROCKDOC_ASSIGN_OR_RETURN_IMPL_(ROCKDOC_STATUS_CONCAT_(rockdoc_statusor_, __LINE__), \
                                 lhs, rexpr)
#define ROCKDOC_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return statusor.status();             \
  lhs = std::move(statusor).value()

#endif  // ROCKDOC_STATUS_H_
