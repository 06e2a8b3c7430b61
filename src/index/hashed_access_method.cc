// The hashed index kind ({a: "hashed"}, compound with ordered fields since
// MongoDB 4.4): one key per document, the hashed field's value replaced by
// its 64-bit hash (bson/element_hash.h), as MongoDB's hashed indexes store
// it. What follows from that, as in MongoDB:
//   * no arrays anywhere along any of the index's paths (16766), so the
//     index is never multikey;
//   * equality and $in on the hashed field are points on hashes, which
//     collide (2.3 and 2 hash alike): the document always settles the
//     predicate (a FETCH with the filter), and ranges give no bounds;
//   * no sort (keys are in hash order) and no covered plans;
//   * never unique (16764), at most one hashed field (31303).
#include <algorithm>

#include "bson/element_hash.h"
#include "index/access_method.h"
#include "keystring/keystring.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

Status CannotCreateIndex(std::string message) {
  return Status(ErrorCode::kCannotCreateIndex, std::move(message));
}

constexpr std::string_view kHashed = "hashed";

// The position of the hashed field in the key pattern (the descriptor has
// checked that there is exactly one by then).
size_t HashedField(const IndexDescriptor& index) {
  size_t i = 0;
  for (Element e : index.key_pattern()) {
    if (e.IsString()) return i;
    ++i;
  }
  return 0;
}

// The value at `path` in `doc`, or missing; an array met anywhere on the
// way is MongoDB's 16766, naming the path up to that array.
Status ValueAtPath(DocumentView doc, const FieldPath& path, Element* out) {
  *out = Element();
  DocumentView at = doc;
  for (size_t part = 0; part < path.size(); ++part) {
    Element e = at.Get(path.part(part));
    if (!e.ok()) return Status::OK();
    if (e.type() == BsonType::kArray) {
      std::string prefix;
      for (size_t p = 0; p <= part; ++p) {
        if (p > 0) prefix += '.';
        prefix += path.part(p);
      }
      return Status(static_cast<ErrorCode>(16766),
                    "Error: hashed indexes do not currently support array values. Found array "
                    "at path: " +
                        prefix);
    }
    if (part + 1 == path.size()) {
      *out = e;
      return Status::OK();
    }
    if (e.type() != BsonType::kDocument) return Status::OK();
    at = e.Document();
  }
  return Status::OK();
}

// A one-element holder for an int64 hash, as keys and bounds carry it.
Value HashHolder(int64_t hash) {
  BsonBuilder b;
  b.AppendInt64("", hash);
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get(""));
}

class Hashed final : public IndexAccessMethod {
 public:
  std::string_view kind() const override { return kHashed; }

  Status ValidateKeyField(const Element& e) const override {
    if (e.IsString()) return Status::OK();  // AccessMethodFor chose this kind by the name
    return BtreeAccessMethod().ValidateKeyField(e);
  }

  Status ValidateOptions(const IndexDescriptor& index, const IndexOptions& options) const override {
    ROCKDOC_RETURN_IF_ERROR(CheckNoSphereVersion(options));
    ROCKDOC_RETURN_IF_ERROR(RefuseTextOptions(options));
    int hashed = 0;
    for (Element e : index.key_pattern()) hashed += e.IsString() ? 1 : 0;
    if (hashed > 1) {
      return Status(static_cast<ErrorCode>(31303),
                    "A maximum of one index field is allowed to be hashed but found " +
                        std::to_string(hashed) + " for 'key' " +
                        ToJson(index.key_pattern(), JsonFormat::kShell));
    }
    if (options.unique) {
      return Status(static_cast<ErrorCode>(16764),
                    "Currently hashed indexes cannot guarantee uniqueness. Use a regular index.");
    }
    if (options.expire_after_seconds) {
      return CannotCreateIndex("Index type 'hashed' does not support TTL indexes.");
    }
    return Status::OK();
  }

  void AppendOptions(const IndexDescriptor& index, IndexOptionsForm form,
                     BsonBuilder* out) const override {
    BtreeAccessMethod().AppendOptions(index, form, out);
  }
  StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const override {
    return BtreeAccessMethod().OptionsFromCatalog(entry);
  }

  Status GetKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                 MultikeyPaths* multikey_paths) const override {
    if (!BeginIndexKeys(index, doc, keys, multikey_paths)) return Status::OK();
    const size_t hashed = HashedField(index);
    keystring::Builder b(index.descending_bits());
    bool any_value = false;
    for (size_t i = 0; i < index.num_fields(); ++i) {
      Element v;
      ROCKDOC_RETURN_IF_ERROR(ValueAtPath(doc, index.field_paths()[i], &v));
      any_value = any_value || v.ok();
      if (i == hashed) {
        // Under a collation the value's collation key is hashed, as
        // MongoDB hashes it (missing hashes as null).
        b.Append(
            HashHolder(HashBsonValue(CollationKeyOf(v, index.collator()).element())).element());
      } else {
        AppendKeyValue(&b, v, index.collator());
      }
    }
    if (index.sparse() && !any_value) return Status::OK();
    keys->push_back(IndexKey{b.bytes(), b.type_bits()});
    return Status::OK();
  }

  IndexEntryFormat EntryFormat(const IndexDescriptor&) const override {
    return IndexEntryFormat::kStandard;
  }

  Status DecodeKey(const IndexDescriptor& index, const IndexEntryView& entry,
                   BsonBuilder* out) const override {
    return DecodeIndexKey(index, entry, out);  // the hashed field decodes as its hash
  }

  bool IntervalsFor(const IndexDescriptor& index, size_t field, const MatchExpression& leaf,
                    std::vector<Interval>* out, BoundsTightness* tightness) const override {
    if (field != HashedField(index)) {
      return BtreeAccessMethod().IntervalsFor(index, field, leaf, out, tightness);
    }
    // Equality to a scalar (null included: a missing field hashes as
    // null) or to a document; never to an array or a regex, which no
    // hashed key can hold or settle.
    auto hashable = [](const Element& v) {
      return v.type() != BsonType::kArray && v.type() != BsonType::kRegex;
    };
    std::vector<int64_t> hashes;
    if (leaf.type() == MatchType::kEq) {
      Element v = leaf.operand();
      if (!hashable(v)) return false;
      hashes.push_back(HashBsonValue(CollationKeyOf(v, index.collator()).element()));
    } else if (leaf.type() == MatchType::kIn) {
      const auto& in = static_cast<const InMatchExpression&>(leaf);
      if (!in.regexes().empty()) return false;
      for (const Element& v : in.equalities()) {
        if (!hashable(v)) return false;
        hashes.push_back(HashBsonValue(CollationKeyOf(v, index.collator()).element()));
      }
    } else {
      return false;
    }
    std::sort(hashes.begin(), hashes.end());
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
    out->clear();
    for (int64_t h : hashes) out->push_back(Interval::Point(HashHolder(h).element()));
    if (tightness != nullptr) *tightness = BoundsTightness::kInexactFetch;
    return true;
  }

  bool KeysAreOrdered() const override { return false; }
  bool KeysHoldValues() const override { return false; }

  void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const override {
    BtreeAccessMethod().AppendExplain(index, out);
  }
};

}  // namespace

const IndexAccessMethod& HashedAccessMethod() {
  static const Hashed* hashed = new Hashed();
  return *hashed;
}

}  // namespace rockdoc::internal
