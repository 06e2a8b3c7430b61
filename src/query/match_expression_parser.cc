// Parsing of filter documents into MatchExpression trees, with MongoDB's
// error codes and messages (mongo/db/matcher/expression_parser.cpp is the
// reference for which input fails how).
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "query/match_expression.h"
#include "query/geo_match_expression.h"
#include "query/expr_match_expression.h"
#include "query/json_schema.h"
#include "rockdoc/json.h"

namespace rockdoc {

namespace {

using ExprPtr = std::unique_ptr<MatchExpression>;
using ExprList = std::vector<ExprPtr>;

// Where the parser is: at the user's filter, or inside an object-form
// $elemMatch (whose filter applies to array elements, not whole documents).
enum class Level { kTop, kSubDocument };

// Operators that take a path ({path: {$op: ...}}).
enum class PathOp {
  kEq, kNe, kGt, kGte, kLt, kLte, kIn, kNin, kExists, kType, kSize, kAll,
  kElemMatch, kRegex, kOptions, kMod, kBitsAllSet, kBitsAllClear, kBitsAnySet, kBitsAnyClear,
  kGeoWithin, kGeoIntersects, kNear, kNearDistance, kNotSupported,
};

std::optional<PathOp> LookupPathOp(std::string_view name) {
  static const auto* const kOps = new std::unordered_map<std::string_view, PathOp>{
      {"$eq", PathOp::kEq},         {"$ne", PathOp::kNe},
      {"$gt", PathOp::kGt},         {"$gte", PathOp::kGte},
      {"$lt", PathOp::kLt},         {"$lte", PathOp::kLte},
      {"$in", PathOp::kIn},         {"$nin", PathOp::kNin},
      {"$exists", PathOp::kExists}, {"$type", PathOp::kType},
      {"$size", PathOp::kSize},     {"$all", PathOp::kAll},
      {"$elemMatch", PathOp::kElemMatch}, {"$regex", PathOp::kRegex},
      {"$options", PathOp::kOptions},     {"$mod", PathOp::kMod},
      {"$bitsAllSet", PathOp::kBitsAllSet},     {"$bitsAllClear", PathOp::kBitsAllClear},
      {"$bitsAnySet", PathOp::kBitsAnySet},     {"$bitsAnyClear", PathOp::kBitsAnyClear},
      // Geospatial (query/geo_match_expression.h); $within is $geoWithin's
      // old name.
      {"$geoIntersects", PathOp::kGeoIntersects}, {"$geoWithin", PathOp::kGeoWithin},
      {"$within", PathOp::kGeoWithin},
      {"$near", PathOp::kNear},         {"$nearSphere", PathOp::kNear},
      {"$maxDistance", PathOp::kNearDistance}, {"$minDistance", PathOp::kNearDistance},
      // Real MongoDB operators rockdoc does not implement.
      {"$geoNear", PathOp::kNotSupported},
  };
  auto it = kOps->find(name);
  if (it == kOps->end()) return std::nullopt;
  return it->second;
}

// Operators that stand where a field name would ({$or: [...]}).
bool IsPathlessOperator(std::string_view name) {
  static const char* const kNames[] = {"$and", "$or", "$nor", "$comment", "$alwaysTrue",
                                       "$alwaysFalse", "$expr", "$where", "$text",
                                       "$jsonSchema", "$sampleRate", "$id", "$ref", "$db"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

bool IsNaNNumber(const Element& e) {
  if (e.type() == BsonType::kDouble) return std::isnan(e.Double());
  if (e.type() == BsonType::kDecimal128) return e.Decimal().IsNaN();
  return false;
}

Status Bad(std::string message) { return Status(ErrorCode::kBadValue, std::move(message)); }

std::string ElementToString(const Element& e) {
  return std::string(e.key()) + ": " + ValueToJson(e, JsonFormat::kShell);
}

// {$ref: ..., $id: ...} (or any of $ref/$id/$db when `allow_incomplete`) is
// a DBRef value to compare, not an operator document.
bool IsDbRefDocument(DocumentView obj, bool allow_incomplete) {
  bool has_ref = false, has_id = false, has_db = false;
  for (const Element& e : obj) {
    std::string_view k = e.key();
    if (k == "$ref") has_ref = true;
    else if (k == "$id") has_id = true;
    else if (k == "$db") has_db = true;
  }
  return allow_incomplete ? (has_ref || has_id || has_db) : (has_ref && has_id);
}

// {$gt: 1} is an operator document; {x: 1}, {} and DBRefs are values.
bool IsExpressionDocument(const Element& e, bool allow_incomplete_dbref) {
  if (e.type() != BsonType::kDocument) return false;
  DocumentView obj = e.Document();
  if (obj.empty()) return false;
  std::string_view first = (*obj.begin()).key();
  if (first.empty() || first[0] != '$') return false;
  return !IsDbRefDocument(obj, allow_incomplete_dbref);
}

class Parser {
 public:
  explicit Parser(std::shared_ptr<FilterVariables> variables = nullptr)
      : variables_(std::move(variables)) {}
  StatusOr<ExprPtr> ParseDocument(DocumentView obj, Level level);

 private:
  std::shared_ptr<FilterVariables> variables_;
  Status ParseField(const Element& e, Level level, ExprList* out);
  StatusOr<ExprPtr> ParseTopLevelOperator(const Element& e, Level level);
  Status ParseSub(const std::string& path, DocumentView sub, Level level, ExprList* out);
  StatusOr<ExprPtr> ParseSubField(DocumentView context, const std::string& path,
                                  const Element& e, Level level);
  StatusOr<ExprPtr> ParseComparison(MatchType type, const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseIn(const std::string& path, const Element& e, bool negate);
  StatusOr<ExprPtr> ParseType(const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseSize(const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseMod(const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseBitTest(MatchType type, const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseRegexDocument(const std::string& path, DocumentView context);
  StatusOr<ExprPtr> ParseElemMatch(const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseAll(const std::string& path, const Element& e);
  StatusOr<ExprPtr> ParseNot(const std::string& path, const Element& e, Level level);
  StatusOr<ExprPtr> ParseTree(MatchType type, const Element& e, Level level);
};

ExprPtr MakeAndOrSingle(ExprList children) {
  if (children.size() == 1) return std::move(children[0]);
  return std::make_unique<ListOfMatchExpression>(MatchType::kAnd, std::move(children));
}

StatusOr<ExprPtr> Parser::ParseDocument(DocumentView obj, Level level) {
  ExprList children;
  for (const Element& e : obj) {
    ROCKDOC_RETURN_IF_ERROR(ParseField(e, level, &children));
  }
  return MakeAndOrSingle(std::move(children));
}

Status Parser::ParseField(const Element& e, Level level, ExprList* out) {
  std::string_view name = e.key();
  if (!name.empty() && name[0] == '$') {
    if (!IsPathlessOperator(name)) {
      return Bad("unknown top level operator: " + std::string(name) +
                 (name == "$not" ? ". If you are trying to negate an entire expression, use $nor."
                                 : ". If you have a field name that starts with a '$' symbol, "
                                   "consider using $getField or $setField."));
    }
    ROCKDOC_ASSIGN_OR_RETURN(ExprPtr expr, ParseTopLevelOperator(e, level));
    if (expr) out->push_back(std::move(expr));  // null: $comment
    return Status::OK();
  }
  // As MongoDB: a path may not be deeper than documents can nest.
  size_t parts = 1;
  for (char c : name) parts += c == '.';
  if (parts > static_cast<size_t>(kMaxNestingDepth)) {
    return Status(static_cast<ErrorCode>(5729100), "FieldPath is too long");
  }
  std::string path(name);
  if (IsExpressionDocument(e, false)) return ParseSub(path, e.Document(), level, out);
  if (e.type() == BsonType::kRegex) {
    RegexView r = e.Regex();
    ROCKDOC_ASSIGN_OR_RETURN(auto regex, Regex::Compile(r.pattern, r.options));
    out->push_back(std::make_unique<RegexMatchExpression>(path, std::move(regex)));
    return Status::OK();
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExprPtr eq, ParseComparison(MatchType::kEq, path, e));
  out->push_back(std::move(eq));
  return Status::OK();
}

StatusOr<ExprPtr> Parser::ParseTopLevelOperator(const Element& e, Level level) {
  std::string_view name = e.key();
  if (name == "$and") return ParseTree(MatchType::kAnd, e, level);
  if (name == "$or") return ParseTree(MatchType::kOr, e, level);
  if (name == "$nor") return ParseTree(MatchType::kNor, e, level);
  if (name == "$comment") return ExprPtr();
  if (name == "$alwaysTrue" || name == "$alwaysFalse") {
    int64_t v = 0;
    if (!e.ExactInt64(&v) || v != 1) {
      return Status(ErrorCode::kFailedToParse,
                    std::string(name) + " must be an integer value of 1");
    }
    return ExprPtr(std::make_unique<AlwaysBooleanMatchExpression>(name == "$alwaysTrue"));
  }
  if (name == "$jsonSchema") return JsonSchemaMatchExpression::Parse(e);
  if (name == "$id" || name == "$ref" || name == "$db") {
    // Fields of a DBRef queried directly ({$ref: "c", $id: 1}).
    return ParseComparison(MatchType::kEq, std::string(name), e);
  }
  if (level == Level::kSubDocument && (name == "$where" || name == "$text" || name == "$expr")) {
    return Bad(std::string(name) + " can only be applied to the top-level document");
  }
  if (name == "$expr") return ExprMatchExpression::Parse(e, variables_);
  if (name == "$text") return TextMatchExpression::Parse(e);
  return Status(ErrorCode::kNotImplemented, std::string(name) + " is not supported by rockdoc");
}

StatusOr<ExprPtr> Parser::ParseTree(MatchType type, const Element& e, Level level) {
  if (e.type() != BsonType::kArray) {
    return Bad(std::string(MatchTypeName(type)) + " must be an array");
  }
  DocumentView arr = e.Array();
  if (arr.empty()) return Bad("$and/$or/$nor must be a nonempty array");
  ExprList children;
  for (const Element& sub : arr) {
    if (sub.type() != BsonType::kDocument) {
      return Bad("$or/$and/$nor entries need to be full objects");
    }
    ROCKDOC_ASSIGN_OR_RETURN(ExprPtr child, ParseDocument(sub.Document(), level));
    children.push_back(std::move(child));
  }
  // As MongoDB's optimizer: a one-clause $and or $or is its clause, so that
  // the positional `$` (projection and update), upserts and the planner see
  // {$or: [{"a.x": 4}]} exactly as {"a.x": 4}. ($nor of one is a negation.)
  if (type != MatchType::kNor && children.size() == 1) return std::move(children[0]);
  return ExprPtr(std::make_unique<ListOfMatchExpression>(type, std::move(children)));
}

Status Parser::ParseSub(const std::string& path, DocumentView sub, Level level, ExprList* out) {
  for (const Element& e : sub) {
    ROCKDOC_ASSIGN_OR_RETURN(ExprPtr expr, ParseSubField(sub, path, e, level));
    if (expr) out->push_back(std::move(expr));  // null: $options beside its $regex
  }
  return Status::OK();
}

StatusOr<ExprPtr> Parser::ParseSubField(DocumentView context, const std::string& path,
                                        const Element& e, Level level) {
  std::string_view name = e.key();
  if (name == "$not") return ParseNot(path, e, level);
  std::optional<PathOp> op = LookupPathOp(name);
  if (!op) {
    if (name == "$where") return Bad("$where cannot be applied to a field");
    return Bad("unknown operator: " + std::string(name));
  }
  switch (*op) {
    case PathOp::kEq: return ParseComparison(MatchType::kEq, path, e);
    case PathOp::kLt: return ParseComparison(MatchType::kLt, path, e);
    case PathOp::kLte: return ParseComparison(MatchType::kLte, path, e);
    case PathOp::kGt: return ParseComparison(MatchType::kGt, path, e);
    case PathOp::kGte: return ParseComparison(MatchType::kGte, path, e);
    case PathOp::kNe: {
      // $ne is not($eq), but MongoDB refuses a regex here (SERVER-1705).
      if (e.type() == BsonType::kRegex) return Bad("Can't have regex as arg to $ne.");
      ROCKDOC_ASSIGN_OR_RETURN(ExprPtr eq, ParseComparison(MatchType::kEq, path, e));
      return ExprPtr(std::make_unique<NotMatchExpression>(std::move(eq)));
    }
    case PathOp::kIn: return ParseIn(path, e, false);
    case PathOp::kNin: return ParseIn(path, e, true);
    case PathOp::kExists: {
      auto exists = std::make_unique<ExistsMatchExpression>(path);
      // Any "truthy" value means true, as BSONElement::trueValue.
      bool truthy;
      switch (e.type()) {
        case BsonType::kBool: truthy = e.Bool(); break;
        case BsonType::kNull:
        case BsonType::kUndefined: truthy = false; break;
        default:
          truthy = e.type() == BsonType::kDecimal128 ? !e.Decimal().IsZero()
                   : e.IsNumber()                   ? (e.NumberAsDouble() != 0 || IsNaNNumber(e))
                                                    : true;
      }
      if (truthy) return ExprPtr(std::move(exists));
      return ExprPtr(std::make_unique<NotMatchExpression>(std::move(exists)));
    }
    case PathOp::kType: return ParseType(path, e);
    case PathOp::kSize: return ParseSize(path, e);
    case PathOp::kMod: return ParseMod(path, e);
    case PathOp::kBitsAllSet: return ParseBitTest(MatchType::kBitsAllSet, path, e);
    case PathOp::kBitsAllClear: return ParseBitTest(MatchType::kBitsAllClear, path, e);
    case PathOp::kBitsAnySet: return ParseBitTest(MatchType::kBitsAnySet, path, e);
    case PathOp::kBitsAnyClear: return ParseBitTest(MatchType::kBitsAnyClear, path, e);
    case PathOp::kOptions:
      // Validated and consumed together with its $regex, wherever that is.
      for (const Element& other : context) {
        if (other.key() == "$regex") return ExprPtr();
      }
      return Bad("$options needs a $regex");
    case PathOp::kRegex: return ParseRegexDocument(path, context);
    case PathOp::kElemMatch: return ParseElemMatch(path, e);
    case PathOp::kAll: return ParseAll(path, e);
    case PathOp::kGeoWithin: return GeoMatchExpression::Parse(MatchType::kGeoWithin, path, e);
    case PathOp::kGeoIntersects:
      return GeoMatchExpression::Parse(MatchType::kGeoIntersects, path, e);
    case PathOp::kNear:
      if (level != Level::kTop) return Bad("geo near must be top-level expr");
      return GeoNearMatchExpression::Parse(name, path, e, context);
    case PathOp::kNearDistance:
      // A legacy $near's distance, consumed with it.
      for (const Element& other : context) {
        if (other.key() == "$near" || other.key() == "$nearSphere") return ExprPtr();
      }
      return Bad("unknown operator: " + std::string(name));
    case PathOp::kNotSupported:
      return Status(ErrorCode::kNotImplemented, std::string(name) + " is not supported by rockdoc");
  }
  return Bad("unknown operator: " + std::string(name));
}

StatusOr<ExprPtr> Parser::ParseComparison(MatchType type, const std::string& path,
                                          const Element& e) {
  if (type != MatchType::kEq && e.type() == BsonType::kRegex) {
    return Bad("Can't have RegEx as arg to predicate over field '" + path + "'.");
  }
  if (e.type() == BsonType::kUndefined) return Bad("cannot compare to undefined");
  return ExprPtr(std::make_unique<ComparisonMatchExpression>(type, path, e));
}

StatusOr<ExprPtr> Parser::ParseIn(const std::string& path, const Element& e, bool negate) {
  if (e.type() != BsonType::kArray) return Bad(negate ? "$nin needs an array" : "$in needs an array");
  std::vector<std::shared_ptr<const Regex>> regexes;
  for (const Element& v : e.Array()) {
    if (IsExpressionDocument(v, false)) return Bad("cannot nest $ under $in");
    if (v.type() == BsonType::kUndefined) return Bad("InMatchExpression equality cannot be undefined");
    if (v.type() == BsonType::kRegex) {
      RegexView r = v.Regex();
      ROCKDOC_ASSIGN_OR_RETURN(auto regex, Regex::Compile(r.pattern, r.options));
      regexes.push_back(std::move(regex));
    }
  }
  ExprPtr in = std::make_unique<InMatchExpression>(path, e, std::move(regexes));
  if (negate) return ExprPtr(std::make_unique<NotMatchExpression>(std::move(in)));
  return in;
}

// The $type codes: the BSON type bytes, with MinKey as -1 and MaxKey 127.
StatusOr<BsonType> TypeFromCode(const Element& e) {
  int64_t code = 0;
  if (!e.ExactInt64(&code) || code < std::numeric_limits<int32_t>::min() ||
      code > std::numeric_limits<int32_t>::max()) {
    return Bad("Invalid numerical type code: " + ValueToJson(e, JsonFormat::kShell));
  }
  if (code == -1) return BsonType::kMinKey;
  if (code == 127) return BsonType::kMaxKey;
  if (code >= 1 && code <= 0x13) return static_cast<BsonType>(code);
  return Bad("Invalid numerical type code: " + std::to_string(code));
}

Status AddTypeToSet(const Element& e, MatchTypeSet* set) {
  if (e.type() == BsonType::kString) return AddTypeAliasToSet(e.String(), set);
  if (e.IsNumber()) {
    ROCKDOC_ASSIGN_OR_RETURN(BsonType t, TypeFromCode(e));
    set->types.set(static_cast<uint8_t>(t));
    return Status::OK();
  }
  return Status(ErrorCode::kTypeMismatch, "type must be represented as a number or a string");
}

StatusOr<ExprPtr> Parser::ParseType(const std::string& path, const Element& e) {
  MatchTypeSet set;
  if (e.type() == BsonType::kArray) {
    for (const Element& t : e.Array()) ROCKDOC_RETURN_IF_ERROR(AddTypeToSet(t, &set));
  } else {
    ROCKDOC_RETURN_IF_ERROR(AddTypeToSet(e, &set));
  }
  if (set.empty()) {
    return Status(ErrorCode::kFailedToParse, "$type must match at least one type");
  }
  return ExprPtr(std::make_unique<TypeMatchExpression>(path, set));
}

StatusOr<ExprPtr> Parser::ParseSize(const std::string& path, const Element& e) {
  const std::string prefix = "Failed to parse $size. ";
  if (!e.IsNumber()) return Bad(prefix + "Expected a number in: " + ElementToString(e));
  int64_t n = 0;
  if (!e.ExactInt64(&n)) {
    const bool nan = IsNaNNumber(e);
    if (nan || (e.type() == BsonType::kDouble && std::isfinite(e.Double())) ||
        (e.type() == BsonType::kDecimal128 && e.Decimal().IsFinite() &&
         std::fabs(e.NumberAsDouble()) < 9.2e18)) {
      return Bad(prefix + "Expected an integer: " + ElementToString(e));
    }
    return Bad(prefix + "Cannot represent as a 64-bit integer: " + ElementToString(e));
  }
  if (n < 0) return Bad(prefix + "Expected a non-negative number in: " + ElementToString(e));
  if (n > std::numeric_limits<int32_t>::max()) {
    return Bad(prefix + "Cannot represent as a 32-bit integer: " + ElementToString(e));
  }
  return ExprPtr(std::make_unique<SizeMatchExpression>(path, static_cast<int32_t>(n)));
}

// $mod's divisor and remainder are truncated to integers, as MongoDB's
// BSONElement::tryCoerce does; NaN, infinities and out-of-range values fail.
Status CoerceModArgument(const Element& e, const char* what, int64_t* out) {
  const std::string context = std::string("malformed mod, ") + what + " value is invalid :: caused by :: ";
  if (e.type() == BsonType::kInt32 || e.type() == BsonType::kInt64) {
    e.ExactInt64(out);
    return Status::OK();
  }
  double d = e.NumberAsDouble();
  if (std::isnan(d) || std::isinf(d)) {
    return Bad(context + "Unable to coerce NaN/Inf to integral type");
  }
  d = std::trunc(d);
  if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
    return Bad(context + "Out of bounds coercing to integral value");
  }
  *out = static_cast<int64_t>(d);
  return Status::OK();
}

StatusOr<ExprPtr> Parser::ParseMod(const std::string& path, const Element& e) {
  if (e.type() != BsonType::kArray) return Bad("malformed mod, needs to be an array");
  auto it = e.Array().begin(), end = e.Array().end();
  if (it == end) return Bad("malformed mod, not enough elements");
  Element divisor = *it++;
  if (!divisor.IsNumber()) return Bad("malformed mod, divisor not a number");
  if (it == end) return Bad("malformed mod, not enough elements");
  Element remainder = *it++;
  if (!remainder.IsNumber()) return Bad("malformed mod, remainder not a number");
  if (it != end) return Bad("malformed mod, too many elements");
  int64_t d = 0, r = 0;
  ROCKDOC_RETURN_IF_ERROR(CoerceModArgument(divisor, "divisor", &d));
  ROCKDOC_RETURN_IF_ERROR(CoerceModArgument(remainder, "remainder", &r));
  if (d == 0) return Bad("divisor cannot be 0");
  return ExprPtr(std::make_unique<ModMatchExpression>(path, d, r));
}

// MongoDB's BSONElement::parseIntegerElementToNonNegativeLong: a number
// with an exact, non-negative int64 value. Errors are FailedToParse and name
// the element as "key: value".
Status NonNegativeInt64(const Element& e, int64_t* out) {
  auto fail = [&](const std::string& what) {
    return Status(ErrorCode::kFailedToParse, what + ElementToString(e));
  };
  if (!e.IsNumber()) return fail("Expected a number in: ");
  if (!e.ExactInt64(out)) {
    if (IsNaNNumber(e)) return fail("Expected an integer, but found NaN in: ");
    const double d = e.NumberAsDouble();
    if (e.type() == BsonType::kDouble && std::isfinite(d) && d >= -9223372036854775808.0 &&
        d < 9223372036854775808.0) {
      return fail("Expected an integer: ");
    }
    return fail("Cannot represent as a 64-bit integer: ");
  }
  if (*out < 0) return fail("Expected a non-negative number in: ");
  return Status::OK();
}

StatusOr<ExprPtr> Parser::ParseBitTest(MatchType type, const std::string& path,
                                       const Element& e) {
  std::vector<uint32_t> positions;
  if (e.type() == BsonType::kArray) {
    for (const Element& p : e.Array()) {
      int64_t n = 0;
      Status s = NonNegativeInt64(p, &n);
      if (s.ok() && n > std::numeric_limits<int32_t>::max()) {
        s = Status(ErrorCode::kFailedToParse, "Cannot represent " + ElementToString(p) + " in an int");
      }
      if (!s.ok()) return Bad("Failed to parse bit position. " + std::string(s.message()));
      positions.push_back(static_cast<uint32_t>(n));
    }
  } else if (e.IsNumber()) {
    int64_t mask = 0;
    ROCKDOC_RETURN_IF_ERROR(NonNegativeInt64(e, &mask));
    for (uint32_t bit = 0; bit < 63; ++bit) {
      if ((static_cast<uint64_t>(mask) >> bit) & 1) positions.push_back(bit);
    }
  } else if (e.type() == BsonType::kBinary) {
    std::string_view bytes = e.Binary().data;
    for (size_t i = 0; i < bytes.size() * 8; ++i) {
      if ((static_cast<uint8_t>(bytes[i / 8]) >> (i % 8)) & 1) {
        positions.push_back(static_cast<uint32_t>(i));
      }
    }
  } else {
    return Bad(path + " takes an Array, a number, or a BinData but received: " +
               ElementToString(e));
  }
  return ExprPtr(std::make_unique<BitTestMatchExpression>(type, path, std::move(positions)));
}

StatusOr<ExprPtr> Parser::ParseRegexDocument(const std::string& path, DocumentView context) {
  std::string_view pattern, options;
  for (const Element& e : context) {
    if (e.key() == "$regex") {
      if (e.type() == BsonType::kString) {
        pattern = e.String();
      } else if (e.type() == BsonType::kRegex) {
        RegexView r = e.Regex();
        pattern = r.pattern;
        if (!r.options.empty()) {
          if (!options.empty()) {
            return Status(static_cast<ErrorCode>(51074), "options set in both $regex and $options");
          }
          options = r.options;
        }
      } else {
        return Bad("$regex has to be a string");
      }
    } else if (e.key() == "$options") {
      if (e.type() != BsonType::kString) return Bad("$options has to be a string");
      if (!options.empty()) {
        return Status(static_cast<ErrorCode>(51075), "options set in both $regex and $options");
      }
      options = e.String();
    }
  }
  ROCKDOC_ASSIGN_OR_RETURN(auto regex, Regex::Compile(pattern, options));
  return ExprPtr(std::make_unique<RegexMatchExpression>(path, std::move(regex)));
}

StatusOr<ExprPtr> Parser::ParseElemMatch(const std::string& path, const Element& e) {
  if (e.type() != BsonType::kDocument) return Bad("$elemMatch needs an Object");
  DocumentView obj = e.Document();
  // Value form when the argument is an operator document whose first
  // operator takes a path ($gt, $not, ...); object form otherwise (a filter
  // over the element's fields, which may start with $and/$or/$nor).
  bool value_form = false;
  if (IsExpressionDocument(e, true)) {
    value_form = !IsPathlessOperator((*obj.begin()).key());
  }
  if (value_form) {
    ExprList children;
    ROCKDOC_RETURN_IF_ERROR(ParseSub("", obj, Level::kSubDocument, &children));
    return ExprPtr(std::make_unique<ElemMatchValueMatchExpression>(path, std::move(children)));
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExprPtr sub, ParseDocument(obj, Level::kSubDocument));
  return ExprPtr(std::make_unique<ElemMatchObjectMatchExpression>(path, std::move(sub)));
}

StatusOr<ExprPtr> Parser::ParseAll(const std::string& path, const Element& e) {
  if (e.type() != BsonType::kArray) return Bad("$all needs an array");
  DocumentView arr = e.Array();
  ExprList children;
  auto first_is_elem_match = [](const Element& v) {
    return v.type() == BsonType::kDocument && !v.Document().empty() &&
           (*v.Document().begin()).key() == "$elemMatch";
  };
  if (!arr.empty() && first_is_elem_match(*arr.begin())) {
    // $all: [{$elemMatch: ...}, ...]: every element must be one.
    for (const Element& v : arr) {
      if (!first_is_elem_match(v)) return Bad("$all/$elemMatch has to be consistent");
      ROCKDOC_ASSIGN_OR_RETURN(ExprPtr em, ParseElemMatch(path, *v.Document().begin()));
      children.push_back(std::move(em));
    }
    return MakeAndOrSingle(std::move(children));
  }
  for (const Element& v : arr) {
    if (v.type() == BsonType::kRegex) {
      RegexView r = v.Regex();
      ROCKDOC_ASSIGN_OR_RETURN(auto regex, Regex::Compile(r.pattern, r.options));
      children.push_back(std::make_unique<RegexMatchExpression>(path, std::move(regex)));
    } else if (v.type() == BsonType::kDocument && !v.Document().empty() &&
               LookupPathOp((*v.Document().begin()).key())) {
      return Bad("no $ expressions in $all");
    } else {
      ROCKDOC_ASSIGN_OR_RETURN(ExprPtr eq, ParseComparison(MatchType::kEq, path, v));
      children.push_back(std::move(eq));
    }
  }
  // $all: [] matches nothing, as MongoDB.
  if (children.empty()) return ExprPtr(std::make_unique<AlwaysBooleanMatchExpression>(false));
  return MakeAndOrSingle(std::move(children));
}

StatusOr<ExprPtr> Parser::ParseNot(const std::string& path, const Element& e, Level level) {
  if (e.type() == BsonType::kRegex) {
    RegexView r = e.Regex();
    ROCKDOC_ASSIGN_OR_RETURN(auto regex, Regex::Compile(r.pattern, r.options));
    return ExprPtr(std::make_unique<NotMatchExpression>(
        std::make_unique<RegexMatchExpression>(path, std::move(regex))));
  }
  if (e.type() != BsonType::kDocument) return Bad("$not needs a regex or a document");
  DocumentView obj = e.Document();
  if (obj.empty()) return Bad("$not cannot be empty");
  ExprList children;
  ROCKDOC_RETURN_IF_ERROR(ParseSub(path, obj, level, &children));
  return ExprPtr(std::make_unique<NotMatchExpression>(MakeAndOrSingle(std::move(children))));
}

}  // namespace

Status AddTypeAliasToSet(std::string_view alias, MatchTypeSet* set) {
  if (alias == "number") {
    set->all_numbers = true;
    return Status::OK();
  }
  static const BsonType kAll[] = {
      BsonType::kDouble,    BsonType::kString,    BsonType::kDocument,   BsonType::kArray,
      BsonType::kBinary,    BsonType::kUndefined, BsonType::kObjectId,   BsonType::kBool,
      BsonType::kDateTime,  BsonType::kNull,      BsonType::kRegex,      BsonType::kDbPointer,
      BsonType::kCode,      BsonType::kSymbol,    BsonType::kCodeWithScope, BsonType::kInt32,
      BsonType::kTimestamp, BsonType::kInt64,     BsonType::kDecimal128, BsonType::kMinKey,
      BsonType::kMaxKey};
  for (BsonType t : kAll) {
    if (BsonTypeAlias(t) == alias) {
      set->types.set(static_cast<uint8_t>(t));
      return Status::OK();
    }
  }
  return Status(ErrorCode::kBadValue, "Unknown type name alias: " + std::string(alias));
}

StatusOr<std::unique_ptr<MatchExpression>> ParseMatchExpression(DocumentView filter) {
  Parser parser;
  return parser.ParseDocument(filter, Level::kTop);
}

StatusOr<std::unique_ptr<MatchExpression>> ParseMatchExpression(
    DocumentView filter, std::shared_ptr<FilterVariables> variables) {
  Parser parser(std::move(variables));
  return parser.ParseDocument(filter, Level::kTop);
}

}  // namespace rockdoc
