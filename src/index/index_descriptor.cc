#include "index/index_descriptor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/clock.h"
#include "index/access_method.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// MongoDB limits the key pattern's BSON size.
constexpr size_t kMaxKeyPatternBytes = 2048;

Status CannotCreateIndex(std::string message) {
  return Status(ErrorCode::kCannotCreateIndex, std::move(message));
}

// MongoDB allows only these in a partialFilterExpression: equality,
// $exists: true, ranges, $type, $in, and $and / $or of them.
Status CheckPartialFilter(const MatchExpression& expr, int level) {
  switch (expr.type()) {
    case MatchType::kEq:
    case MatchType::kLt:
    case MatchType::kLte:
    case MatchType::kGt:
    case MatchType::kGte:
    case MatchType::kExists:
    case MatchType::kType:
    case MatchType::kIn:
      return Status::OK();
    case MatchType::kAnd:
    case MatchType::kOr:
      for (size_t i = 0; i < expr.num_children(); ++i) {
        ROCKDOC_RETURN_IF_ERROR(CheckPartialFilter(*expr.child(i), level + 1));
      }
      return Status::OK();
    default:
      return CannotCreateIndex("Expression not supported in partial index: " + expr.DebugString());
  }
}

// "1", "-1", "1.5": how a direction value appears in a default index name.
std::string DirectionText(const Element& e) {
  int64_t i = 0;
  if (e.ExactInt64(&i)) return std::to_string(i);
  // The shortest form that reads back as the same double.
  const double value = e.NumberAsDouble();
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

}  // namespace

std::string IndexDescriptor::DefaultName(DocumentView key_pattern) {
  std::string name;
  for (Element e : key_pattern) {
    if (!name.empty()) name += '_';
    name += e.key();
    name += '_';
    if (e.IsNumber()) {
      name += DirectionText(e);
    } else if (e.type() == BsonType::kString) {
      name += e.String();
    }
  }
  return name;
}

Status IndexDescriptor::Init(DocumentView given_pattern, const IndexOptions& given_options) {
  // The kind's kept form of the pattern and options (text rewrites both).
  Document normalized_pattern = Document::AdoptValidated(std::string(given_pattern.bytes()));
  IndexOptions normalized = given_options;
  if (!given_pattern.empty() && given_pattern.size() <= kMaxKeyPatternBytes) {
    auto method = AccessMethodFor(given_pattern);
    if (method.ok()) {
      ROCKDOC_RETURN_IF_ERROR((*method)->Normalize(&normalized_pattern, &normalized));
    }
  }
  DocumentView key_pattern = normalized_pattern;
  const IndexOptions& options = normalized;
  if (key_pattern.size() > kMaxKeyPatternBytes) {
    return CannotCreateIndex("Index key pattern too large.");
  }
  if (key_pattern.empty()) return CannotCreateIndex("Index keys cannot be empty.");
  std::vector<std::string_view> seen;
  for (Element e : key_pattern) {
    if (std::find(seen.begin(), seen.end(), e.key()) != seen.end()) {
      return BadValue("The field '" + std::string(e.key()) +
                      "' appears multiple times in the index key pattern " +
                      ToJson(key_pattern, JsonFormat::kShell));
    }
    seen.push_back(e.key());
  }
  ROCKDOC_ASSIGN_OR_RETURN(access_method_, AccessMethodFor(key_pattern));
  int field = 0;
  for (Element e : key_pattern) {
    ROCKDOC_RETURN_IF_ERROR(access_method_->ValidateKeyField(e));
    if (e.IsNumber() && e.NumberAsDouble() < 0 && field < 32) {
      descending_bits_ |= uint32_t{1} << field;
    }
    std::string_view path = e.key();
    if (path.empty()) return CannotCreateIndex("Index keys cannot be an empty field.");
    size_t start = 0;
    size_t part_index = 0;
    while (true) {
      size_t dot = path.find('.', start);
      std::string_view part = path.substr(start, dot == std::string_view::npos ? dot : dot - start);
      if (part.empty()) return CannotCreateIndex("Index keys cannot contain an empty field.");
      // DBRef fields ($ref, $id, $db) may be indexed below the top level.
      bool dbref = part_index > 0 && (part == "$ref" || part == "$id" || part == "$db");
      if (part[0] == '$' && !dbref) {
        return CannotCreateIndex(
            "Index key contains an illegal field name: field name starts with '$'.");
      }
      if (dot == std::string_view::npos) break;
      start = dot + 1;
      ++part_index;
    }
    field_names_.emplace_back(path);
    ++field;
  }
  // MongoDB's Ordering holds one direction bit per field (as
  // descending_bits_ does): at most 32.
  if (field > 32) return Status(static_cast<ErrorCode>(13103), "too many compound keys");
  for (const std::string& f : field_names_) {
    field_name_views_.emplace_back(f);
    field_paths_.emplace_back(f);
  }
  key_pattern_ = Document::AdoptValidated(std::string(key_pattern.bytes()));

  std::string name = options.name.empty() ? DefaultName(given_pattern) : options.name;
  if (name.find('\0') != std::string::npos) {
    return BadValue("The index name cannot contain null characters");
  }
  if (name == "*") return BadValue("The index name '*' is not valid.");
  if (name == "_id_") {
    return BadValue(
        "The index name '_id_' is reserved for the _id index, which must have key "
        "pattern {_id: 1}, found key: " +
        ToJson(key_pattern, JsonFormat::kShell));
  }
  name_ = std::move(name);
  unique_ = options.unique;
  sparse_ = options.sparse;
  background_ = options.background;
  hidden_.store(options.hidden, std::memory_order_relaxed);
  DocumentView partial_filter = options.partial_filter_expression;
  if (!partial_filter.empty()) {
    ROCKDOC_RETURN_IF_ERROR(ValidateBson(partial_filter.bytes()));
    auto parsed = ParseMatchExpression(partial_filter);
    if (!parsed.ok()) return parsed.status();
    ROCKDOC_RETURN_IF_ERROR(CheckPartialFilter(**parsed, 0));
    partial_filter_ = std::move(parsed).value();
    partial_filter_doc_ = Document::AdoptValidated(std::string(partial_filter.bytes()));
  }
  if (options.collation) {
    ROCKDOC_ASSIGN_OR_RETURN(collator_, Collator::Make(*options.collation));
  }
  kind_state_ = access_method_->MakeState(key_pattern, options);
  if (options.search_definition) {
    search_definition_ =
        Document::AdoptValidated(std::string(options.search_definition->bytes()));
  }
  entry_format_ = access_method_->EntryFormat(*this);
  ROCKDOC_ASSIGN_OR_RETURN(runtime_state_, access_method_->NewRuntimeState(*this));
  {
    MutexLock g(&multikey_mu_);  // not shared yet; the analysis asks for it
    multikey_paths_.assign(field_names_.size(), MultikeyComponents());
  }
  since_ms_ = WallMillis();
  return Status::OK();
}

StatusOr<std::shared_ptr<IndexDescriptor>> IndexDescriptor::Create(uint32_t id,
                                                                   DocumentView key_pattern,
                                                                   const IndexOptions& options) {
  std::shared_ptr<IndexDescriptor> desc(new IndexDescriptor());
  desc->id_ = id;
  ROCKDOC_RETURN_IF_ERROR(desc->Init(key_pattern, options));
  ROCKDOC_RETURN_IF_ERROR(desc->access_method_->ValidateOptions(*desc, options));
  if (options.expire_after_seconds) desc->set_expire_after_seconds(*options.expire_after_seconds);
  return desc;
}

StatusOr<int64_t> ParseExpireAfterSeconds(const Element& e) {
  if (!e.IsNumber()) {
    return Status(
        ErrorCode::kCannotCreateIndex,
        "TTL index 'expireAfterSeconds' option must be numeric, but received a type of '" +
            std::string(BsonTypeAlias(e.type())) + "'");
  }
  double d = e.NumberAsDouble();
  if (!(d >= 0 && d <= 2147483647.0)) return CheckExpireAfterSeconds(-1);
  const auto seconds = static_cast<int64_t>(d);  // a fraction of a second is dropped, as by MongoDB
  ROCKDOC_RETURN_IF_ERROR(CheckExpireAfterSeconds(seconds));
  return seconds;
}

Status CheckExpireAfterSeconds(int64_t seconds) {
  if (seconds >= 0 && seconds <= 2147483647) return Status::OK();
  return Status(ErrorCode::kCannotCreateIndex,
                "TTL index 'expireAfterSeconds' option must be within an acceptable range, try "
                "0 to 2147483647");
}

bool IsIdIndexPattern(DocumentView keys) {
  auto it = keys.begin();
  if (it == keys.end()) return false;
  Element e = *it;
  if (e.key() != "_id" || ++it != keys.end() || !e.IsNumber()) return false;
  return e.NumberAsDouble() == 1.0;
}

Status CheckHideable(std::string_view db, std::string_view coll, bool id_index) {
  if (id_index) return BadValue("can't hide _id index");
  if (coll.substr(0, 7) == "system.") {
    return BadValue("Can't hide index on system collection: " + std::string(db) + "." +
                    std::string(coll));
  }
  return Status::OK();
}

StatusOr<std::shared_ptr<IndexDescriptor>> IndexDescriptor::FromCatalogEntry(DocumentView entry) {
  Element id = entry.Get("id"), name = entry.Get("name"), key = entry.Get("key");
  Element multikey = entry.Get("multikeyPaths");
  if (id.type() != BsonType::kInt64 || name.type() != BsonType::kString ||
      key.type() != BsonType::kDocument || multikey.type() != BsonType::kArray) {
    return DamagedIndexEntry("missing or mistyped fields in " + ToJson(entry, JsonFormat::kShell));
  }
  auto method = AccessMethodFor(key.Document());
  if (!method.ok()) return DamagedIndexEntry(std::string(method.status().message()));
  ROCKDOC_ASSIGN_OR_RETURN(IndexOptions options, (*method)->OptionsFromCatalog(entry));
  options.name = std::string(name.String());
  std::shared_ptr<IndexDescriptor> desc(new IndexDescriptor());
  desc->id_ = static_cast<uint32_t>(id.Int64());
  Status s = desc->Init(key.Document(), options);
  if (!s.ok()) return DamagedIndexEntry(std::string(s.message()));
  MultikeyPaths paths;
  for (Element field : multikey.Array()) {
    if (field.type() != BsonType::kArray) return DamagedIndexEntry("multikeyPaths");
    MultikeyComponents components;
    for (Element c : field.Array()) {
      if (c.type() != BsonType::kInt32 || c.Int32() < 0) return DamagedIndexEntry("multikeyPaths");
      components.insert(static_cast<size_t>(c.Int32()));
    }
    paths.push_back(std::move(components));
  }
  if (paths.size() != desc->num_fields()) return DamagedIndexEntry("multikeyPaths length");
  desc->SetMultikeyPaths(std::move(paths));
  if (options.expire_after_seconds) desc->set_expire_after_seconds(*options.expire_after_seconds);
  // Usage counters ($indexStats), from entries that record them.
  Element usage = entry.Get("usage");
  if (usage.ok()) {
    Element accesses = usage.IsDocument() ? usage.Document().Get("accesses") : Element();
    Element since = usage.IsDocument() ? usage.Document().Get("since") : Element();
    if (accesses.type() != BsonType::kInt64 || since.type() != BsonType::kInt64) {
      return DamagedIndexEntry("usage");
    }
    desc->accesses_.store(accesses.Int64(), std::memory_order_relaxed);
    desc->persisted_accesses_.store(accesses.Int64(), std::memory_order_relaxed);
    desc->since_ms_ = since.Int64();
  }
  return desc;
}

int64_t IndexDescriptor::AppendCatalogEntry(BsonBuilder* out, const MultikeyPaths& multikey) const {
  out->AppendInt64("id", id_);
  out->AppendString("name", name_);
  out->AppendDocument("key", key_pattern_);
  access_method_->AppendOptions(*this, IndexOptionsForm::kCatalog, out);
  out->OpenArray("multikeyPaths");
  for (const MultikeyComponents& field : multikey) {
    out->OpenArray("");
    for (size_t c : field) out->AppendInt32("", static_cast<int32_t>(c));
    out->Close();
  }
  out->Close();
  const int64_t accesses = this->accesses();
  out->OpenDocument("usage").AppendInt64("accesses", accesses).AppendInt64("since", since_ms_).Close();
  return accesses;
}

IndexOptions IndexDescriptor::Options() const {
  // The kind's own options (a text index's weights and languages) come back
  // from its catalog form; the common ones are set below.
  BsonBuilder catalog;
  access_method_->AppendOptions(*this, IndexOptionsForm::kCatalog, &catalog);
  StatusOr<IndexOptions> kind_options =
      access_method_->OptionsFromCatalog(std::move(catalog).Build());
  IndexOptions options = kind_options.ok() ? std::move(kind_options).value() : IndexOptions();
  options.name = name_;
  options.unique = unique_;
  options.sparse = sparse_;
  options.background = background_;
  options.hidden = hidden_.load(std::memory_order_acquire);
  options.partial_filter_expression = partial_filter_doc_;
  if (ttl()) options.expire_after_seconds = expire_after_seconds();
  if (collator_ != nullptr) options.collation = collator_->spec();
  if (is_search_index()) options.search_definition = search_definition_;
  return options;
}

Document IndexDescriptor::ToSpec() const {
  BsonBuilder b;
  b.AppendInt32("v", kIndexVersion);
  b.AppendDocument("key", key_pattern_);
  b.AppendString("name", name_);
  access_method_->AppendOptions(*this, IndexOptionsForm::kListIndexes, &b);
  return std::move(b).Build();
}

bool IndexDescriptor::SameOptions(const IndexDescriptor& other) const {
  return unique_ == other.unique_ && sparse_ == other.sparse_ &&
         partial_filter_doc_ == other.partial_filter_doc_ &&
         expire_after_seconds() == other.expire_after_seconds() &&
         Collator::Same(collator(), other.collator()) &&
         access_method_ == other.access_method_ && access_method_->SameKindOptions(*this, other) &&
         search_definition_ == other.search_definition_;
}

bool IndexDescriptor::SameKeyPattern(DocumentView other) const {
  auto a = key_pattern_.begin(), a_end = key_pattern_.end();
  auto b = other.begin(), b_end = other.end();
  for (; a != a_end && b != b_end; ++a, ++b) {
    Element x = *a, y = *b;
    if (x.key() != y.key()) return false;
    if (CompareValues(x, y) != 0) return false;
  }
  return a == a_end && b == b_end;
}

MultikeyPaths IndexDescriptor::multikey_paths() const {
  MutexLock g(&multikey_mu_);
  return multikey_paths_;
}

std::vector<std::string> IndexDescriptor::MultikeyPrefixes(size_t field) const {
  std::vector<std::string> out;
  MultikeyComponents components;
  {
    MutexLock g(&multikey_mu_);
    if (field >= multikey_paths_.size()) return out;
    components = multikey_paths_[field];
  }
  const FieldPath& path = field_paths_[field];
  for (size_t c : components) {
    std::string prefix;
    for (size_t i = 0; i <= c && i < path.size(); ++i) {
      if (i > 0) prefix += '.';
      prefix += path.part(i);
    }
    out.push_back(std::move(prefix));
  }
  return out;
}

bool IndexDescriptor::NeedsMultikeyUpdate(const MultikeyPaths& seen) const {
  bool any = false;
  for (const MultikeyComponents& f : seen) any = any || !f.empty();
  if (!any) return false;
  MutexLock g(&multikey_mu_);
  for (size_t i = 0; i < seen.size() && i < multikey_paths_.size(); ++i) {
    for (size_t c : seen[i]) {
      if (multikey_paths_[i].count(c) == 0) return true;
    }
  }
  return false;
}

void IndexDescriptor::SetMultikeyPaths(MultikeyPaths paths) {
  paths.resize(field_names_.size());
  bool any = false;
  for (const MultikeyComponents& f : paths) any = any || !f.empty();
  MutexLock g(&multikey_mu_);
  multikey_paths_ = std::move(paths);
  multikey_.store(any, std::memory_order_release);
}

const IndexDescriptor* IndexSet::FindByName(std::string_view name) const {
  for (const auto& index : indexes_) {
    if (index->name() == name) return index.get();
  }
  return nullptr;
}

std::vector<const IndexDescriptor*> IndexSet::FindByKeyPattern(DocumentView key_pattern) const {
  std::vector<const IndexDescriptor*> out;
  for (const auto& index : indexes_) {
    if (index->SameKeyPattern(key_pattern)) out.push_back(index.get());
  }
  return out;
}

std::shared_ptr<const IndexSet> IndexSet::With(std::shared_ptr<IndexDescriptor> index) const {
  std::vector<std::shared_ptr<IndexDescriptor>> copy = indexes_;
  copy.push_back(std::move(index));
  return std::make_shared<const IndexSet>(std::move(copy));
}

std::shared_ptr<const IndexSet> IndexSet::Without(std::string_view name) const {
  std::vector<std::shared_ptr<IndexDescriptor>> copy;
  for (const auto& index : indexes_) {
    if (index->name() != name) copy.push_back(index);
  }
  return std::make_shared<const IndexSet>(std::move(copy));
}

}  // namespace rockdoc::internal
