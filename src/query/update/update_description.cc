#include "query/update/update_description.h"

#include <cstring>
#include <string>
#include <vector>

namespace rockdoc::internal {

namespace {

// Whether two elements hold the same value, byte for byte (and type).
bool SameValue(const Element& a, const Element& b) {
  return a.type() == b.type() && a.value_size() == b.value_size() &&
         std::memcmp(a.value_data(), b.value_data(), a.value_size()) == 0;
}

std::string Join(const std::string& prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
}

struct Diff {
  BsonBuilder updated;
  std::vector<std::string> removed;
  std::vector<std::pair<std::string, int64_t>> truncated;
};

void DiffValues(const Element& before, const Element& after, const std::string& path, Diff* out);

// The field of `doc` named `name`: at *cursor when the two documents list
// their fields in the same order (the usual case: linear), else looked up.
Element FieldNamed(DocumentView doc, DocumentView::Iterator* cursor, std::string_view name) {
  if (*cursor != doc.end() && (**cursor).key() == name) {
    Element e = **cursor;
    ++*cursor;
    return e;
  }
  return doc.Get(name);
}

void DiffDocuments(DocumentView before, DocumentView after, const std::string& prefix, Diff* out) {
  DocumentView::Iterator in_after = after.begin();
  for (const Element& b : before) {
    if (!FieldNamed(after, &in_after, b.key()).ok()) out->removed.push_back(Join(prefix, b.key()));
  }
  DocumentView::Iterator in_before = before.begin();
  for (const Element& a : after) {
    const std::string path = Join(prefix, a.key());
    Element b = FieldNamed(before, &in_before, a.key());
    if (!b.ok()) {
      out->updated.AppendElementAs(path, a);
    } else {
      DiffValues(b, a, path, out);
    }
  }
}

void DiffArrays(DocumentView before, DocumentView after, const std::string& path, Diff* out) {
  std::vector<Element> old_elements(before.begin(), before.end());
  int64_t n = 0;
  for (const Element& a : after) {
    const std::string item = path + "." + std::to_string(n);
    if (static_cast<size_t>(n) < old_elements.size()) {
      DiffValues(old_elements[n], a, item, out);
    } else {
      out->updated.AppendElementAs(item, a);
    }
    ++n;
  }
  if (static_cast<size_t>(n) < old_elements.size()) out->truncated.emplace_back(path, n);
}

void DiffValues(const Element& before, const Element& after, const std::string& path, Diff* out) {
  if (SameValue(before, after)) return;
  if (before.IsDocument() && after.IsDocument()) {
    DiffDocuments(before.Document(), after.Document(), path, out);
  } else if (before.IsArray() && after.IsArray()) {
    DiffArrays(before.Array(), after.Array(), path, out);
  } else {
    out->updated.AppendElementAs(path, after);
  }
}

}  // namespace

Document ComputeUpdateDescription(DocumentView before, DocumentView after) {
  Diff diff;
  DiffDocuments(before, after, "", &diff);
  BsonBuilder b;
  b.AppendDocument("updatedFields", std::move(diff.updated).Build());
  b.OpenArray("removedFields");
  for (const std::string& r : diff.removed) b.AppendString("", r);
  b.Close();
  b.OpenArray("truncatedArrays");
  for (const auto& [field, size] : diff.truncated) {
    b.OpenDocument("");
    b.AppendString("field", field);
    b.AppendInt32("newSize", static_cast<int32_t>(size));
    b.Close();
  }
  b.Close();
  return std::move(b).Build();
}

}  // namespace rockdoc::internal
