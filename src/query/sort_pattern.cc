#include "query/sort_pattern.h"

#include <cmath>

namespace rockdoc {

namespace {

// Static BSON elements with an empty key and no value bytes: the keys of
// missing fields (null) and of empty arrays (undefined).
const uint8_t kNullElementBytes[] = {static_cast<uint8_t>(BsonType::kNull), 0x00};
const uint8_t kUndefinedElementBytes[] = {static_cast<uint8_t>(BsonType::kUndefined), 0x00};

Element NullKey() { return Element(kNullElementBytes); }
Element UndefinedKey() { return Element(kUndefinedElementBytes); }

// Where one part's walk stands: the value reached so far and the index of
// the next path part to resolve. `done` marks a value that is final even if
// it is an array (an array element taken at the leaf is never re-expanded).
struct Cursor {
  Element value;
  size_t next = 0;
  bool done = false;
};

Element ArrayElementAt(const Element& array, std::string_view index) {
  for (const Element& e : array.Array()) {
    if (e.key() == index) return e;
  }
  return Element();
}

// Walks a cursor through documents and positional array steps until it is
// final (a value, or missing) or stops at an array it must fan out over.
// Returns true when it stopped at such an array.
bool Advance(const FieldPath& path, Cursor* c) {
  if (c->done) return false;
  for (;;) {
    if (c->next == path.size()) {
      if (c->value.type() == BsonType::kArray) return true;  // leaf array
      c->done = true;
      return false;
    }
    switch (c->value.type()) {
      case BsonType::kDocument:
        c->value = c->value.Document().Get(path.part(c->next));
        ++c->next;
        break;
      case BsonType::kArray:
        if (path.part_is_index(c->next)) {
          // "a.0": the position, not a fan-out.
          c->value = ArrayElementAt(c->value, path.part(c->next));
          ++c->next;
          break;
        }
        return true;
      default:  // missing, or a scalar in the way
        c->value = Element();
        c->next = path.size();
        c->done = true;
        return false;
    }
  }
}

class KeyGenerator {
 public:
  KeyGenerator(const SortPattern& pattern, std::vector<Element>* best)
      : pattern_(pattern), best_(best) {}

  // Resolves all cursors, fanning out over (at most one) array at a time,
  // and keeps the smallest complete key in `best_`.
  Status Generate(std::vector<Cursor> cursors) {
    const auto& parts = pattern_.parts();
    const uint8_t* array = nullptr;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!Advance(parts[i].path, &cursors[i])) continue;
      if (array != nullptr && array != cursors[i].value.raw()) {
        return Status(ErrorCode::kBadValue, "cannot sort with keys that are parallel arrays");
      }
      array = cursors[i].value.raw();
    }
    if (array == nullptr) {
      Offer(cursors);
      return Status::OK();
    }
    const Element arr(array);
    if (arr.Array().empty()) {
      for (size_t i = 0; i < parts.size(); ++i) {
        Cursor& c = cursors[i];
        if (c.done || c.value.raw() != array) continue;
        // An empty array is `undefined` at the leaf; a path continuing
        // past it finds nothing (null).
        c.value = c.next == parts[i].path.size() ? UndefinedKey() : Element();
        c.done = true;
      }
      Offer(cursors);
      return Status::OK();
    }
    for (const Element& elt : arr.Array()) {
      std::vector<Cursor> next = cursors;
      for (size_t i = 0; i < parts.size(); ++i) {
        Cursor& c = next[i];
        if (c.done || c.value.raw() != array) continue;
        c.value = elt;
        if (c.next == parts[i].path.size()) {
          c.done = true;  // the element is the key, even an inner array
        } else if (elt.type() == BsonType::kArray) {
          // Arrays directly inside arrays are not traversed by name.
          c.value = Element();
          c.done = true;
        }
      }
      ROCKDOC_RETURN_IF_ERROR(Generate(std::move(next)));
    }
    return Status::OK();
  }

 private:
  void Offer(const std::vector<Cursor>& cursors) {
    key_.resize(cursors.size());
    for (size_t i = 0; i < cursors.size(); ++i) {
      key_[i] = cursors[i].value.ok() ? cursors[i].value : NullKey();
    }
    if (!have_best_ || pattern_.CompareKeys(key_, *best_) < 0) {
      *best_ = key_;
      have_best_ = true;
    }
  }

  const SortPattern& pattern_;
  std::vector<Element>* best_;
  std::vector<Element> key_;
  bool have_best_ = false;
};

}  // namespace

bool SortPattern::has_text_score() const {
  for (const Part& p : parts_) {
    if (p.text_score) return true;
  }
  return false;
}

StatusOr<SortPattern> SortPattern::Parse(DocumentView spec, bool allow_text_score) {
  SortPattern pattern;
  for (const Element& e : spec) {
    std::string_view name = e.key();
    // Validate the path as MongoDB's FieldPath does.
    size_t start = 0;
    for (;;) {
      size_t dot = name.find('.', start);
      std::string_view piece = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
      if (piece.empty()) {
        return Status(static_cast<ErrorCode>(15998),
                      "FieldPath field names may not be empty strings.");
      }
      if (piece[0] == '$') {
        return Status(static_cast<ErrorCode>(16410),
                      "FieldPath field names may not start with '$'. Consider using $getField or "
                      "$setField.");
      }
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (e.type() == BsonType::kDocument) {
      Element meta = e.Document().Get("$meta");
      if (!allow_text_score || !meta.ok()) {
        return Status(ErrorCode::kNotImplemented, "$meta sort keys are not supported by rockdoc");
      }
      size_t fields = 0;
      for (Element f : e.Document()) fields += f.ok() ? 1 : 0;
      if (fields != 1 || !meta.IsString()) {
        return Status(ErrorCode::kBadValue, "Illegal $meta sort: " + std::string(name));
      }
      if (meta.String() != "textScore") {
        return Status(ErrorCode::kNotImplemented,
                      "$meta sort by '" + std::string(meta.String()) +
                          "' is not supported by rockdoc");
      }
      pattern.parts_.push_back(Part{FieldPath(std::string(name)), false, true});
      continue;
    }
    if (!e.IsNumber()) {
      return Status(static_cast<ErrorCode>(15974),
                    "$sort key ordering must be specified using a number or {$meta: 'textScore'}");
    }
    // numberInt(): doubles and decimals truncate toward zero.
    double d = e.NumberAsDouble();
    // Only 1 and -1 are valid, so anything out of int64's range (where the
    // cast would be undefined) is simply "not 1 or -1".
    int64_t order = std::isfinite(d) && std::fabs(d) < 0x1p63 ? static_cast<int64_t>(std::trunc(d)) : 0;
    if (e.type() == BsonType::kInt64) order = e.Int64();
    if (order != 1 && order != -1) {
      return Status(static_cast<ErrorCode>(15975),
                    "$sort key ordering must be 1 (for ascending) or -1 (for descending)");
    }
    pattern.parts_.push_back(Part{FieldPath(std::string(name)), order == 1});
  }
  return pattern;
}

Status SortPattern::ExtractKey(DocumentView doc, std::vector<Element>* key) const {
  key->resize(parts_.size());
  // Fast path, no allocation: no part meets an array.
  bool arrays = false;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (parts_[i].text_score) {
      (*key)[i] = NullKey();
      continue;
    }
    const FieldPath& path = parts_[i].path;
    Element value = doc.Get(path.part(0));
    size_t next = 1;
    while (next < path.size() && value.type() == BsonType::kDocument) {
      value = value.Document().Get(path.part(next++));
    }
    if (value.type() == BsonType::kArray) {
      arrays = true;
      break;
    }
    (*key)[i] = (value.ok() && next == path.size()) ? value : NullKey();
  }
  if (!arrays) return Status::OK();

  // Each cursor starts at the top-level field its path names.
  std::vector<Cursor> cursors(parts_.size());
  for (size_t i = 0; i < parts_.size(); ++i) {
    cursors[i].value = parts_[i].text_score ? Element() : doc.Get(parts_[i].path.part(0));
    cursors[i].next = 1;
  }
  KeyGenerator gen(*this, key);
  return gen.Generate(std::move(cursors));
}

int SortPattern::CompareKeys(const Element* a, const Element* b) const {
  for (size_t i = 0; i < parts_.size(); ++i) {
    int c = CompareValuesWith(a[i], b[i], collator_.get());
    if (c != 0) return parts_[i].ascending ? c : -c;
  }
  return 0;
}

int SortPattern::CompareKeys(const std::vector<Value>& a, const std::vector<Value>& b) const {
  for (size_t i = 0; i < parts_.size(); ++i) {
    int c = CompareValuesWith(a[i].element(), b[i].element(), collator_.get());
    if (c != 0) return parts_[i].ascending ? c : -c;
  }
  return 0;
}

StatusOr<int> SortPattern::CompareDocuments(DocumentView a, DocumentView b) const {
  std::vector<Element> ka, kb;
  ROCKDOC_RETURN_IF_ERROR(ExtractKey(a, &ka));
  ROCKDOC_RETURN_IF_ERROR(ExtractKey(b, &kb));
  return CompareKeys(ka, kb);
}

Document SortPattern::ToDocument() const {
  BsonBuilder b;
  for (const Part& p : parts_) {
    if (p.text_score) {
      b.OpenDocument(p.path.dotted()).AppendString("$meta", "textScore").Close();
    } else {
      b.AppendInt32(p.path.dotted(), p.ascending ? 1 : -1);
    }
  }
  return std::move(b).Build();
}

}  // namespace rockdoc
