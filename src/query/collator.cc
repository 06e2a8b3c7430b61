#include "query/collator.h"

#include <unicode/uchar.h>
#include <unicode/ucol.h>
#include <unicode/uloc.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

#include <cmath>
#include <optional>
#include <vector>

#include "common/option_table.h"
#include "rockdoc/json.h"

namespace rockdoc {

namespace {

using internal::OptionField;

// The fields of a collation document as given (absent: the locale's default).
struct CollationFields {
  DocumentView spec;
  std::optional<std::string> locale;
  std::optional<bool> case_level;
  std::optional<std::string> case_first;
  std::optional<int> strength;
  std::optional<bool> numeric_ordering;
  std::optional<std::string> alternate;
  std::optional<std::string> max_variable;
  std::optional<bool> normalization;
  std::optional<bool> backwards;
  std::optional<std::string> version;
};

Status WrongType(const Element& e, std::string_view type, DocumentView spec) {
  return Status(ErrorCode::kTypeMismatch, "Field '" + std::string(e.key()) +
                                              "' must be of type " + std::string(type) +
                                              " in: " + ToJson(spec, JsonFormat::kShell));
}

template <std::optional<bool> CollationFields::*kMember>
Status DecodeBool(const Element& e, CollationFields* out) {
  if (e.type() != BsonType::kBool) return WrongType(e, "bool", out->spec);
  out->*kMember = e.Bool();
  return Status::OK();
}

template <std::optional<std::string> CollationFields::*kMember>
Status DecodeString(const Element& e, CollationFields* out) {
  if (e.type() != BsonType::kString) return WrongType(e, "string", out->spec);
  out->*kMember = std::string(e.String());
  return Status::OK();
}

Status DecodeStrength(const Element& e, CollationFields* out) {
  if (!e.IsNumber()) return WrongType(e, "number", out->spec);
  const double d = e.NumberAsDouble();
  if (!(d >= 1 && d <= 5) || d != std::floor(d)) {
    return Status(ErrorCode::kFailedToParse,
                  "Field 'strength' must be an integer 1 through 5. Got: " +
                      ValueToJson(e, JsonFormat::kShell));
  }
  out->strength = static_cast<int>(d);
  return Status::OK();
}

constexpr OptionField<CollationFields> kCollationFields[] = {
    {"locale", DecodeString<&CollationFields::locale>},
    {"caseLevel", DecodeBool<&CollationFields::case_level>},
    {"caseFirst", DecodeString<&CollationFields::case_first>},
    {"strength", DecodeStrength},
    {"numericOrdering", DecodeBool<&CollationFields::numeric_ordering>},
    {"alternate", DecodeString<&CollationFields::alternate>},
    {"maxVariable", DecodeString<&CollationFields::max_variable>},
    {"normalization", DecodeBool<&CollationFields::normalization>},
    {"backwards", DecodeBool<&CollationFields::backwards>},
    {"version", DecodeString<&CollationFields::version>},
};

std::string IcuVersion() {
  UVersionInfo info;
  u_getVersion(info);
  char text[U_MAX_VERSION_STRING_LENGTH];
  u_versionToString(info, text);
  return text;
}

std::u16string ToUtf16(std::string_view s) {
  std::u16string out(s.size() + 1, u'\0');
  int32_t length = 0;
  UErrorCode status = U_ZERO_ERROR;
  // Stored strings are valid UTF-8 (ValidateBson); a replacement character
  // for anything else keeps this total.
  u_strFromUTF8WithSub(out.data(), static_cast<int32_t>(out.size()), &length, s.data(),
                       static_cast<int32_t>(s.size()), 0xFFFD, nullptr, &status);
  out.resize(U_SUCCESS(status) ? static_cast<size_t>(length) : 0);
  return out;
}

Status Invalid(std::string_view field, std::string_view allowed, const std::string& got) {
  return Status(ErrorCode::kFailedToParse, "Field '" + std::string(field) + "' must be " +
                                               std::string(allowed) + ". Got: " + got);
}

}  // namespace

Collator::~Collator() {
  if (collator_ != nullptr) ucol_close(collator_);
}

StatusOr<std::shared_ptr<const Collator>> Collator::FromElement(const Element& field) {
  if (field.type() != BsonType::kDocument) {
    return Status(ErrorCode::kTypeMismatch, "collation must be an object");
  }
  return Make(field.Document());
}

StatusOr<std::shared_ptr<const Collator>> Collator::Make(DocumentView spec) {
  CollationFields f;
  f.spec = spec;
  ROCKDOC_RETURN_IF_ERROR(internal::DecodeValidatedOptions(
      spec, kCollationFields, &f,
      [](std::string_view name) {
        return Status(ErrorCode::kFailedToParse,
                      "Unknown collation spec field: " + std::string(name));
      },
      [](std::string_view name) {
        return Status(ErrorCode::kNotImplemented,
                      "collation field " + std::string(name) + " is not supported");
      }));
  if (!f.locale) return Status(ErrorCode::kFailedToParse, "Missing locale string");
  if (*f.locale == "simple") {
    if (spec.CountFields() != 1) {
      return BadValue("If 'locale' is 'simple', no other collation field may be given: " +
                      ToJson(spec, JsonFormat::kShell));
    }
    return std::shared_ptr<const Collator>();
  }
  const std::string version = IcuVersion();
  if (f.version && *f.version != version) {
    return BadValue("Requested collation version " + *f.version +
                    " but the only available collator version was " + version);
  }
  auto invalid_locale = [&] {
    return BadValue("Field 'locale' is invalid in: " + ToJson(spec, JsonFormat::kShell));
  };
  // ICU takes any string as a locale and falls back to its root rules; a
  // collation must name a locale ICU has rules for (or "root" itself).
  if (f.locale->empty() || f.locale->find('\0') != std::string::npos) return invalid_locale();
  UErrorCode status = U_ZERO_ERROR;
  UCollator* c = ucol_open(f.locale->c_str(), &status);
  std::shared_ptr<Collator> out(new Collator());
  out->collator_ = c;
  if (U_FAILURE(status) || c == nullptr) return invalid_locale();
  if (*f.locale != "root") {
    // ICU's valid locale is the most specific one it has data for: "en"
    // for "en_XX", "root" for "nowhere". Only a locale ICU knows exactly
    // is a collation's (MongoDB refuses the others too).
    const char* valid = ucol_getLocaleByType(c, ULOC_VALID_LOCALE, &status);
    if (U_FAILURE(status) || valid == nullptr || std::string_view(valid) != *f.locale) {
      return invalid_locale();
    }
  }
  status = U_ZERO_ERROR;
  auto set = [&](UColAttribute attr, UColAttributeValue value) {
    ucol_setAttribute(c, attr, value, &status);
  };
  if (f.strength) {
    static constexpr UColAttributeValue kStrengths[] = {UCOL_PRIMARY, UCOL_SECONDARY,
                                                        UCOL_TERTIARY, UCOL_QUATERNARY,
                                                        UCOL_IDENTICAL};
    set(UCOL_STRENGTH, kStrengths[*f.strength - 1]);
  }
  if (f.case_level) set(UCOL_CASE_LEVEL, *f.case_level ? UCOL_ON : UCOL_OFF);
  if (f.case_first) {
    if (*f.case_first == "upper") {
      set(UCOL_CASE_FIRST, UCOL_UPPER_FIRST);
    } else if (*f.case_first == "lower") {
      set(UCOL_CASE_FIRST, UCOL_LOWER_FIRST);
    } else if (*f.case_first == "off") {
      set(UCOL_CASE_FIRST, UCOL_OFF);
    } else {
      return Invalid("caseFirst", "'upper', 'lower', or 'off'", *f.case_first);
    }
  }
  if (f.numeric_ordering) set(UCOL_NUMERIC_COLLATION, *f.numeric_ordering ? UCOL_ON : UCOL_OFF);
  if (f.alternate) {
    if (*f.alternate == "non-ignorable") {
      set(UCOL_ALTERNATE_HANDLING, UCOL_NON_IGNORABLE);
    } else if (*f.alternate == "shifted") {
      set(UCOL_ALTERNATE_HANDLING, UCOL_SHIFTED);
    } else {
      return Invalid("alternate", "'non-ignorable' or 'shifted'", *f.alternate);
    }
  }
  if (f.max_variable) {
    if (*f.max_variable == "punct") {
      ucol_setMaxVariable(c, UCOL_REORDER_CODE_PUNCTUATION, &status);
    } else if (*f.max_variable == "space") {
      ucol_setMaxVariable(c, UCOL_REORDER_CODE_SPACE, &status);
    } else {
      return Invalid("maxVariable", "'punct' or 'space'", *f.max_variable);
    }
  }
  if (f.normalization) set(UCOL_NORMALIZATION_MODE, *f.normalization ? UCOL_ON : UCOL_OFF);
  if (f.backwards) set(UCOL_FRENCH_COLLATION, *f.backwards ? UCOL_ON : UCOL_OFF);
  if (U_FAILURE(status)) {
    return BadValue(std::string("ICU refused the collation ") + ToJson(spec, JsonFormat::kShell) +
                    ": " + u_errorName(status));
  }

  // The normalized form: every field, as the collator now has it.
  auto get = [&](UColAttribute attr) { return ucol_getAttribute(c, attr, &status); };
  BsonBuilder b;
  b.AppendString("locale", *f.locale);
  b.AppendBool("caseLevel", get(UCOL_CASE_LEVEL) == UCOL_ON);
  const UColAttributeValue case_first = get(UCOL_CASE_FIRST);
  b.AppendString("caseFirst", case_first == UCOL_UPPER_FIRST   ? "upper"
                              : case_first == UCOL_LOWER_FIRST ? "lower"
                                                               : "off");
  int strength = 3;
  switch (get(UCOL_STRENGTH)) {
    case UCOL_PRIMARY: strength = 1; break;
    case UCOL_SECONDARY: strength = 2; break;
    case UCOL_TERTIARY: strength = 3; break;
    case UCOL_QUATERNARY: strength = 4; break;
    case UCOL_IDENTICAL: strength = 5; break;
    default: break;
  }
  b.AppendInt32("strength", strength);
  b.AppendBool("numericOrdering", get(UCOL_NUMERIC_COLLATION) == UCOL_ON);
  b.AppendString("alternate",
                 get(UCOL_ALTERNATE_HANDLING) == UCOL_SHIFTED ? "shifted" : "non-ignorable");
  b.AppendString("maxVariable",
                 ucol_getMaxVariable(c) == UCOL_REORDER_CODE_SPACE ? "space" : "punct");
  b.AppendBool("normalization", get(UCOL_NORMALIZATION_MODE) == UCOL_ON);
  b.AppendBool("backwards", get(UCOL_FRENCH_COLLATION) == UCOL_ON);
  b.AppendString("version", version);
  out->spec_ = std::move(b).Build();
  if (U_FAILURE(status)) return BadValue("ICU: " + std::string(u_errorName(status)));
  return std::shared_ptr<const Collator>(std::move(out));
}

int Collator::CompareStrings(std::string_view a, std::string_view b) const {
  UErrorCode status = U_ZERO_ERROR;
  const UCollationResult r =
      ucol_strcollUTF8(collator_, a.data(), static_cast<int32_t>(a.size()), b.data(),
                       static_cast<int32_t>(b.size()), &status);
  if (U_FAILURE(status)) {
    // Only invalid UTF-8 gets here: compare as sort keys do (replacement
    // characters), so that the order stays one order.
    const std::string ka = SortKey(a), kb = SortKey(b);
    return ka < kb ? -1 : (ka > kb ? 1 : 0);
  }
  return r == UCOL_LESS ? -1 : (r == UCOL_GREATER ? 1 : 0);
}

std::string Collator::SortKey(std::string_view s) const {
  const std::u16string text = ToUtf16(s);
  std::string key(64 + text.size() * 4, '\0');
  for (;;) {
    const int32_t n = ucol_getSortKey(collator_, reinterpret_cast<const UChar*>(text.data()),
                                      static_cast<int32_t>(text.size()),
                                      reinterpret_cast<uint8_t*>(key.data()),
                                      static_cast<int32_t>(key.size()));
    if (n <= static_cast<int32_t>(key.size())) {
      key.resize(n > 0 ? static_cast<size_t>(n - 1) : 0);  // drop the terminating NUL
      return key;
    }
    key.assign(static_cast<size_t>(n), '\0');
  }
}

bool Collator::Same(const Collator* a, const Collator* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a == b || a->spec_ == b->spec_;
}

bool IsCollatable(const Element& value) {
  switch (value.type()) {
    case BsonType::kString:
    case BsonType::kSymbol:
      return true;
    case BsonType::kDocument:
    case BsonType::kArray:
      for (Element e : value.type() == BsonType::kArray ? value.Array() : value.Document()) {
        if (IsCollatable(e)) return true;
      }
      return false;
    default:
      return false;
  }
}

namespace {

void AppendCollationKey(BsonBuilder* b, std::string_view key, const Element& value,
                        const Collator& collator) {
  switch (value.type()) {
    case BsonType::kString:
    case BsonType::kSymbol:
      b->AppendString(key, collator.SortKey(value.String()));
      return;
    case BsonType::kDocument:
    case BsonType::kArray: {
      const bool array = value.type() == BsonType::kArray;
      if (array) {
        b->OpenArray(key);
      } else {
        b->OpenDocument(key);
      }
      for (Element e : array ? value.Array() : value.Document()) {
        AppendCollationKey(b, e.key(), e, collator);
      }
      b->Close();
      return;
    }
    default:
      b->AppendElementAs(key, value);
  }
}

}  // namespace

Value CollationKeyOf(const Element& value, const Collator* collator) {
  if (collator == nullptr || !IsCollatable(value)) return Value::FromElement(value);
  BsonBuilder b;
  AppendCollationKey(&b, "", value, *collator);
  Document doc = std::move(b).Build();
  return Value::FromElement(*doc.begin());
}

}  // namespace rockdoc
