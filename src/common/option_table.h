// common/option_table.h: decoding a command's options document from a
// table of known option names, so that no option is ever accepted and
// silently dropped.
//
// Each option a command knows has one row: a decoder that stores its value,
// or no decoder for an option MongoDB has and rockdoc does not implement
// (an error until it is implemented). A name with no row is an error too.
// Adding an option is adding a row; forgetting one fails loudly.
//
// Example:
//   constexpr OptionField<Opts> kTable[] = {
//       {"unique", [](const Element& e, Opts* o) { ...; return Status::OK(); }},
//       {"collation", nullptr},  // known, not supported
//   };
//   ROCKDOC_RETURN_IF_ERROR(DecodeOptions(doc, kTable, &opts, unknown, unsupported));
//
// Thread safety: stateless.
#ifndef ROCKDOC_COMMON_OPTION_TABLE_H_
#define ROCKDOC_COMMON_OPTION_TABLE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

template <typename Options>
struct OptionField {
  std::string_view name;
  // Stores the value in *out, or returns why it is invalid. Null: a known
  // option that rockdoc does not implement.
  Status (*decode)(const Element& value, Options* out);
};

// Decodes every field of `doc` (validated first: it may come from outside)
// through `table`. Names are checked first, as
// MongoDB checks an index specification's field names before any value: a
// name with no row gives unknown(name). Then, in document order, a row with
// no decoder gives unsupported(name) and a decoder's error is returned.
template <typename Options, size_t N, typename Unknown, typename Unsupported>
Status DecodeValidatedOptions(DocumentView doc, const OptionField<Options> (&table)[N],
                              Options* out, Unknown unknown, Unsupported unsupported);

template <typename Options, size_t N, typename Unknown, typename Unsupported>
Status DecodeOptions(DocumentView doc, const OptionField<Options> (&table)[N], Options* out,
                     Unknown unknown, Unsupported unsupported) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(doc.bytes()));
  return DecodeValidatedOptions(doc, table, out, unknown, unsupported);
}

// DecodeOptions of a document already validated (a part of a command
// validated whole).
template <typename Options, size_t N, typename Unknown, typename Unsupported>
Status DecodeValidatedOptions(DocumentView doc, const OptionField<Options> (&table)[N],
                              Options* out, Unknown unknown, Unsupported unsupported) {
  auto find = [&](std::string_view name) -> const OptionField<Options>* {
    for (const OptionField<Options>& row : table) {
      if (row.name == name) return &row;
    }
    return nullptr;
  };
  // The rows found by the first pass, for the second (most documents have
  // few fields; longer ones look their rows up again).
  constexpr size_t kRemembered = 16;
  const OptionField<Options>* rows[kRemembered];
  size_t n = 0;
  for (Element e : doc) {
    const OptionField<Options>* row = find(e.key());
    if (row == nullptr) return unknown(e.key());
    if (n < kRemembered) rows[n] = row;
    ++n;
  }
  size_t i = 0;
  for (Element e : doc) {
    const OptionField<Options>* row = i < kRemembered ? rows[i] : find(e.key());
    ++i;
    if (row->decode == nullptr) return unsupported(e.key());
    ROCKDOC_RETURN_IF_ERROR(row->decode(e, out));
  }
  return Status::OK();
}

// An option whose value is a document kept for later decoding (a
// `collation`, checked where it is used): TypeMismatch "BSON field 'name'
// is the wrong type 'int', expected type 'object'" otherwise.
inline Status DocumentOption(const Element& e, std::string_view name,
                             std::optional<Document>* out) {
  if (e.type() != BsonType::kDocument) {
    return Status(ErrorCode::kTypeMismatch, "BSON field '" + std::string(name) +
                                                "' is the wrong type '" +
                                                std::string(BsonTypeAlias(e.type())) +
                                                "', expected type 'object'");
  }
  *out = Document::AdoptValidated(std::string(e.Document().bytes()));
  return Status::OK();
}

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMON_OPTION_TABLE_H_
