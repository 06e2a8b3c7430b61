// TextMatchExpression (query/match_expression.h): $text's argument.
#include "query/match_expression.h"

namespace rockdoc {

StatusOr<std::unique_ptr<MatchExpression>> TextMatchExpression::Parse(const Element& e) {
  if (e.type() != BsonType::kDocument) {
    return Status(ErrorCode::kBadValue, "$text expects an object");
  }
  std::unique_ptr<TextMatchExpression> text(new TextMatchExpression());
  bool has_search = false;
  auto string_field = [](const Element& f, std::string* out) {
    if (!f.IsString()) {
      return Status(ErrorCode::kTypeMismatch, std::string(f.key()) + " requires a string value");
    }
    *out = std::string(f.String());
    return Status::OK();
  };
  auto bool_field = [](const Element& f, bool* out) {
    if (!f.IsBool()) {
      return Status(ErrorCode::kTypeMismatch, std::string(f.key()) + " requires a boolean value");
    }
    *out = f.Bool();
    return Status::OK();
  };
  for (Element f : e.Document()) {
    std::string_view name = f.key();
    if (name == "$search") {
      ROCKDOC_RETURN_IF_ERROR(string_field(f, &text->search_));
      has_search = true;
    } else if (name == "$language") {
      ROCKDOC_RETURN_IF_ERROR(string_field(f, &text->language_));
    } else if (name == "$caseSensitive") {
      ROCKDOC_RETURN_IF_ERROR(bool_field(f, &text->case_sensitive_));
    } else if (name == "$diacriticSensitive") {
      ROCKDOC_RETURN_IF_ERROR(bool_field(f, &text->diacritic_sensitive_));
    } else {
      return Status(ErrorCode::kBadValue, "extra fields in $text");
    }
  }
  if (!has_search) return Status(ErrorCode::kFailedToParse, "$text requires a $search field");
  return std::unique_ptr<MatchExpression>(std::move(text));
}

bool TextMatchExpression::Matches(DocumentView, MatchDetails*) const {
  RecordMatchError(Status(ErrorCode::kBadValue, "$text is not allowed in this context"));
  return false;
}

void TextMatchExpression::SerializeTo(BsonBuilder* builder) const {
  builder->OpenDocument("$text");
  builder->AppendString("$search", search_);
  builder->AppendString("$language", language_);
  builder->AppendBool("$caseSensitive", case_sensitive_);
  builder->AppendBool("$diacriticSensitive", diacritic_sensitive_);
  builder->Close();
}

}  // namespace rockdoc
