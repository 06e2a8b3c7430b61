#include "index/key_generator.h"

#include <algorithm>

#include "keystring/keystring.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// The value an empty array at the end of a path is indexed as.
const Element& UndefinedValue() {
  static const Document* holder = [] {
    BsonBuilder b;
    b.AppendUndefined("u");
    return new Document(std::move(b).Build());
  }();
  static const Element value = holder->Get("u");
  return value;
}

bool IsEmptyArray(const Element& e) { return e.type() == BsonType::kArray && e.Array().empty(); }

// Where the walk of one field's path stopped: at a value (possibly missing)
// or at an array to expand.
struct WalkResult {
  Element value;         // when array is missing
  Element array;         // the array to expand
  size_t next_part = 0;  // the path component after the array
};

// MongoDB refuses a positional path component that an array both indexes
// and finds as a field of one of its documents ({"a.0": 1} over
// {a: [{"0": 1}]}): the matcher would read both, the index only one.
Status CheckNotAmbiguous(const Element& array, std::string_view component) {
  for (Element element : array.Array()) {
    if (element.type() == BsonType::kDocument && element.Document().Get(component).ok()) {
      return Status(static_cast<ErrorCode>(16746),
                    "Ambiguous field name found in array (do not use numeric field names in "
                    "embedded elements in an array), field: '" +
                        std::string(component) + "' for array: " + ToJson(array.Array()));
    }
  }
  return Status::OK();
}

// Follows `path` from component `part` inside `doc` through embedded
// documents until it ends, runs out, or meets an array that must be
// expanded. A numeric component selects an array's element in place.
Status Walk(DocumentView doc, const FieldPath& path, size_t part, WalkResult* out) {
  for (;;) {
    Element e = doc.Get(path.part(part));
    if (!e.ok()) return Status::OK();  // missing
    ++part;
    while (e.type() == BsonType::kArray) {
      if (part < path.size() && path.part_is_index(part)) {
        Element at = e.Array().Get(path.part(part));
        if (at.ok()) {
          ROCKDOC_RETURN_IF_ERROR(CheckNotAmbiguous(e, path.part(part)));
          e = at;
          ++part;
          if (part == path.size()) {
            out->value = IsEmptyArray(at) ? UndefinedValue() : at;
            return Status::OK();
          }
          continue;
        }
      }
      out->array = e;
      out->next_part = part;
      return Status::OK();
    }
    if (part == path.size()) {
      out->value = e;
      return Status::OK();
    }
    if (e.type() != BsonType::kDocument) return Status::OK();  // a scalar blocks the path: missing
    doc = e.Document();
  }
}

// One field of the key being assembled: either still to be walked (from
// `doc` at component `part`) or settled to `value` (missing allowed).
struct Slot {
  bool pending = false;
  DocumentView doc;
  size_t part = 0;
  Element value;
};

class KeyGenerator {
 public:
  KeyGenerator(const IndexDescriptor& index, std::vector<IndexKey>* keys, MultikeyPaths* paths)
      : index_(index), keys_(keys), paths_(paths) {}

  // Walks every pending slot; expands the (single) array met, recursing once
  // per element; emits a key when every slot is settled.
  Status Expand(std::vector<Slot>& slots) {
    const size_t n = slots.size();
    Element array;                     // the first array met, in key pattern order
    std::vector<size_t> at_array;      // fields that stopped at `array`
    std::vector<size_t> next_part(n);  // their component after the array
    for (size_t i = 0; i < n; ++i) {
      if (!slots[i].pending) continue;
      WalkResult w;
      ROCKDOC_RETURN_IF_ERROR(Walk(slots[i].doc, index_.field_paths()[i], slots[i].part, &w));
      slots[i].pending = false;
      if (!w.array.ok()) {
        slots[i].value = w.value;
        continue;
      }
      if (!array.ok()) {
        array = w.array;
      } else if (w.array.raw() != array.raw()) {
        return Status(ErrorCode::kCannotIndexParallelArrays,
                      "cannot index parallel arrays [" + std::string(w.array.key()) + "] [" +
                          std::string(array.key()) + "]");
      }
      at_array.push_back(i);
      next_part[i] = w.next_part;
    }
    if (at_array.empty()) {
      Emit(slots);
      return Status::OK();
    }
    for (size_t i : at_array) {
      if (paths_ != nullptr) (*paths_)[i].insert(next_part[i] - 1);
    }
    DocumentView elements = array.Array();
    if (elements.empty()) {
      for (size_t i : at_array) {
        const bool leaf = next_part[i] == index_.field_paths()[i].size();
        slots[i].value = leaf ? UndefinedValue() : Element();
      }
      Emit(slots);
      return Status::OK();
    }
    std::vector<Slot> copy;
    for (Element element : elements) {
      copy = slots;
      for (size_t i : at_array) {
        if (next_part[i] == index_.field_paths()[i].size()) {
          copy[i].value = element;  // a nested array is keyed whole
        } else if (element.type() == BsonType::kDocument) {
          copy[i].pending = true;
          copy[i].doc = element.Document();
          copy[i].part = next_part[i];
        } else {
          copy[i].value = Element();  // the rest of the path is missing
        }
      }
      ROCKDOC_RETURN_IF_ERROR(Expand(copy));
    }
    return Status::OK();
  }

 private:
  void Emit(const std::vector<Slot>& slots) {
    if (index_.sparse()) {
      bool all_missing = true;
      for (const Slot& s : slots) all_missing = all_missing && !s.value.ok();
      if (all_missing) return;
    }
    keystring::Builder b(index_.descending_bits());
    for (const Slot& s : slots) AppendKeyValue(&b, s.value, index_.collator());
    keys_->push_back(IndexKey{b.bytes(), b.type_bits()});
  }

  const IndexDescriptor& index_;
  std::vector<IndexKey>* keys_;
  MultikeyPaths* paths_;
};

}  // namespace

void AppendKeyValue(keystring::Builder* b, const Element& value, const Collator* collator) {
  if (collator != nullptr && IsCollatable(value)) {
    b->Append(CollationKeyOf(value, collator).element());
  } else {
    b->Append(value);
  }
}

bool InPartialIndex(const IndexDescriptor& index, DocumentView doc) {
  return index.partial_filter() == nullptr || index.partial_filter()->Matches(doc);
}

bool BeginIndexKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                    MultikeyPaths* multikey_paths) {
  keys->clear();
  if (multikey_paths != nullptr) multikey_paths->assign(index.num_fields(), MultikeyComponents());
  return InPartialIndex(index, doc);
}

Status GenerateIndexKeys(const IndexDescriptor& index, DocumentView doc,
                         std::vector<IndexKey>* keys, MultikeyPaths* multikey_paths) {
  if (!BeginIndexKeys(index, doc, keys, multikey_paths)) return Status::OK();
  std::vector<Slot> slots(index.num_fields());
  for (Slot& s : slots) {
    s.pending = true;
    s.doc = doc;
  }
  KeyGenerator gen(index, keys, multikey_paths);
  ROCKDOC_RETURN_IF_ERROR(gen.Expand(slots));
  if (keys->size() > 1) {
    // Sorted for diffs and merges; equal values (1, 1.0) collapse to the
    // first met, as MongoDB's key set keeps the first of equal keys.
    std::stable_sort(keys->begin(), keys->end(),
                     [](const IndexKey& a, const IndexKey& b) { return a.bytes < b.bytes; });
    keys->erase(
        std::unique(keys->begin(), keys->end(),
                    [](const IndexKey& a, const IndexKey& b) { return a.bytes == b.bytes; }),
        keys->end());
  }
  return Status::OK();
}

}  // namespace rockdoc::internal
