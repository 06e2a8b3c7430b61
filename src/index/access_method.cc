#include "index/access_method.h"

#include <cmath>
#include <map>

#include "bson/append_number.h"
#include "common/mutex.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

Status CannotCreateIndex(std::string message) {
  return Status(ErrorCode::kCannotCreateIndex, std::move(message));
}

}  // namespace

Status CheckNoSphereVersion(const IndexOptions& options) {
  if (!options.sphere_index_version) return Status::OK();
  return Status(ErrorCode::kCannotCreateIndex,
                "The option '2dsphereIndexVersion' is only for 2dsphere indexes");
}

Status RefuseTextOptions(const IndexOptions& options) {
  const char* name = options.weights              ? "weights"
                     : options.default_language   ? "default_language"
                     : options.language_override  ? "language_override"
                     : options.text_index_version ? "textIndexVersion"
                                                  : nullptr;
  if (name == nullptr) return Status::OK();
  return Status(ErrorCode::kInvalidIndexSpecificationOption,
                std::string("The field '") + name + "' is only valid for text indexes");
}

namespace {

// The ordered index: keystring keys in the key pattern's directions.
class Btree final : public IndexAccessMethod {
 public:
  std::string_view kind() const override { return "btree"; }

  Status ValidateKeyField(const Element& e) const override {
    if (!e.IsNumber()) {
      return CannotCreateIndex("Values in v:2 index key pattern cannot be of type " +
                               std::string(BsonTypeAlias(e.type())) +
                               ". Only numbers > 0, numbers < 0, and strings are allowed.");
    }
    const double value = e.NumberAsDouble();
    if (std::isnan(value))
      return CannotCreateIndex("Values in the index key pattern cannot be NaN.");
    if (value == 0.0) return CannotCreateIndex("Values in the index key pattern cannot be 0.");
    return Status::OK();
  }

  Status ValidateOptions(const IndexDescriptor& index, const IndexOptions& options) const override {
    ROCKDOC_RETURN_IF_ERROR(CheckNoSphereVersion(options));
    ROCKDOC_RETURN_IF_ERROR(RefuseTextOptions(options));
    if (!options.expire_after_seconds) return Status::OK();
    if (index.num_fields() != 1) {
      return CannotCreateIndex(
          "TTL indexes are single-field indexes, compound indexes do not support TTL. "
          "Index spec: " +
          ToJson(index.ToSpec(), JsonFormat::kShell));
    }
    if (index.field_names()[0] == "_id") {
      return CannotCreateIndex(
          "The field 'expireAfterSeconds' is not valid for an _id index specification.");
    }
    return Status::OK();
  }

  void AppendOptions(const IndexDescriptor& index, IndexOptionsForm form,
                     BsonBuilder* out) const override {
    if (form == IndexOptionsForm::kCatalog) {
      out->AppendBool("unique", index.unique());
      out->AppendBool("sparse", index.sparse());
    } else {
      if (index.unique()) out->AppendBool("unique", true);
      if (index.sparse()) out->AppendBool("sparse", true);
    }
    // Both forms: optional in the catalog (absent in entries written before
    // it was kept).
    if (index.background()) out->AppendBool("background", *index.background());
    if (index.partial()) {
      out->AppendDocument("partialFilterExpression", index.partial_filter_expression());
    }
    if (index.ttl()) {
      if (form == IndexOptionsForm::kCatalog) {
        out->AppendInt64("expireAfterSeconds", index.expire_after_seconds());
      } else {
        AppendNumber(out, "expireAfterSeconds", index.expire_after_seconds());
      }
    }
    // Only when hidden, in both forms (MongoDB never lists hidden: false).
    if (index.hidden()) out->AppendBool("hidden", true);
    // Both forms: the normalized specification (MongoDB lists every field).
    if (index.collator() != nullptr) out->AppendDocument("collation", index.collator()->spec());
  }

  StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const override {
    Element unique = entry.Get("unique"), sparse = entry.Get("sparse");
    Element partial = entry.Get("partialFilterExpression");
    Element ttl = entry.Get("expireAfterSeconds"), hidden = entry.Get("hidden");
    if (unique.type() != BsonType::kBool || sparse.type() != BsonType::kBool ||
        (partial.ok() && partial.type() != BsonType::kDocument) ||
        (ttl.ok() && ttl.type() != BsonType::kInt64) ||
        (hidden.ok() && hidden.type() != BsonType::kBool)) {
      return DamagedIndexEntry("missing or mistyped options in " +
                               ToJson(entry, JsonFormat::kShell));
    }
    IndexOptions options;
    options.unique = unique.Bool();
    options.sparse = sparse.Bool();
    if (partial.ok()) {
      options.partial_filter_expression =
          Document::AdoptValidated(std::string(partial.Document().bytes()));
    }
    if (ttl.ok()) options.expire_after_seconds = ttl.Int64();
    options.hidden = hidden.ok() && hidden.Bool();
    Element background = entry.Get("background");
    if (background.type() == BsonType::kBool) options.background = background.Bool();
    Element collation = entry.Get("collation");
    if (collation.ok()) {
      if (collation.type() != BsonType::kDocument) {
        return DamagedIndexEntry("mistyped collation in " + ToJson(entry, JsonFormat::kShell));
      }
      options.collation = Document::AdoptValidated(std::string(collation.Document().bytes()));
    }
    return options;
  }

  Status GetKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                 MultikeyPaths* multikey_paths) const override {
    return GenerateIndexKeys(index, doc, keys, multikey_paths);
  }

  IndexEntryFormat EntryFormat(const IndexDescriptor& index) const override {
    return index.unique() ? IndexEntryFormat::kUnique : IndexEntryFormat::kStandard;
  }

  Status DecodeKey(const IndexDescriptor& index, const IndexEntryView& entry,
                   BsonBuilder* out) const override {
    return DecodeIndexKey(index, entry, out);
  }

  bool IntervalsFor(const IndexDescriptor& index, size_t, const MatchExpression& leaf,
                    std::vector<Interval>* out, BoundsTightness* tightness) const override {
    const Collator* collator = index.collator();
    if (collator == nullptr) return IntervalsForLeaf(leaf, out, tightness);
    // Keys are sort keys: a regex's prefix bounds mean nothing there (the
    // filter tests it), and every bound is the sort key of its value.
    if (leaf.type() == MatchType::kRegex) return false;
    if (leaf.type() == MatchType::kIn &&
        !static_cast<const InMatchExpression&>(leaf).regexes().empty()) {
      return false;
    }
    if (!IntervalsForLeaf(leaf, out, tightness)) return false;
    for (Interval& i : *out) {
      i.start = CollationKeyOf(i.start.element(), collator);
      i.end = CollationKeyOf(i.end.element(), collator);
    }
    *out = UnionIntervals(std::move(*out));
    return true;
  }
  bool KeysAreOrdered() const override { return true; }
  bool KeysHoldValues() const override { return true; }

  void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const override {
    out->AppendDocument("keyPattern", index.key_pattern());
    out->AppendString("indexName", index.name());
    out->AppendBool("isMultiKey", index.is_multikey());
    out->OpenDocument("multiKeyPaths");
    for (size_t i = 0; i < index.num_fields(); ++i) {
      out->OpenArray(index.field_names()[i]);
      for (const std::string& p : index.MultikeyPrefixes(i)) out->AppendString("", p);
      out->Close();
    }
    out->Close();
    out->AppendBool("isUnique", index.unique());
    out->AppendBool("isSparse", index.sparse());
    out->AppendBool("isPartial", index.partial());
    out->AppendInt32("indexVersion", kIndexVersion);
  }
};

// The kinds MongoDB names by a string value that rockdoc does not build
// (unless one is registered under that name).
bool IsMongoPlugin(std::string_view name) {
  return name == "2d" || name == "2dsphere" || name == "text" || name == "hashed" ||
         name == "geoHaystack" || name == "wildcard" || name == "columnstore";
}

Status NotSupported(std::string_view kind) {
  return Status(ErrorCode::kNotImplemented,
                std::string(kind) + " indexes are not supported by rockdoc" +
                    (kind == "2d" ? "; use a 2dsphere index (legacy points are indexed there too)"
                                  : ""));
}

class Registry {
 public:
  static Registry& Get() {
    static Registry* registry = new Registry();  // never destroyed: used until exit
    return *registry;
  }
  Registry() {
    // The built-in kinds other than btree (which numeric values select).
    MutexLock g(&mu_);
    kinds_.emplace(std::string(HashedAccessMethod().kind()), &HashedAccessMethod());
    kinds_.emplace(std::string(Geo2dsphereAccessMethod().kind()), &Geo2dsphereAccessMethod());
    kinds_.emplace(std::string(TextAccessMethod().kind()), &TextAccessMethod());
    kinds_.emplace(std::string(VectorSearchAccessMethod().kind()), &VectorSearchAccessMethod());
  }
  bool Add(std::string name, const IndexAccessMethod* method) {
    MutexLock g(&mu_);
    return kinds_.emplace(std::move(name), method).second;
  }
  const IndexAccessMethod* Find(std::string_view name) const {
    MutexLock g(&mu_);
    auto it = kinds_.find(name);
    return it == kinds_.end() ? nullptr : it->second;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, const IndexAccessMethod*, std::less<>> kinds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

Status DamagedIndexEntry(std::string message) {
  return Status(ErrorCode::kDataCorruptionDetected,
                "catalog index entry is damaged: " + std::move(message));
}

const IndexAccessMethod& BtreeAccessMethod() {
  static const Btree* btree = new Btree();
  return *btree;
}

StatusOr<const IndexAccessMethod*> AccessMethodFor(DocumentView key_pattern) {
  const IndexAccessMethod* found = nullptr;
  std::string_view plugin;
  for (Element e : key_pattern) {
    std::string_view field = e.key();
    if (e.IsNumber() && (field == "$**" || field.ends_with(".$**"))) {
      return NotSupported("wildcard");
    }
    if (!e.IsString()) continue;
    std::string_view name = e.String();
    if (found != nullptr) {
      if (name == plugin) continue;
      return CannotCreateIndex("Can't use more than one index plugin for a single index.");
    }
    if (const IndexAccessMethod* registered = Registry::Get().Find(name)) {
      found = registered;
      plugin = name;
      continue;
    }
    if (!IsMongoPlugin(name)) {
      return CannotCreateIndex("Unknown index plugin '" + std::string(name) + "'");
    }
    if (name == "geoHaystack") {
      return CannotCreateIndex("GeoHaystack indexes cannot be created in version 5.0 and above");
    }
    if (name == "wildcard") {
      return CannotCreateIndex(
          "The key pattern value for an 'wildcard' index must be a non-zero number, not a "
          "string.");
    }
    return NotSupported(name);
  }
  return found != nullptr ? found : &BtreeAccessMethod();
}

bool RegisterIndexKind(std::string plugin, const IndexAccessMethod* method) {
  return Registry::Get().Add(std::move(plugin), method);
}

}  // namespace rockdoc::internal
