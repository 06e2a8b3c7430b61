// Field operators: $set, $setOnInsert, $unset, $inc, $mul, $min, $max,
// $currentDate, $rename.
#include <cmath>
#include <limits>

#include "bson/decimal_arithmetic.h"
#include "query/update/modifier_nodes.h"

namespace rockdoc::update_internal {

namespace {

// Replaces *target with `value` unless it already holds the same bytes.
void ReplaceIfDifferent(MutableNode* target, const Element& value, Arena* arena,
                        LeafOutcome* outcome) {
  if (BinaryEqualValues(target->AsElement(arena), value)) return;
  target->SetValue(value);
  outcome->changed = true;
}

std::string TypeAlias(BsonType t) { return std::string(BsonTypeAlias(t)); }

}  // namespace

// ---------------------------------------------------------------- $bit

Status BitNode::Init(const Element& arg) {
  if (arg.type() != BsonType::kDocument) {
    return Status(ErrorCode::kBadValue, "The $bit modifier is not compatible with a " +
                                            TypeAlias(arg.type()) +
                                            ". You must pass in an embedded document: "
                                            "{$bit: {field: {and/or/xor: #}}");
  }
  for (Element step : arg.Document()) {
    std::string_view op = step.key();
    Op parsed;
    if (op == "and") {
      parsed = Op::kAnd;
    } else if (op == "or") {
      parsed = Op::kOr;
    } else if (op == "xor") {
      parsed = Op::kXor;
    } else {
      return Status(ErrorCode::kBadValue,
                    "The $bit modifier only supports 'and', 'or', and 'xor', not '" +
                        std::string(op) + "' which is an unknown operator: {" +
                        FormatElement(op, step) + "}");
    }
    if (step.type() != BsonType::kInt32 && step.type() != BsonType::kInt64) {
      return Status(ErrorCode::kBadValue,
                    "The $bit modifier field must be an Integer(32/64 bit); a '" +
                        TypeAlias(step.type()) + "' is not supported here: {" +
                        FormatElement(op, step) + "}");
    }
    steps_.push_back({parsed, step});
  }
  if (steps_.empty()) {
    return Status(ErrorCode::kBadValue,
                  "You must pass in at least one bitwise operation. The format is: "
                  "{$bit: {field: {and/or/xor: #}}");
  }
  return Status::OK();
}

Element BitNode::ApplySteps(const Element& value, Arena* arena) const {
  bool is64 = value.type() == BsonType::kInt64;
  int64_t v = is64 ? value.Int64() : value.Int32();
  for (const Step& step : steps_) {
    const bool operand64 = step.operand.type() == BsonType::kInt64;
    const int64_t x = operand64 ? step.operand.Int64() : step.operand.Int32();
    is64 = is64 || operand64;
    switch (step.op) {
      case Op::kAnd: v &= x; break;
      case Op::kOr: v |= x; break;
      case Op::kXor: v ^= x; break;
    }
  }
  // int32 op int32 stays within int32: the operands are sign-extended.
  return is64 ? arena->Int64(v) : arena->Int32(static_cast<int32_t>(v));
}

Status BitNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                               LeafOutcome* outcome) const {
  ApplyState* state = params.state;
  Element current = target->AsElement(&state->arena);
  if (current.type() != BsonType::kInt32 && current.type() != BsonType::kInt64) {
    return Status(ErrorCode::kBadValue,
                  "Cannot apply $bit to a value of non-integral type." +
                      FormatIdForMessage(state->original) + " has the field " +
                      std::string(params.field_name) + " of non-integer type " +
                      TypeAlias(current.type()));
  }
  ReplaceIfDifferent(target, ApplySteps(current, &state->arena), &state->arena, outcome);
  return Status::OK();
}

Status BitNode::CreateValue(MutableNode* fresh, const ApplyParams& params) const {
  fresh->SetValue(ApplySteps(params.state->arena.Int32(0), &params.state->arena));
  return Status::OK();
}

// ---------------------------------------------------------------- $set

Status SetNode::Init(const Element& arg) {
  value_ = arg;
  return Status::OK();
}

Status SetNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                               LeafOutcome* outcome) const {
  ReplaceIfDifferent(target, value_, &params.state->arena, outcome);
  return Status::OK();
}

Status SetNode::CreateValue(MutableNode* fresh, const ApplyParams&) const {
  fresh->SetValue(value_);
  return Status::OK();
}

Status SetOnInsertNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                       LeafOutcome* outcome) const {
  if (!params.state->is_upsert_insert) return Status::OK();
  return SetNode::UpdateExisting(target, params, outcome);
}

// ---------------------------------------------------------------- $unset

Status UnsetNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                 LeafOutcome* outcome) const {
  if (params.parent_is_array) {
    // Removing would shift the positions of the following elements.
    if (target->type() == BsonType::kNull) return Status::OK();
    target->SetValue(params.state->arena.Null());
    outcome->changed = true;
    return Status::OK();
  }
  outcome->changed = true;
  outcome->remove = true;
  return Status::OK();
}

// ---------------------------------------------------------------- $inc, $mul

Status ArithmeticNode::Init(const Element& arg) {
  if (!arg.IsNumber()) {
    return Status(ErrorCode::kTypeMismatch,
                  std::string(op_ == Op::kAdd ? "Cannot increment" : "Cannot multiply") +
                      " with non-numeric argument: {" + FormatElement(arg.key(), arg) + "}");
  }
  operand_ = arg;
  return Status::OK();
}

namespace {

int64_t ToInt64(const Element& e) {
  return e.type() == BsonType::kInt32 ? e.Int32() : e.Int64();
}

// lhs (op) rhs with MongoDB's promotion rules; a missing Element when the
// int64 result overflows.
Element Compute(ArithmeticNode::Op op, const Element& lhs, const Element& rhs, Arena* arena) {
  const bool add = op == ArithmeticNode::Op::kAdd;
  if (lhs.type() == BsonType::kDecimal128 || rhs.type() == BsonType::kDecimal128) {
    Decimal128 a = NumberToDecimal(lhs), b = NumberToDecimal(rhs);
    return arena->Decimal(add ? DecimalAdd(a, b) : DecimalMultiply(a, b));
  }
  if (lhs.type() == BsonType::kDouble || rhs.type() == BsonType::kDouble) {
    double a = lhs.NumberAsDouble(), b = rhs.NumberAsDouble();
    return arena->Double(add ? a + b : a * b);
  }
  int64_t a = ToInt64(lhs), b = ToInt64(rhs), r;
  bool overflow = add ? __builtin_add_overflow(a, b, &r) : __builtin_mul_overflow(a, b, &r);
  if (lhs.type() == BsonType::kInt32 && rhs.type() == BsonType::kInt32) {
    // Two int32 values never overflow int64: promote only when needed.
    if (r >= std::numeric_limits<int32_t>::min() && r <= std::numeric_limits<int32_t>::max()) {
      return arena->Int32(static_cast<int32_t>(r));
    }
    return arena->Int64(r);
  }
  if (overflow) return Element();
  return arena->Int64(r);
}

std::string DescribeNumber(const Element& e) {
  switch (e.type()) {
    case BsonType::kInt32: return "(NumberInt)" + FormatValue(e);
    case BsonType::kInt64: return "(NumberLong)" + FormatValue(e);
    case BsonType::kDouble: return "(NumberDouble)" + FormatValue(e);
    default: return "(NumberDecimal)" + e.Decimal().ToString();
  }
}

}  // namespace

Status ArithmeticNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                      LeafOutcome* outcome) const {
  ApplyState* state = params.state;
  Element current = target->AsElement(&state->arena);
  if (!current.IsNumber()) {
    return Status(ErrorCode::kTypeMismatch,
                  "Cannot apply " + std::string(name()) + " to a value of non-numeric type. " +
                      FormatIdForMessage(state->original) + " has the field '" +
                      std::string(params.field_name) + "' of non-numeric type " +
                      TypeAlias(current.type()));
  }
  Element result = Compute(op_, current, operand_, &state->arena);
  if (!result.ok()) {
    return Status(ErrorCode::kBadValue,
                  "Failed to apply " + std::string(name()) + " operations to current value (" +
                      DescribeNumber(current) + ") for document " +
                      FormatIdForMessage(state->original));
  }
  ReplaceIfDifferent(target, result, &state->arena, outcome);
  return Status::OK();
}

Status ArithmeticNode::CreateValue(MutableNode* fresh, const ApplyParams& params) const {
  if (op_ == Op::kAdd) {
    fresh->SetValue(operand_);
    return Status::OK();
  }
  Arena& arena = params.state->arena;
  switch (operand_.type()) {
    case BsonType::kInt32: fresh->SetValue(arena.Int32(0)); break;
    case BsonType::kInt64: fresh->SetValue(arena.Int64(0)); break;
    case BsonType::kDouble: fresh->SetValue(arena.Double(0.0)); break;
    default: fresh->SetValue(arena.Decimal(Decimal128::FromInt64(0))); break;
  }
  return Status::OK();
}

// ---------------------------------------------------------------- $min, $max

Status CompareNode::Init(const Element& arg) {
  value_ = arg;
  return Status::OK();
}

Status CompareNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                   LeafOutcome* outcome) const {
  int c = CompareValues(target->AsElement(&params.state->arena), value_);
  bool replace = mode_ == Mode::kMin ? c > 0 : c < 0;
  if (replace) {
    target->SetValue(value_);
    outcome->changed = true;
  }
  return Status::OK();
}

Status CompareNode::CreateValue(MutableNode* fresh, const ApplyParams&) const {
  fresh->SetValue(value_);
  return Status::OK();
}

// ---------------------------------------------------------------- $currentDate

Status CurrentDateNode::Init(const Element& arg) {
  if (arg.type() == BsonType::kBool) {
    timestamp_ = false;
    return Status::OK();
  }
  if (arg.type() != BsonType::kDocument) {
    return Status(ErrorCode::kBadValue,
                  std::string(TypeAlias(arg.type())) +
                      " is not valid type for $currentDate. Please use a boolean ('true') or a "
                      "$type expression ({$type: 'timestamp/date'}).");
  }
  for (Element option : arg.Document()) {
    if (option.key() != "$type") {
      return Status(ErrorCode::kBadValue,
                    "Unrecognized $currentDate option: " + std::string(option.key()));
    }
    if (option.type() != BsonType::kString ||
        (option.String() != "date" && option.String() != "timestamp")) {
      return Status(ErrorCode::kBadValue,
                    "The '$type' string field is required to be 'date' or 'timestamp': "
                    "{$currentDate: {field : {$type: 'date'}}}");
    }
    timestamp_ = option.String() == "timestamp";
  }
  if (arg.Document().empty()) {
    return Status(ErrorCode::kBadValue,
                  "The '$type' string field is required to be 'date' or 'timestamp': "
                  "{$currentDate: {field : {$type: 'date'}}}");
  }
  return Status::OK();
}

Element CurrentDateNode::Now(ApplyState* state) const {
  if (timestamp_) {
    return state->arena.Timestamp(BsonTimestamp{
        static_cast<uint32_t>(state->now_millis / 1000), state->timestamp_increment});
  }
  return state->arena.DateTime(state->now_millis);
}

Status CurrentDateNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                       LeafOutcome* outcome) const {
  ReplaceIfDifferent(target, Now(params.state), &params.state->arena, outcome);
  return Status::OK();
}

Status CurrentDateNode::CreateValue(MutableNode* fresh, const ApplyParams& params) const {
  fresh->SetValue(Now(params.state));
  return Status::OK();
}

// ---------------------------------------------------------------- $rename

Status RenameNode::Init(const Element& arg) {
  if (arg.type() != BsonType::kString) {
    return Status(ErrorCode::kBadValue, "The 'to' field for $rename must be a string: " +
                                            FormatElement(arg.key(), arg));
  }
  // A BSON field name is a C string: a NUL would end it early and corrupt
  // the document the rename writes.
  if (arg.String().find('\0') != std::string_view::npos) {
    return Status(ErrorCode::kBadValue,
                  "The 'to' field for $rename cannot contain an embedded null byte");
  }
  source_ = std::string(arg.key());
  destination_ = std::string(arg.String());
  return Status::OK();
}

Element RenameNode::SourceValue(DocumentView original) const {
  return original.GetPath(source_);
}

namespace {

// The first array met strictly before the last component of `path`.
std::string_view ArrayPrefix(DocumentView doc, std::string_view path, std::string* prefix) {
  DocumentView current = doc;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) return {};
    std::string_view part = path.substr(start, dot - start);
    Element e = current.Get(part);
    if (!e.ok()) return {};
    if (e.type() == BsonType::kArray) {
      *prefix = std::string(path.substr(0, dot));
      return part;
    }
    if (e.type() != BsonType::kDocument) return {};
    current = e.Document();
    start = dot + 1;
  }
}

}  // namespace

Status RenameNode::CheckArrays(DocumentView original) const {
  // A missing source makes the rename a no-op, whatever the paths cross.
  if (!SourceValue(original).ok()) return Status::OK();
  std::string prefix;
  std::string_view field = ArrayPrefix(original, source_, &prefix);
  if (!field.empty()) {
    return Status(ErrorCode::kBadValue,
                  "The source field cannot be an array element, '" + source_ + "' in doc with " +
                      FormatIdForMessage(original) + " has an array field called '" +
                      std::string(field) + "'");
  }
  field = ArrayPrefix(original, destination_, &prefix);
  if (!field.empty()) {
    return Status(ErrorCode::kBadValue,
                  "The destination field cannot be an array element, '" + destination_ +
                      "' in doc with " + FormatIdForMessage(original) +
                      " has an array field called '" + std::string(field) + "'");
  }
  return Status::OK();
}

bool RenameNode::ShouldCreate(const ApplyState& state) const {
  return SourceValue(state.original).ok();
}

Status RenameNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                  LeafOutcome* outcome) const {
  Element source = SourceValue(params.state->original);
  if (!source.ok()) return Status::OK();  // nothing to rename: the destination is kept
  target->SetValue(source);
  outcome->changed = true;  // the source disappears, so the document changes
  return Status::OK();
}

Status RenameNode::CreateValue(MutableNode* fresh, const ApplyParams& params) const {
  fresh->SetValue(SourceValue(params.state->original));
  return Status::OK();
}

Status RenameSourceNode::UpdateExisting(MutableNode*, const ApplyParams&,
                                        LeafOutcome* outcome) const {
  outcome->changed = true;
  outcome->remove = true;
  return Status::OK();
}

}  // namespace rockdoc::update_internal
