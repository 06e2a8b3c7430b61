// command/fields.cc: decoding of command fields (command/command.h).
#include <cmath>
#include <cstdint>
#include <limits>

#include "catalog/catalog.h"
#include "command/command.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

Status WrongType(const Element& e, std::string_view expected) {
  return Status(ErrorCode::kTypeMismatch,
                "BSON field '" + std::string(e.key()) + "' is the wrong type '" +
                    std::string(BsonTypeAlias(e.type())) + "', expected " + std::string(expected));
}

// MongoDB's integer parsing (BSONElement::parseIntegerElementToLong): any
// number type whose value is an exact int64, so NumberLong(1) and 1 are the
// same, and 1e300 or 1.5 are FailedToParse rather than a double cast out of
// range.
StatusOr<int64_t> IntegerField(const Element& e) {
  if (!e.IsNumber()) return WrongType(e, "types '[long, int, decimal, double]'");
  int64_t v = 0;
  if (e.ExactInt64(&v)) return v;
  const std::string shown = std::string(e.key()) + ": " + ValueToJson(e, JsonFormat::kShell);
  const double d = e.NumberAsDouble();
  if (std::isnan(d)) {
    return Status(ErrorCode::kFailedToParse, "Expected an integer, but found NaN in: " + shown);
  }
  // A fractional double in range is "not an integer"; anything else (out of
  // range, infinite, a fractional decimal) "cannot be represented".
  if (e.type() == BsonType::kDouble && std::abs(d) < 9223372036854775808.0) {
    return Status(ErrorCode::kFailedToParse, "Expected an integer: " + shown);
  }
  return Status(ErrorCode::kFailedToParse, "Cannot represent as a 64-bit integer: " + shown);
}

StatusOr<bool> BoolField(const Element& e) {
  if (e.IsBool()) return e.Bool();
  if (e.IsNumber()) return e.NumberAsDouble() != 0;
  return WrongType(e, "types '[bool, long, int, decimal, double]'");
}

namespace {

// Every member of one node has the majority's data: local, available and
// majority read the same committed state; snapshot reads one point in time
// (the dispatcher allows it where MongoDB does: ApplyReadConcern);
// linearizable promises more, and is not implemented.
Status CheckLevel(std::string_view level) {
  if (level == "local" || level == "available" || level == "majority" || level == "snapshot") {
    return Status::OK();
  }
  if (level == "linearizable") {
    return Status(ErrorCode::kNotImplemented,
                  "readConcern level '" + std::string(level) + "' is not supported by rockdoc");
  }
  return Status(ErrorCode::kFailedToParse,
                "readConcern level must be one of local, majority, linearizable, available, "
                "snapshot; found '" +
                    std::string(level) + "'");
}

}  // namespace

Status CheckReadConcern(const Element& e) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  for (Element f : e.Document()) {
    if (f.key() == "level") {
      if (!f.IsString()) return WrongType(f, "type 'string'");
      ROCKDOC_RETURN_IF_ERROR(CheckLevel(f.String()));
    } else if (f.key() == "afterClusterTime" || f.key() == "atClusterTime" ||
               f.key() == "afterOpTime") {
      return Status(ErrorCode::kNotImplemented,
                    "readConcern." + std::string(f.key()) + " is not supported by rockdoc");
    } else {
      return Status(ErrorCode::kUnknownBsonField,
                    "BSON field 'readConcern." + std::string(f.key()) + "' is an unknown field.");
    }
  }
  return Status::OK();
}

// Every write is acknowledged once committed on the one node there is:
// w: 1 and w: "majority" are met. j: true (and fsync: true, which means the
// same to mongod with a journal) is met by syncing the write-ahead log before
// the reply (RunOne, WantsJournal). w: 0 (no acknowledgement), w > 1 or a
// tag (no other members) are not.
Status CheckWriteConcern(const Element& e) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  auto refuse = [](const std::string& what) {
    return Status(ErrorCode::kNotImplemented,
                  "writeConcern " + what + " is not supported by rockdoc");
  };
  for (Element f : e.Document()) {
    if (f.key() == "w") {
      int64_t n = 0;
      const bool ok =
          f.IsString() ? f.String() == "majority" : f.IsNumber() && f.ExactInt64(&n) && n == 1;
      if (!ok) {
        return refuse("w: " + ValueToJson(f, JsonFormat::kShell) +
                      " (a single embedded node acknowledges w: 1 and w: 'majority' only)");
      }
    } else if (f.key() == "j" || f.key() == "fsync") {
      ROCKDOC_RETURN_IF_ERROR(BoolField(f).status());
    } else if (f.key() == "wtimeout" || f.key() == "wtimeoutMS") {
      if (!f.IsNumber()) return WrongType(f, "types '[long, int, decimal, double]'");
    } else if (f.key() == "provenance") {
      if (!f.IsString()) return WrongType(f, "type 'string'");
    } else {
      return Status(ErrorCode::kUnknownBsonField,
                    "BSON field 'writeConcern." + std::string(f.key()) + "' is an unknown field.");
    }
  }
  return Status::OK();
}

bool JournalRequested(const Element& write_concern) {
  if (!write_concern.IsDocument()) return false;
  for (const char* name : {"j", "fsync"}) {
    StatusOr<bool> on = BoolField(write_concern.Document().Get(name));
    if (on.ok() && *on) return true;
  }
  return false;
}

bool WantsJournal(DocumentView cmd) { return JournalRequested(cmd.Get("writeConcern")); }

Status CheckApiVersion(const Element& e) {
  if (!e.IsString()) return WrongType(e, "type 'string'");
  if (e.String() != "1") {
    return Status(ErrorCode::kAPIVersionError, "API version must be \"1\"");
  }
  return Status::OK();
}

Status CheckMaxTimeMSField(const Element& e) {
  ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, IntegerField(e));
  if (ms < 0 || ms > std::numeric_limits<int32_t>::max()) {
    return Status(ErrorCode::kBadValue,
                  std::string(e.key()) + " value must be within the range [0, 2147483647]");
  }
  return Status::OK();
}

Status CheckAllowDiskUse(const Element& e) {
  ROCKDOC_ASSIGN_OR_RETURN(bool on, BoolField(e));
  if (!on) return Status::OK();
  return Status(ErrorCode::kNotImplemented,
                "allowDiskUse: true is not supported by rockdoc (a blocking sort is held in "
                "memory, at most 100 MB)");
}

namespace {
struct NoArgs {};
constexpr OptionField<NoArgs> kGeneric[] = {ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
}  // namespace

bool IsGenericCommandField(std::string_view key) {
  for (const auto& row : kGeneric) {
    if (row.name == key) return true;
  }
  return false;
}

Status DecodeNoFields(std::string_view command, DocumentView cmd) {
  // The fields after the command's own (its value is the caller's to read).
  BsonBuilder rest;
  bool first = true;
  for (Element e : cmd) {
    if (!first) rest.AppendElement(e);
    first = false;
  }
  NoArgs args;
  return DecodeCommand(command, std::move(rest).Build(), kGeneric, &args);
}

StatusOr<std::unique_ptr<MatchExpression>> ListFilter(const Document& filter) {
  if (filter.empty()) return std::unique_ptr<MatchExpression>();
  return ParseMatchExpression(filter);
}

StatusOr<std::string> CollectionName(std::string_view command, const Element& e) {
  if (!e.IsString()) {
    return Status(ErrorCode::kInvalidNamespace,
                  "collection name has invalid type " + std::string(BsonTypeAlias(e.type())));
  }
  if (e.String().empty()) {
    return Status(ErrorCode::kInvalidNamespace,
                  "Invalid namespace specified for " + std::string(command));
  }
  return std::string(e.String());
}

void AppendErrorDetails(const Status& s, BsonBuilder* b) {
  if (!s.extra_info().empty()) {
    for (Element e : DocumentView(reinterpret_cast<const uint8_t*>(s.extra_info().data()))) {
      b->AppendElement(e);
    }
  }
  if (!s.error_info().empty()) {
    b->AppendDocument("errInfo", Document::AdoptValidated(std::string(s.error_info())).view());
  }
}

Status QualifyFieldError(std::string_view command, Status s) {
  static constexpr std::string_view kPrefix = "BSON field '";
  if (s.ok()) return s;
  std::string_view message = s.message();
  if (!message.starts_with(kPrefix)) return s;
  std::string qualified(command);
  qualified += '.';
  if (message.substr(kPrefix.size()).starts_with(qualified)) return s;
  std::string out(kPrefix);
  out += qualified;
  out += message.substr(kPrefix.size());
  return Status(s.code(), std::move(out));
}

}  // namespace rockdoc::internal
