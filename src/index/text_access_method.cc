// The text index kind (index/text_index.h).
#include <algorithm>
#include <cmath>

#include "index/access_method.h"
#include "index/text_index.h"
#include "keystring/keystring.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

Status CannotCreateIndex(std::string message) {
  return Status(ErrorCode::kCannotCreateIndex, std::move(message));
}

constexpr std::string_view kText = "text";
constexpr int32_t kTextIndexVersion = 3;

// Calls fn on every string at `path` (from part `part` on) below `at`,
// through arrays as MongoDB's text key generation walks them.
void StringsAtPath(const Element& at, const FieldPath& path, size_t part,
                   const std::function<void(std::string_view)>& fn) {
  if (at.type() == BsonType::kArray) {
    for (Element e : at.Array()) StringsAtPath(e, path, part, fn);
    return;
  }
  if (part == path.size()) {
    if (at.IsString()) fn(at.String());
    return;
  }
  if (at.type() != BsonType::kDocument) return;
  Element next = at.Document().Get(path.part(part));
  if (next.ok()) StringsAtPath(next, path, part + 1, fn);
}

// Every string below `doc`, with its dotted path ("$**").
void AllStrings(DocumentView doc, const std::string& prefix,
                const std::function<void(const std::string&, std::string_view)>& fn) {
  for (Element e : doc) {
    std::string path = prefix.empty() ? std::string(e.key()) : prefix + "." + std::string(e.key());
    std::function<void(const Element&)> visit = [&](const Element& v) {
      if (v.IsString()) {
        fn(path, v.String());
      } else if (v.type() == BsonType::kDocument) {
        AllStrings(v.Document(), path, fn);
      } else if (v.type() == BsonType::kArray) {
        for (Element x : v.Array()) visit(x);
      }
    };
    visit(e);
  }
}

// The value at a prefix or suffix path: a scalar (missing: null); an array
// is MongoDB's 16675.
Status ScalarAtPath(DocumentView doc, const FieldPath& path, Element* out) {
  *out = Element();
  DocumentView at = doc;
  for (size_t i = 0; i < path.size(); ++i) {
    Element e = at.Get(path.part(i));
    if (!e.ok()) return Status::OK();
    if (e.type() == BsonType::kArray) {
      return Status(static_cast<ErrorCode>(16675),
                    "cannot have a multi-key as a prefix to a text index");
    }
    if (i + 1 == path.size()) {
      *out = e;
      return Status::OK();
    }
    if (e.type() != BsonType::kDocument) return Status::OK();
    at = e.Document();
  }
  return Status::OK();
}

const TextIndexSpec& SpecOf(const IndexDescriptor& index) {
  return static_cast<const TextIndexSpec&>(*index.kind_state());
}

class Text final : public IndexAccessMethod {
 public:
  std::string_view kind() const override { return kText; }

  Status ValidateKeyField(const Element& e) const override {
    if (e.IsString()) return Status::OK();  // AccessMethodFor chose this kind by the name
    return BtreeAccessMethod().ValidateKeyField(e);
  }

  Status Normalize(Document* key_pattern, IndexOptions* options) const override {
    BsonBuilder key;
    std::map<std::string, double> weights;
    bool kept_form = key_pattern->Get("_fts").ok();
    bool in_text = false, after_text = false;
    for (Element e : *key_pattern) {
      std::string_view field = e.key();
      if (kept_form) {
        if (field == "_fts" && !(e.IsString() && e.String() == kText)) {
          return CannotCreateIndex("expecting _fts:\"text\"");
        }
        if (field == "_ftsx" && !(e.IsNumber() && e.NumberAsDouble() == 1)) {
          return CannotCreateIndex("expecting _ftsx:1");
        }
        key.AppendElement(e);
        continue;
      }
      if (e.IsString()) {
        if (after_text) {
          return CannotCreateIndex(
              "text index fields must be contiguous in the key pattern: " +
              ToJson(*key_pattern, JsonFormat::kShell));
        }
        if (!in_text) {
          key.AppendString("_fts", kText);
          key.AppendInt32("_ftsx", 1);
        }
        in_text = true;
        weights[std::string(field)] = 1;
        continue;
      }
      if (in_text) after_text = true;
      key.AppendElement(e);
    }
    if (options->weights) {
      for (Element w : *options->weights) {
        if (!w.IsNumber()) return CannotCreateIndex("weight for text index needs numeric type");
        const double v = w.NumberAsDouble();
        if (!(v > 0 && v < 100000)) {
          return CannotCreateIndex(
              "text index weight must be in the exclusive interval (0,100000) but found: " +
              ValueToJson(w, JsonFormat::kShell));
        }
        if (w.key().empty()) return CannotCreateIndex("text index weights need a field name");
        weights[std::string(w.key())] = v;
      }
    } else if (kept_form) {
      return CannotCreateIndex("text index key pattern {_fts: \"text\", _ftsx: 1} needs weights");
    }
    if (options->text_index_version && *options->text_index_version != kTextIndexVersion) {
      const int32_t v = *options->text_index_version;
      if (v == 1 || v == 2) {
        return Status(ErrorCode::kNotImplemented,
                      "textIndexVersion " + std::to_string(v) +
                          " is not supported by rockdoc; omit it or use 3");
      }
      return Status(static_cast<ErrorCode>(17364),
                    "Currently only textIndexVersion 1 or 2 or 3 is supported, not " +
                        std::to_string(v));
    }
    std::string language = options->default_language.value_or("english");
    std::optional<std::string> canonical = fts::CanonicalLanguage(language);
    if (!canonical) {
      return Status(ErrorCode::kBadValue, "default_language: \"" + language + "\" is not supported");
    }
    std::string override_field = options->language_override.value_or("language");
    if (override_field.empty() || override_field[0] == '$' ||
        override_field.find('.') != std::string::npos) {
      return CannotCreateIndex("language_override is not valid: \"" + override_field + "\"");
    }
    if (options->unique) {
      return CannotCreateIndex("Index type 'text' does not support unique indexes.");
    }
    if (options->expire_after_seconds) {
      return CannotCreateIndex("Index type 'text' does not support TTL indexes.");
    }
    if (options->collation) {
      return CannotCreateIndex("Index type 'text' does not support collation: " +
                               ToJson(*options->collation, JsonFormat::kShell));
    }
    BsonBuilder w;
    for (const auto& [field, weight] : weights) {
      int64_t whole = 0;
      if (std::trunc(weight) == weight && weight < 2147483648.0) {
        whole = static_cast<int64_t>(weight);
        w.AppendInt32(field, static_cast<int32_t>(whole));
      } else {
        w.AppendDouble(field, weight);
      }
    }
    *key_pattern = std::move(key).Build();
    options->weights = std::move(w).Build();
    options->default_language = language;
    options->language_override = override_field;
    options->text_index_version = kTextIndexVersion;
    return Status::OK();
  }

  std::shared_ptr<const IndexKindState> MakeState(DocumentView key_pattern,
                                                  const IndexOptions& options) const override {
    return std::make_shared<TextIndexSpec>(key_pattern, options);
  }

  bool SameKindOptions(const IndexDescriptor& a, const IndexDescriptor& b) const override {
    const TextIndexSpec &x = SpecOf(a), &y = SpecOf(b);
    return x.weights() == y.weights() && x.default_language_given() == y.default_language_given() &&
           x.language_override() == y.language_override();
  }
  bool OnePerCollection() const override { return true; }

  Status ValidateOptions(const IndexDescriptor&, const IndexOptions& options) const override {
    return CheckNoSphereVersion(options);  // Normalize checked the text options
  }

  void AppendOptions(const IndexDescriptor& index, IndexOptionsForm form,
                     BsonBuilder* out) const override {
    BtreeAccessMethod().AppendOptions(index, form, out);
    const TextIndexSpec& spec = SpecOf(index);
    out->AppendDocument("weights", spec.weights());
    out->AppendString("default_language", spec.default_language_given());
    out->AppendString("language_override", spec.language_override());
    out->AppendInt32("textIndexVersion", kTextIndexVersion);
  }

  StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const override {
    ROCKDOC_ASSIGN_OR_RETURN(IndexOptions options, BtreeAccessMethod().OptionsFromCatalog(entry));
    Element weights = entry.Get("weights"), language = entry.Get("default_language");
    Element override_field = entry.Get("language_override"), version = entry.Get("textIndexVersion");
    if (weights.type() != BsonType::kDocument || !language.IsString() ||
        !override_field.IsString() || version.type() != BsonType::kInt32) {
      return DamagedIndexEntry("missing or mistyped text options in " +
                               ToJson(entry, JsonFormat::kShell));
    }
    options.weights = Document::AdoptValidated(std::string(weights.Document().bytes()));
    options.default_language = std::string(language.String());
    options.language_override = std::string(override_field.String());
    options.text_index_version = version.Int32();
    return options;
  }

  Status GetKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                 MultikeyPaths* multikey_paths) const override {
    if (!BeginIndexKeys(index, doc, keys, multikey_paths)) return Status::OK();
    const TextIndexSpec& spec = SpecOf(index);
    ROCKDOC_ASSIGN_OR_RETURN(auto scores, spec.Scores(doc));
    const size_t prefix = spec.prefix_fields();
    std::vector<Element> values(index.num_fields());
    for (size_t i = 0; i < index.num_fields(); ++i) {
      if (i == prefix || i == prefix + 1) continue;
      ROCKDOC_RETURN_IF_ERROR(ScalarAtPath(doc, index.field_paths()[i], &values[i]));
    }
    for (const auto& [term, score] : scores) {
      keystring::Builder b(index.descending_bits());
      for (size_t i = 0; i < index.num_fields(); ++i) {
        if (i == prefix) {
          BsonBuilder t;
          t.AppendString("", term);
          Document d = std::move(t).Build();
          b.Append(d.Get(""));
        } else if (i == prefix + 1) {
          BsonBuilder t;
          t.AppendDouble("", score);
          Document d = std::move(t).Build();
          b.Append(d.Get(""));
        } else {
          AppendKeyValue(&b, values[i], nullptr);
        }
      }
      keys->push_back(IndexKey{b.bytes(), b.type_bits()});
    }
    std::sort(keys->begin(), keys->end(),
              [](const IndexKey& a, const IndexKey& b) { return a.bytes < b.bytes; });
    keys->erase(std::unique(keys->begin(), keys->end(),
                            [](const IndexKey& a, const IndexKey& b) { return a.bytes == b.bytes; }),
                keys->end());
    // As MongoDB's, a text index is multikey (many terms per document).
    if (multikey_paths != nullptr && keys->size() > 1) (*multikey_paths)[prefix].insert(0);
    return Status::OK();
  }

  IndexEntryFormat EntryFormat(const IndexDescriptor&) const override {
    return IndexEntryFormat::kStandard;
  }

  Status DecodeKey(const IndexDescriptor& index, const IndexEntryView& entry,
                   BsonBuilder* out) const override {
    return DecodeIndexKey(index, entry, out);  // {prefix..., _fts: term, _ftsx: score, ...}
  }

  bool IntervalsFor(const IndexDescriptor& index, size_t field, const MatchExpression& leaf,
                    std::vector<Interval>* out, BoundsTightness* tightness) const override {
    const size_t prefix = SpecOf(index).prefix_fields();
    if (field >= prefix && field <= prefix + 1) return false;
    if (leaf.type() != MatchType::kEq) return false;  // the prefix takes equalities only
    return BtreeAccessMethod().IntervalsFor(index, field, leaf, out, tightness);
  }

  bool KeysAreOrdered() const override { return false; }
  bool KeysHoldValues() const override { return false; }
  bool AnswersPlainQueries() const override { return false; }
  const TextIndexSpec* TextSearch(const IndexDescriptor& index) const override {
    return &SpecOf(index);
  }

  void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const override {
    BtreeAccessMethod().AppendExplain(index, out);
  }
};

}  // namespace

TextIndexSpec::TextIndexSpec(DocumentView key_pattern, const IndexOptions& options)
    : default_language_(options.default_language.value_or("english")),
      default_language_given_(default_language_),
      language_override_(options.language_override.value_or("language")) {
  if (options.weights) weights_ = *options.weights;
  for (Element w : weights_) {
    if (w.key() == "$**") {
      wildcard_weight_ = w.NumberAsDouble();
    } else {
      fields_.emplace_back(FieldPath(std::string(w.key())), w.NumberAsDouble());
    }
  }
  if (std::optional<std::string> c = fts::CanonicalLanguage(default_language_)) {
    default_language_ = *c;
  }
  for (Element e : key_pattern) {
    if (e.key() == "_fts") break;
    ++prefix_fields_;
  }
}

StatusOr<std::string> TextIndexSpec::DocumentLanguage(DocumentView doc) const {
  Element e = doc.Get(language_override_);
  if (!e.ok() || !e.IsString()) return default_language_;
  std::optional<std::string> c = fts::CanonicalLanguage(e.String());
  if (!c) {
    return Status(static_cast<ErrorCode>(17262),
                  "language override unsupported: " + std::string(e.String()));
  }
  return *c;
}

void TextIndexSpec::ForEachString(DocumentView doc,
                                  const std::function<void(std::string_view, double)>& fn) const {
  for (const auto& [path, weight] : fields_) {
    Element first = doc.Get(path.part(0));
    if (!first.ok()) continue;
    const double w = weight;
    StringsAtPath(first, path, 1, [&](std::string_view s) { fn(s, w); });
  }
  if (wildcard_weight_ > 0) {
    AllStrings(doc, "", [&](const std::string& path, std::string_view s) {
      for (const auto& f : fields_) {
        if (f.first.dotted() == path) return;  // counted with its own weight
      }
      if (path == language_override_) return;
      fn(s, wildcard_weight_);
    });
  }
}

StatusOr<std::map<std::string, double>> TextIndexSpec::Scores(DocumentView doc) const {
  ROCKDOC_ASSIGN_OR_RETURN(std::string language, DocumentLanguage(doc));
  std::map<std::string, double> scores;
  ForEachString(doc, [&](std::string_view s, double weight) {
    fts::ScoreString(s, language, weight, &scores);
  });
  return scores;
}

bool TextIndexSpec::Matches(const fts::TextQuery& query, DocumentView doc) const {
  const bool sensitive = query.options.case_sensitive || query.options.diacritic_sensitive;
  // The index found a term: with nothing else to check, the document matches.
  if (!sensitive && query.negated_terms.empty() && query.phrases.empty() &&
      query.negated_phrases.empty()) {
    return true;
  }
  bool negated = false, sensitive_term = !sensitive;
  std::vector<std::string> folded;
  ForEachString(doc, [&](std::string_view s, double) {
    for (const std::string& t : fts::Terms(s, query.language, query.options)) {
      if (query.negated_terms.count(t) > 0) negated = true;
      if (query.sensitive_terms.count(t) > 0) sensitive_term = true;
    }
    folded.push_back(fts::Fold(s, query.options));
  });
  if (negated || !sensitive_term) return false;
  auto contains = [&](const std::string& phrase) {
    const std::string p = fts::Fold(phrase, query.options);
    for (const std::string& f : folded) {
      if (f.find(p) != std::string::npos) return true;
    }
    return false;
  };
  for (const std::string& p : query.phrases) {
    if (!contains(p)) return false;
  }
  for (const std::string& p : query.negated_phrases) {
    if (contains(p)) return false;
  }
  return true;
}

const IndexAccessMethod& TextAccessMethod() {
  static const Text* text = new Text();
  return *text;
}

}  // namespace rockdoc::internal
