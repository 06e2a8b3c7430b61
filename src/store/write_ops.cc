#include "store/write_ops.h"

#include <algorithm>

#include "common/endian.h"
#include "index/access_method.h"
#include "index/index_entry.h"
#include "index/key_generator.h"
#include "keystring/keystring.h"
#include "query/json_schema.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

std::string CountDelta(int64_t delta) {
  std::string v;
  AppendLE<int64_t>(&v, delta);
  return v;
}

// True when no non-empty container below `doc` (at `level`) goes deeper
// than kMaxNestingDepth. Recursion is bounded: ValidateBson already limits
// nesting to kMaxNestingDepth + 1 levels.
//
// Most containers are far too small to be that deep: a non-empty container
// takes at least 7 bytes (its length, its terminator and one element of a
// type byte, an empty key and no value), and each container around it 7
// more, so one of n bytes holds a chain of at most n / 7 of them. When that
// chain cannot reach the limit from `level`, the container is not walked
// (a 300-byte document is never walked; a $push onto an array of small
// documents walks the array, not each document).
constexpr size_t kMinContainerBytes = 7;

bool CannotReachLimit(size_t container_bytes, int level) {
  return level + static_cast<int64_t>(container_bytes / kMinContainerBytes) < kMaxNestingDepth;
}

bool WithinStorageDepth(DocumentView doc, int level) {
  for (Element e : doc) {
    if (!e.IsContainer()) continue;
    DocumentView sub = e.Document();
    if (sub.empty() || CannotReachLimit(sub.size(), level)) continue;
    if (level >= kMaxNestingDepth || !WithinStorageDepth(sub, level + 1)) return false;
  }
  return true;
}

}  // namespace

namespace {
Status DepthError() {
  return Status(ErrorCode::kOverflow, "cannot insert document because it exceeds " +
                                          std::to_string(kMaxNestingDepth) + " levels of nesting");
}
}  // namespace

Status CheckStorageDepth(DocumentView doc) {
  return WithinStorageDepth(doc, 1) ? Status::OK() : DepthError();
}

Status CheckStorageDepthOfPaths(DocumentView doc, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    // The value at a path of k parts sits in a document at level k.
    int level = 1 + static_cast<int>(std::count(path.begin(), path.end(), '.'));
    if (level > kMaxNestingDepth) return DepthError();
    Element e = doc.GetPath(path);
    if (!e.IsContainer() || e.Document().empty()) continue;
    if (CannotReachLimit(e.Document().size(), level)) continue;
    if (level >= kMaxNestingDepth || !WithinStorageDepth(e.Document(), level + 1)) {
      return DepthError();
    }
  }
  return Status::OK();
}

namespace {
// MongoDB refuses '$'-prefixed field names anywhere inside an _id document.
Status CheckIdFields(DocumentView doc) {
  for (Element e : doc) {
    if (!e.key().empty() && e.key()[0] == '$') {
      return Status(ErrorCode::kDollarPrefixedFieldName,
                    "_id fields may not contain '$'-prefixed fields: " + std::string(e.key()) +
                        " is not valid for storage.");
    }
    if (e.IsContainer()) ROCKDOC_RETURN_IF_ERROR(CheckIdFields(e.Document()));
  }
  return Status::OK();
}
}  // namespace

Status CheckIdValue(const Element& id) {
  if (id.type() == BsonType::kDocument) return CheckIdFields(id.Document());
  switch (id.type()) {
    case BsonType::kArray:
      return BadValue("can't use an array for _id");
    case BsonType::kRegex:
      return BadValue("can't use a regex for _id");
    case BsonType::kUndefined:
      return BadValue("can't use a undefined for _id");
    default:
      return Status::OK();
  }
}

StatusOr<Document> PrepareInsert(DocumentView doc) {
  // The size check comes first so that the message names the user's size.
  if (doc.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return BadValue("object to insert too large. size in bytes: " + std::to_string(doc.size()) +
                    ", max size: " + std::to_string(kMaxBsonObjectSize));
  }
  Status valid = ValidateBson(doc.bytes());
  if (!valid.ok()) return valid;
  ROCKDOC_RETURN_IF_ERROR(CheckStorageDepth(doc));

  Element id;
  bool id_first = false;
  bool first = true;
  // Since MongoDB 5.0 field names may start with '$' (and hold '.'), even at
  // the top level; only the _id may not hold '$'-prefixed fields.
  for (Element e : doc) {
    std::string_view key = e.key();
    if (key == "_id" && !id.ok()) {
      id = e;
      id_first = first;
    }
    first = false;
  }
  if (id.ok()) {
    ROCKDOC_RETURN_IF_ERROR(CheckIdValue(id));
    if (id_first) return Document::AdoptValidated(std::string(doc.bytes()));
  }
  // Put _id first (generating one if absent), as MongoDB stores it.
  BsonBuilder b;
  if (id.ok()) {
    b.AppendElement(id);
  } else {
    b.AppendObjectId("_id", ObjectId::Generate());
  }
  for (Element e : doc) {
    if (e.raw() != id.raw()) b.AppendElement(e);
  }
  Document out = std::move(b).Build();
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return BadValue("object to insert too large. size in bytes: " + std::to_string(out.size()) +
                    ", max size: " + std::to_string(kMaxBsonObjectSize));
  }
  return out;
}

namespace {
// The key as the server prints it in E11000 messages: { a: 1, b: "x" }
// (mongosh's form, but strings in double quotes).
std::string ServerKeyText(DocumentView key_values, bool collated) {
  if (key_values.empty()) return "{}";
  std::string out = "{ ";
  bool first = true;
  for (Element e : key_values) {
    if (!first) out += ", ";
    first = false;
    out += e.key();
    out += ": ";
    if (collated && e.type() == BsonType::kString) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\"0x";
      for (unsigned char c : e.String()) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      out += '"';
      continue;
    }
    out +=
        ValueToJson(e, e.type() == BsonType::kString ? JsonFormat::kRelaxed : JsonFormat::kShell);
  }
  return out + " }";
}
}  // namespace

Status DuplicateKeyError(const CollectionMeta& meta, std::string_view index_name,
                         DocumentView key_pattern, DocumentView key_values,
                         DocumentView collation) {
  const bool collated = !collation.empty();
  std::string msg = "E11000 duplicate key error collection: " + meta.full_name() +
                    " index: " + std::string(index_name) +
                    (collated ? " collation: " + ServerKeyText(collation, false) : "") +
                    " dup key: " + ServerKeyText(key_values, collated);
  BsonBuilder extra;
  extra.AppendDocument("keyPattern", key_pattern);
  extra.AppendDocument("keyValue", key_values);
  return Status(ErrorCode::kDuplicateKey, std::move(msg))
      .WithExtraInfo(std::string(std::move(extra).Build().bytes()));
}

std::string DocumentKey(const CollectionMeta& meta, const Element& id) {
  return RecordKey(meta.id, keystring::EncodeValue(id));
}

namespace {

// ---- Index maintenance ----

// The index keys of one document: keys[i] for index i of an IndexSet.
struct DocumentIndexKeys {
  std::vector<std::vector<IndexKey>> keys;
  std::vector<MultikeyPaths> paths;
};

// Generates every index's keys for `doc`. Fails (CannotIndexParallelArrays)
// before anything is written.
Status GenerateAllKeys(const IndexSet& indexes, DocumentView doc, DocumentIndexKeys* out,
                       bool want_paths) {
  out->keys.resize(indexes.size());
  out->paths.resize(want_paths ? indexes.size() : 0);
  for (size_t i = 0; i < indexes.size(); ++i) {
    const IndexDescriptor& index = *indexes.all()[i];
    ROCKDOC_RETURN_IF_ERROR(index.access_method().GetKeys(index, doc, &out->keys[i],
                                                          want_paths ? &out->paths[i] : nullptr));
  }
  return Status::OK();
}

// Publishes the multikey paths `doc_keys` met that the indexes did not know
// yet. Runs before the transaction commits (see Catalog::PersistMultikeyPaths).
Status PublishMultikeyPaths(const Engine& engine, const CollectionMeta& meta,
                            const IndexSet& indexes, const DocumentIndexKeys& doc_keys) {
  std::vector<std::pair<IndexDescriptor*, MultikeyPaths>> updates;
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (indexes.all()[i]->NeedsMultikeyUpdate(doc_keys.paths[i])) {
      updates.emplace_back(indexes.all()[i].get(), doc_keys.paths[i]);
    }
  }
  if (updates.empty()) return Status::OK();
  return CatalogOf(engine).PersistMultikeyPaths(meta, updates);
}

}  // namespace

// Entries of such an index are shared by whichever document holds the
// value: they are locked.
bool OneEntryPerValue(const IndexDescriptor& index) {
  return index.entry_format() == IndexEntryFormat::kUnique;
}

namespace {

// Locks the entry of `key` in the unique `index` for the rest of `txn` and
// fails with DuplicateKey when another document holds it. The lock is taken
// whether or not the entry exists, so of two concurrent writers of the same
// key the second waits for the first to commit and then sees its entry.
Status CheckUniqueKey(KvTransaction* txn, const CollectionMeta& meta, const IndexDescriptor& index,
                      const IndexKey& key, std::string_view id_key) {
  std::string entry_key = IndexEntryKey(index, key.bytes, id_key);
  std::string value;
  bool found = false;
  Status s = txn->GetForUpdate(entry_key, &value, &found);
  if (!s.ok()) return s.WithContext("unique index check in " + meta.full_name());
  if (!found) return Status::OK();
  IndexEntryView existing;
  ROCKDOC_RETURN_IF_ERROR(ParseIndexEntry(index, entry_key, value, &existing));
  if (existing.id_key == id_key) return Status::OK();  // our own entry
  return DuplicateKeyError(meta, index.name(), index.key_pattern(), KeyValuesDocument(index, key),
                           index.collator() != nullptr ? index.collator()->spec().view()
                                                       : DocumentView());
}

// A unique entry's point reads go through the record cache (exec's
// IndexScanStage), so its writes are marked as a record's are.
void NoteUniqueEntryWrite(KvTransaction* txn, const IndexDescriptor& index, std::string_view k) {
  if (OneEntryPerValue(index) && txn->engine()->record_cache() != nullptr) {
    ChangeSet::Of(*txn->engine(), txn)->NoteRecordWrite(k);
  }
}

// An index whose kind keeps a state beside its entries hears of each
// entry written once the transaction commits.
void NoteEntryChange(KvTransaction* txn, const IndexDescriptor& index, const IndexKey& key,
                     std::string_view id_key, bool put) {
  if (index.runtime_state() == nullptr) return;
  ChangeSet::Of(*txn->engine(), txn)->NoteEntryChange(
      index.runtime_state(),
      IndexRuntimeState::EntryChange{std::string(id_key), key.bytes, key.type_bits, put});
}

// Standard entries carry the _id in their key, so only writers
// of that document touch them, and those hold its lock: the entry needs no
// lock of its own. Unique entries are shared by value and stay locked.
Status PutEntry(KvTransaction* txn, const IndexDescriptor& index, const IndexKey& key,
                std::string_view id_key) {
  std::string k = IndexEntryKey(index, key.bytes, id_key);
  std::string v = IndexEntryValue(index, id_key, key.type_bits);
  NoteUniqueEntryWrite(txn, index, k);
  NoteEntryChange(txn, index, key, id_key, true);
  return OneEntryPerValue(index) ? txn->Put(KeySpace::kData, k, v)
                                 : txn->PutUnindexed(k, v, /*track=*/false);
}

Status DeleteEntry(KvTransaction* txn, const IndexDescriptor& index, const IndexKey& key,
                   std::string_view id_key) {
  std::string k = IndexEntryKey(index, key.bytes, id_key);
  NoteUniqueEntryWrite(txn, index, k);
  NoteEntryChange(txn, index, key, id_key, false);
  return OneEntryPerValue(index) ? txn->Delete(KeySpace::kData, k)
                                 : txn->DeleteUntracked(KeySpace::kData, k);
}

// The keystring of the _id inside a record key (after the 4-byte prefix).
std::string_view IdKeyOf(std::string_view record_key) { return record_key.substr(4); }

}  // namespace

Status CheckValidator(const Engine& engine, const CollectionMeta& meta, DocumentView doc,
                      const DocumentView* old_doc) {
  std::shared_ptr<const CollectionOptions> options = meta.options();
  const MatchExpression* validator = options->validator_expr.get();
  if (validator == nullptr || options->validation_level == ValidationLevel::kOff) {
    return Status::OK();
  }
  // A validator's $expr that cannot be evaluated fails the write.
  ROCKDOC_ASSIGN_OR_RETURN(bool valid, MatchesOrError(*validator, doc));
  if (valid) return Status::OK();
  if (old_doc != nullptr && options->validation_level == ValidationLevel::kModerate) {
    // An old document that fails (or cannot be judged) lets the write through.
    const StatusOr<bool> old_valid = MatchesOrError(*validator, *old_doc);
    if (!old_valid.ok() || !*old_valid) return Status::OK();
  }
  BsonBuilder info;
  info.AppendElementAs("failingDocumentId", doc.Get("_id"));
  info.AppendDocument("details", ValidationFailureDetails(*validator, doc).view());
  Document info_doc = std::move(info).Build();
  if (options->validation_action == ValidationAction::kWarn) {
    engine.LogWarning("Document would fail validation in " + meta.full_name() + ": " +
                      ToJson(info_doc.view(), JsonFormat::kRelaxed));
    return Status::OK();
  }
  return Status(ErrorCode::kDocumentValidationFailure, "Document failed validation")
      .WithErrorInfo(std::string(info_doc.bytes()));
}

namespace {

// ---- Capped collections ----
// The order entries (storage/format.h) keep a capped collection's
// insertion order; CappedState (catalog.h) holds their totals while the
// collection's writes are serialized by its mutex (WriteBatcher).

// Reads the totals from the order entries as `txn` sees them, unless loaded.
Status LoadCappedState(KvTransaction* txn, const CollectionMeta& meta) {
  CappedState& st = *meta.capped;
  if (st.loaded) return Status::OK();
  st.count = st.bytes = 0;
  st.next_seq = st.oldest_seq = 1;
  std::unique_ptr<KvIterator> it = ReadView(txn).NewIterator(
      CappedOrderKey(meta.capped_order_id, 0), CappedOrderEnd(meta.capped_order_id), true);
  bool first = true;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    uint64_t seq = 0;
    int64_t size = 0;
    std::string_view record_key;
    ROCKDOC_RETURN_IF_ERROR(ParseCappedOrderEntry(it->key(), it->value(), &seq, &size, &record_key));
    if (first) st.oldest_seq = seq;
    first = false;
    ++st.count;
    st.bytes += size;
    st.next_seq = seq + 1;
  }
  ROCKDOC_RETURN_IF_ERROR(it->status().WithContext("reading the order of " + meta.full_name()));
  st.loaded = true;
  return Status::OK();
}

// The sequence number of the document at `record_key`; 0 when it has none.
StatusOr<uint64_t> CappedSeqOf(KvTransaction* txn, const CollectionMeta& meta,
                               std::string_view record_key) {
  std::string value;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(
      txn->Get(CappedSeqKey(meta.capped_order_id, IdKeyOf(record_key)), &value, &found));
  if (!found) return uint64_t{0};
  return ParseCappedSeq(value);
}

// DeleteDocument without its change-log event.
Status DeleteStored(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                    std::string_view key, DocumentView old_doc, WriteDelta* delta);

// A document was inserted at `record_key`: it goes last in the order, and
// the oldest documents go while the collection is over its limits (never
// the new one: its size was checked against the limit before).
Status CappedInserted(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                      std::string_view record_key, DocumentView doc, WriteDelta* delta) {
  ROCKDOC_RETURN_IF_ERROR(LoadCappedState(txn, meta));
  CappedState& st = *meta.capped;
  const uint64_t seq = st.next_seq;
  const int64_t size = static_cast<int64_t>(doc.size());
  ROCKDOC_RETURN_IF_ERROR(txn->Put(KeySpace::kData, CappedOrderKey(meta.capped_order_id, seq),
                                   CappedOrderValue(size, record_key)));
  std::string seq_value;
  AppendBE64(&seq_value, seq);
  ROCKDOC_RETURN_IF_ERROR(txn->Put(
      KeySpace::kData, CappedSeqKey(meta.capped_order_id, IdKeyOf(record_key)), seq_value));
  ++st.next_seq;
  ++st.count;
  st.bytes += size;
  std::shared_ptr<const CollectionOptions> options = meta.options();
  while ((options->capped_max > 0 && st.count > options->capped_max) ||
         st.bytes > options->capped_size) {
    uint64_t old_seq = 0;
    int64_t old_size = 0;
    std::string old_key;
    {
      std::unique_ptr<KvIterator> it = ReadView(txn).NewIterator(
          CappedOrderKey(meta.capped_order_id, st.oldest_seq),
          CappedOrderEnd(meta.capped_order_id));
      it->SeekToFirst();
      if (!it->Valid()) return it->status();
      std::string_view rk;
      ROCKDOC_RETURN_IF_ERROR(ParseCappedOrderEntry(it->key(), it->value(), &old_seq, &old_size, &rk));
      old_key = std::string(rk);
    }
    if (old_seq == seq) break;
    st.oldest_seq = old_seq;
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> old_doc, LockAndRead(txn, old_key));
    if (old_doc) {
      // As MongoDB's capped deletes, not a change of the collection's: no
      // event.
      ROCKDOC_RETURN_IF_ERROR(DeleteStored(engine, txn, meta, old_key, *old_doc, delta));
    } else {
      // An order entry whose document is gone: drop the entry alone.
      ROCKDOC_RETURN_IF_ERROR(
          txn->Delete(KeySpace::kData, CappedOrderKey(meta.capped_order_id, old_seq)));
      --st.count;
      st.bytes -= old_size;
    }
    st.oldest_seq = old_seq + 1;
  }
  return Status::OK();
}

// The document at `record_key` was deleted: its order entries go.
Status CappedRemoved(KvTransaction* txn, const CollectionMeta& meta, std::string_view record_key,
                     DocumentView old_doc) {
  ROCKDOC_RETURN_IF_ERROR(LoadCappedState(txn, meta));
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t seq, CappedSeqOf(txn, meta, record_key));
  if (seq == 0) return Status::OK();
  ROCKDOC_RETURN_IF_ERROR(
      txn->Delete(KeySpace::kData, CappedOrderKey(meta.capped_order_id, seq)));
  ROCKDOC_RETURN_IF_ERROR(
      txn->Delete(KeySpace::kData, CappedSeqKey(meta.capped_order_id, IdKeyOf(record_key))));
  CappedState& st = *meta.capped;
  --st.count;
  st.bytes -= static_cast<int64_t>(old_doc.size());
  return Status::OK();
}

// The document at `record_key` changed size (updates may, since MongoDB
// 6.0; the limits are enforced at the next insert, as MongoDB does).
Status CappedResized(KvTransaction* txn, const CollectionMeta& meta, std::string_view record_key,
                     DocumentView old_doc, DocumentView new_doc) {
  if (old_doc.size() == new_doc.size()) return Status::OK();
  ROCKDOC_RETURN_IF_ERROR(LoadCappedState(txn, meta));
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t seq, CappedSeqOf(txn, meta, record_key));
  if (seq == 0) return Status::OK();
  ROCKDOC_RETURN_IF_ERROR(
      txn->Put(KeySpace::kData, CappedOrderKey(meta.capped_order_id, seq),
               CappedOrderValue(static_cast<int64_t>(new_doc.size()), record_key)));
  meta.capped->bytes +=
      static_cast<int64_t>(new_doc.size()) - static_cast<int64_t>(old_doc.size());
  return Status::OK();
}

}  // namespace

// The generic iterator's step finds the key's end with strlen and the
// value's size through three calls: on a $push to an array of 250
// documents, counting that way was 7% of the update's instructions
// (callgrind); this loop takes about a third of that.
int64_t CountStoredElements(DocumentView array) {
  const uint8_t* p = array.data() + 4;
  const uint8_t* const end = array.data() + array.size() - 1;  // the terminator
  int64_t n = 0;
  while (p < end) {
    const auto type = static_cast<BsonType>(*p++);
    while (*p != 0) ++p;  // the key: "0", "1", ...
    ++p;
    switch (type) {
      case BsonType::kUndefined:
      case BsonType::kNull:
      case BsonType::kMinKey:
      case BsonType::kMaxKey:
        break;
      case BsonType::kBool:
        p += 1;
        break;
      case BsonType::kInt32:
        p += 4;
        break;
      case BsonType::kDouble:
      case BsonType::kDateTime:
      case BsonType::kTimestamp:
      case BsonType::kInt64:
        p += 8;
        break;
      case BsonType::kObjectId:
        p += 12;
        break;
      case BsonType::kDecimal128:
        p += 16;
        break;
      case BsonType::kString:
      case BsonType::kCode:
      case BsonType::kSymbol:
        p += 4 + LoadLE<int32_t>(p);
        break;
      case BsonType::kDocument:
      case BsonType::kArray:
      case BsonType::kCodeWithScope:
        p += LoadLE<int32_t>(p);
        break;
      case BsonType::kBinary:
        p += 5 + LoadLE<int32_t>(p);
        break;
      case BsonType::kDbPointer:
        p += 4 + LoadLE<int32_t>(p) + 12;
        break;
      case BsonType::kRegex:
        while (*p != 0) ++p;  // the pattern
        ++p;
        while (*p != 0) ++p;  // the options
        ++p;
        break;
      default:  // not in a validated document
        return -1;
    }
    ++n;
  }
  return n;
}

namespace {

// ---- Statistics: growth warnings, document sizes, array lengths ----
// (stats/collection_statistics.h; applied when the write commits.)

constexpr int64_t kMaxDocumentBytes = int64_t{16} << 20;
constexpr int64_t kSizeThresholds[] = {kMaxDocumentBytes / 2, kMaxDocumentBytes / 10 * 9};
constexpr int64_t kArrayThresholds[] = {250, 1000, 10000};
static_assert(std::size(kSizeThresholds) + std::size(kArrayThresholds) == kGrowthThresholds);
// The smallest document that can hold an array of 250 elements: each takes
// at least a type byte, a key of one digit and its NUL.
constexpr size_t kMinBytesForLargeArray = 250 * 3;
// Arrays this long or longer have their length recorded (per path).
constexpr int64_t kRecordedArrayLength = 16;

// The arrays of a document and of its embedded documents: the longest,
// and (with `arrays`) every one of kRecordedArrayLength elements or more,
// by path ("a.b"), with the longest one's path. Arrays inside array
// elements are not looked at: the elements are only counted (a walk of
// every element's fields made the $push of a 1,000-element array of
// documents 29% slower); the advisor's sample covers those.
struct ArrayWalk {
  std::vector<StatisticsDelta::ArrayLength>* arrays = nullptr;  // null: the longest alone
  int64_t longest = 0;
  std::string longest_path;  // with `arrays`
  std::string path;          // scratch: the path being walked
};

void WalkArrays(DocumentView doc, ArrayWalk* w, int depth = 0) {
  if (depth > 100) return;
  for (Element e : doc) {
    if (!e.IsDocument() && !e.IsArray()) continue;
    const size_t parent = w->path.size();
    if (w->arrays != nullptr) {
      if (parent != 0) w->path += '.';
      w->path += e.key();
    }
    if (e.IsDocument()) {
      WalkArrays(e.Document(), w, depth + 1);
    } else {
      int64_t n = CountStoredElements(e.Array());
      if (n < 0) {  // cannot be (stored documents are valid): count the slow way
        n = 0;
        for (auto it = e.Array().begin(), end = e.Array().end(); it != end; ++it) ++n;
      }
      if (w->arrays != nullptr && n >= kRecordedArrayLength) w->arrays->push_back({w->path, n});
      if (n > w->longest) {
        w->longest = n;
        if (w->arrays != nullptr) w->longest_path = w->path;
      }
    }
    w->path.resize(parent);
  }
}

// One growth warning: "document growth in db.c: the document {"_id": 1}
// <what>; ..." (the log adds how many of its kind there have been).
void Warn(const CollectionMeta& meta, size_t kind, DocumentView doc, const std::string& what,
          StatisticsDelta* stats) {
  Element id = *doc.begin();
  BsonBuilder b;
  b.AppendElement(id);
  stats->warnings.push_back(
      {kind, "document growth in " + meta.full_name() + ": the document " +
                 ToJson(std::move(b).Build()) + " " + what +
                 "; the schema advisor (rockdoc-advise, or db.advise() in the shell) says what "
                 "to do"});
}

// What a write that makes `new_doc` of the old document (none for an
// insert) changes in the statistics:
//  - its size's bucket, and the old one's, when they differ;
//  - growth warnings, when it reaches a threshold the old document was
//    under: its size 50% or 90% of the 16 MiB limit, its longest array 250,
//    1,000 or 10,000 elements (one warning per write, the highest array
//    threshold crossed);
//  - the lengths of its arrays of 16 elements or more, when it grows a
//    document of 750 bytes or more.
// Nothing with ClientOptions::collect_statistics off.
void WatchWrite(const Engine& engine, const CollectionMeta& meta, const DocumentView* old_doc,
                DocumentView new_doc, StatisticsDelta* stats) {
  if (!engine.options().collect_statistics) return;
  const int64_t size = static_cast<int64_t>(new_doc.size());
  const int64_t old_size = old_doc != nullptr ? static_cast<int64_t>(old_doc->size()) : 0;
  if (old_doc == nullptr) {
    stats->AddSize(size, 1);
  } else if (Log2Bucket(size) != Log2Bucket(old_size)) {
    stats->AddSize(old_size, -1);
    stats->AddSize(size, 1);
  }
  for (size_t i = 0; i < std::size(kSizeThresholds); ++i) {
    if (size >= kSizeThresholds[i] && old_size < kSizeThresholds[i]) {
      Warn(meta, i, new_doc,
           "reached " + std::to_string(size) + " bytes, " +
               std::to_string(size * 100 / kMaxDocumentBytes) + "% of the 16 MiB document limit",
           stats);
    }
  }
  // Arrays: a walk of the new document (counting elements, without
  // allocating but for the paths of long arrays), and of the old one only
  // when the new one's longest array reached a threshold, and none for a
  // document too small to hold 250 elements. An array that grows grows its
  // document: a write that does not (an $inc, a $push that $slice keeps at
  // its length, a $set of a value of the same size) is not walked at all.
  if (new_doc.size() < kMinBytesForLargeArray || size <= old_size) return;
  ArrayWalk walk;
  walk.arrays = &stats->arrays;
  WalkArrays(new_doc, &walk);
  const int64_t longest = walk.longest;
  if (longest < kArrayThresholds[0]) return;
  int64_t was = 0;
  if (old_doc != nullptr && old_doc->size() >= kMinBytesForLargeArray) {
    ArrayWalk old_walk;
    WalkArrays(*old_doc, &old_walk);
    was = old_walk.longest;
  }
  for (size_t t = std::size(kArrayThresholds); t-- > 0;) {  // the highest threshold crossed
    if (longest < kArrayThresholds[t] || was >= kArrayThresholds[t]) continue;
    Warn(meta, std::size(kSizeThresholds) + t, new_doc,
         "has an array '" + walk.longest_path + "' of " + std::to_string(longest) +
             " elements (" + std::to_string(kArrayThresholds[t]) + " or more)",
         stats);
    return;  // one array warning per write
  }
}

Status InsertUnwatched(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                       DocumentView doc, WriteDelta* delta, bool bypass_validation);
Status ReplaceUnwatched(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                        std::string_view key, DocumentView old_doc, DocumentView new_doc,
                        bool bypass_validation);

}  // namespace

Status InsertDocument(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                      DocumentView doc, WriteDelta* delta, bool bypass_validation) {
  ROCKDOC_RETURN_IF_ERROR(InsertUnwatched(engine, txn, meta, doc, delta, bypass_validation));
  WatchWrite(engine, meta, nullptr, doc, &delta->stats);
  if (engine.change_log() != nullptr) ChangeSet::Of(engine, txn)->RecordInsert(meta, doc);
  return Status::OK();
}

Status ReplaceDocument(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                       std::string_view key, DocumentView old_doc, DocumentView new_doc,
                       WriteDelta* delta, bool bypass_validation, ReplaceKind kind) {
  ROCKDOC_RETURN_IF_ERROR(
      ReplaceUnwatched(engine, txn, meta, key, old_doc, new_doc, bypass_validation));
  WatchWrite(engine, meta, &old_doc, new_doc, &delta->stats);
  if (engine.record_cache() != nullptr) ChangeSet::Of(engine, txn)->NoteRecordWrite(key);
  if (engine.change_log() != nullptr) {
    ChangeSet::Of(engine, txn)->RecordReplace(meta, old_doc, new_doc, kind);
  }
  return Status::OK();
}

namespace {

Status InsertUnwatched(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                       DocumentView doc, WriteDelta* delta, bool bypass_validation) {
  if (!bypass_validation) ROCKDOC_RETURN_IF_ERROR(CheckValidator(engine, meta, doc, nullptr));
  if (meta.is_capped() &&
      static_cast<int64_t>(doc.size()) > meta.options()->capped_size) {
    return BadValue("object to insert exceeds cappedMaxSize");
  }
  Element id = *doc.begin();
  std::string key = DocumentKey(meta, id);
  const std::string_view id_key = IdKeyOf(key);
  // Everything that can fail for this document (keys, duplicates) is
  // decided before the first write, so a failed insert writes nothing.
  std::shared_ptr<const IndexSet> indexes = meta.indexes();
  DocumentIndexKeys doc_keys;
  ROCKDOC_RETURN_IF_ERROR(GenerateAllKeys(*indexes, doc, &doc_keys, /*want_paths=*/true));
  std::string existing;
  bool exists = false;
  Status s = txn->GetForUpdate(key, &existing, &exists);
  if (!s.ok()) return s.WithContext("insert into " + meta.full_name());
  if (exists) {
    BsonBuilder dup;
    dup.AppendElementAs("_id", id);
    BsonBuilder pattern;
    pattern.AppendInt32("_id", 1);
    return DuplicateKeyError(meta, "_id_", std::move(pattern).Build(), std::move(dup).Build());
  }
  for (size_t i = 0; i < indexes->size(); ++i) {
    const IndexDescriptor& index = *indexes->all()[i];
    if (!OneEntryPerValue(index)) continue;
    for (const IndexKey& k : doc_keys.keys[i]) {
      ROCKDOC_RETURN_IF_ERROR(CheckUniqueKey(txn, meta, index, k, id_key));
    }
  }
  if (!indexes->empty()) {
    ROCKDOC_RETURN_IF_ERROR(PublishMultikeyPaths(engine, meta, *indexes, doc_keys));
  }
  // A capped collection's inserts read their order entries back through the
  // transaction; other inserts seldom read what they wrote.
  s = meta.is_capped() ? txn->Put(KeySpace::kData, key, doc.bytes())
                       : txn->PutUnindexed(key, doc.bytes(), /*track=*/true);
  if (!s.ok()) return s.WithContext("insert into " + meta.full_name());
  for (size_t i = 0; i < indexes->size(); ++i) {
    for (const IndexKey& k : doc_keys.keys[i]) {
      ROCKDOC_RETURN_IF_ERROR(PutEntry(txn, *indexes->all()[i], k, id_key));
    }
  }
  if (meta.is_capped()) {
    ROCKDOC_RETURN_IF_ERROR(CappedInserted(engine, txn, meta, key, doc, delta));
  }
  ++delta->count;
  return Status::OK();
}

Status ReplaceUnwatched(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                        std::string_view key, DocumentView old_doc, DocumentView new_doc,
                        bool bypass_validation) {
  if (!bypass_validation) ROCKDOC_RETURN_IF_ERROR(CheckValidator(engine, meta, new_doc, &old_doc));
  if (meta.is_capped()) {
    ROCKDOC_RETURN_IF_ERROR(CappedResized(txn, meta, key, old_doc, new_doc));
  }
  std::shared_ptr<const IndexSet> indexes = meta.indexes();
  if (indexes->empty()) {
    return txn->Put(KeySpace::kData, key, new_doc.bytes())
        .WithContext("update in " + meta.full_name());
  }
  const std::string_view id_key = IdKeyOf(key);
  DocumentIndexKeys old_keys, new_keys;
  ROCKDOC_RETURN_IF_ERROR(GenerateAllKeys(*indexes, old_doc, &old_keys, /*want_paths=*/false));
  ROCKDOC_RETURN_IF_ERROR(GenerateAllKeys(*indexes, new_doc, &new_keys, /*want_paths=*/true));
  // Only the entries that change are rewritten: a merge of the two sorted
  // key lists of each index.
  struct Change {
    size_t index;
    const IndexKey* key;
    bool put;     // false: delete
    bool is_new;  // a key value the old document did not have
  };
  std::vector<Change> changes;
  for (size_t i = 0; i < indexes->size(); ++i) {
    const std::vector<IndexKey>& before = old_keys.keys[i];
    const std::vector<IndexKey>& after = new_keys.keys[i];
    size_t a = 0, b = 0;
    while (a < before.size() || b < after.size()) {
      int cmp = a == before.size()  ? 1
                : b == after.size() ? -1
                                    : before[a].bytes.compare(after[b].bytes);
      if (cmp < 0) {
        changes.push_back({i, &before[a++], false, false});
      } else if (cmp > 0) {
        changes.push_back({i, &after[b++], true, true});
      } else {
        // Same value, maybe another type (1 became 1.0): the value changes.
        if (before[a].type_bits != after[b].type_bits) {
          changes.push_back({i, &after[b], true, false});
        }
        ++a;
        ++b;
      }
    }
  }
  for (const Change& c : changes) {
    const IndexDescriptor& index = *indexes->all()[c.index];
    if (c.put && c.is_new && OneEntryPerValue(index)) {
      ROCKDOC_RETURN_IF_ERROR(CheckUniqueKey(txn, meta, index, *c.key, id_key));
    }
  }
  ROCKDOC_RETURN_IF_ERROR(PublishMultikeyPaths(engine, meta, *indexes, new_keys));
  Status s = txn->Put(KeySpace::kData, key, new_doc.bytes());
  if (!s.ok()) return s.WithContext("update in " + meta.full_name());
  for (const Change& c : changes) {
    const IndexDescriptor& index = *indexes->all()[c.index];
    ROCKDOC_RETURN_IF_ERROR(c.put ? PutEntry(txn, index, *c.key, id_key)
                                  : DeleteEntry(txn, index, *c.key, id_key));
  }
  return Status::OK();
}

}  // namespace

Status DeleteDocument(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                      std::string_view key, DocumentView old_doc, WriteDelta* delta) {
  ROCKDOC_RETURN_IF_ERROR(DeleteStored(engine, txn, meta, key, old_doc, delta));
  if (engine.change_log() != nullptr) ChangeSet::Of(engine, txn)->RecordDelete(meta, old_doc);
  return Status::OK();
}

namespace {

Status DeleteStored(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                    std::string_view key, DocumentView old_doc, WriteDelta* delta) {
  if (meta.is_capped()) ROCKDOC_RETURN_IF_ERROR(CappedRemoved(txn, meta, key, old_doc));
  if (engine.record_cache() != nullptr) ChangeSet::Of(engine, txn)->NoteRecordWrite(key);
  std::shared_ptr<const IndexSet> indexes = meta.indexes();
  DocumentIndexKeys old_keys;
  ROCKDOC_RETURN_IF_ERROR(GenerateAllKeys(*indexes, old_doc, &old_keys, /*want_paths=*/false));
  Status s = txn->Delete(KeySpace::kData, key);
  if (!s.ok()) return s.WithContext("delete from " + meta.full_name());
  const std::string_view id_key = IdKeyOf(key);
  for (size_t i = 0; i < indexes->size(); ++i) {
    for (const IndexKey& k : old_keys.keys[i]) {
      ROCKDOC_RETURN_IF_ERROR(DeleteEntry(txn, *indexes->all()[i], k, id_key));
    }
  }
  --delta->count;
  if (engine.options().collect_statistics) {
    delta->stats.AddSize(static_cast<int64_t>(old_doc.size()), -1);
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::optional<Document>> LockAndRead(KvTransaction* txn, std::string_view key) {
  std::string value;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(txn->GetForUpdate(key, &value, &found).WithContext("read for update"));
  if (!found) return std::optional<Document>();
  return std::optional<Document>(Document::AdoptValidated(std::move(value)));
}

Status AddToCount(KvTransaction* txn, const CollectionMeta& meta, int64_t* count_delta) {
  if (*count_delta != 0) {
    ROCKDOC_RETURN_IF_ERROR(
        txn->MergeUntracked(KeySpace::kCatalog, CountKey(meta.id), CountDelta(*count_delta)));
  }
  *count_delta = 0;
  return Status::OK();
}

Status CommitWithCount(KvTransaction* txn, const CollectionMeta& meta, int64_t* count_delta) {
  ROCKDOC_RETURN_IF_ERROR(AddToCount(txn, meta, count_delta));
  return txn->Commit();
}

}  // namespace rockdoc::internal
