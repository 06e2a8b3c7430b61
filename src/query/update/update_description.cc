#include "query/update/update_description.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace rockdoc::internal {

namespace {

// Whether two elements hold the same value, byte for byte (and type).
bool SameValue(const Element& a, const Element& b) {
  return a.type() == b.type() && a.value_size() == b.value_size() &&
         std::memcmp(a.value_data(), b.value_data(), a.value_size()) == 0;
}

// A path being diffed: its dotted form and where each part (a field name,
// or an array element) starts in it, for disambiguatedPaths. Offsets, not
// copies, and whether a part is ambiguous is asked only of a path reported
// (Note): the common update pays an offset per level and nothing more.
struct Path {
  static constexpr uint32_t kIndexBit = uint32_t{1} << 31;  // an array element's part
  std::string dotted;
  std::vector<uint32_t> starts;  // each part's offset, kIndexBit set for an element
  uint32_t start(size_t i) const { return starts[i] & ~kIndexBit; }
  bool is_index(size_t i) const { return (starts[i] & kIndexBit) != 0; }
  std::string_view part(size_t i) const {
    const size_t end = i + 1 < starts.size() ? start(i + 1) - 1 : dotted.size();
    return std::string_view(dotted).substr(start(i), end - start(i));
  }
};

// A field name that reads as an array index or holds a dot: its dotted path
// is ambiguous (MongoDB 6.1's disambiguatedPaths).
bool AmbiguousName(std::string_view name) {
  if (name.find('.') != std::string_view::npos) return true;
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Enters a field or an array element of `path`; Leave undoes it.
void Enter(Path* path, std::string_view name, bool is_index) {
  if (!path->starts.empty()) path->dotted.push_back('.');
  path->starts.push_back(static_cast<uint32_t>(path->dotted.size()) |
                         (is_index ? Path::kIndexBit : 0));
  path->dotted.append(name);
}
void Leave(Path* path) {
  const size_t last = path->starts.size() - 1;
  path->dotted.resize(last == 0 ? 0 : path->start(last) - 1);
  path->starts.pop_back();
}

struct Diff {
  BsonBuilder updated;
  std::vector<std::string> removed;
  std::vector<std::pair<std::string, int64_t>> truncated;
  // {path: [part, ...]} of the ambiguous paths: made at the first (rare).
  std::optional<BsonBuilder> disambiguated;
  // Records `path` in disambiguated when a field of it is ambiguous.
  void Note(const Path& path) {
    bool ambiguous = false;
    for (size_t i = 0; i < path.starts.size() && !ambiguous; ++i) {
      ambiguous = !path.is_index(i) && AmbiguousName(path.part(i));
    }
    if (!ambiguous) return;
    if (!disambiguated) disambiguated.emplace();
    disambiguated->OpenArray(path.dotted);
    for (size_t i = 0; i < path.starts.size(); ++i) {
      if (path.is_index(i)) {
        disambiguated->AppendInt32("", std::stoi(std::string(path.part(i))));
      } else {
        disambiguated->AppendString("", path.part(i));
      }
    }
    disambiguated->Close();
  }
  void Updated(const Path& path, const Element& value) {
    updated.AppendElementAs(path.dotted, value);
    Note(path);
  }
};

void DiffValues(const Element& before, const Element& after, Path* path, Diff* out);

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

void DiffDocuments(DocumentView before, DocumentView after, Path* path, Diff* out) {
  DocumentView::Iterator in_after = after.begin();
  for (const Element& b : before) {
    if (!FieldNamed(after, &in_after, b.key()).ok()) {
      Enter(path, b.key(), false);
      out->removed.push_back(path->dotted);
      out->Note(*path);
      Leave(path);
    }
  }
  DocumentView::Iterator in_before = before.begin();
  for (const Element& a : after) {
    Enter(path, a.key(), false);
    Element b = FieldNamed(before, &in_before, a.key());
    if (!b.ok()) {
      out->Updated(*path, a);
    } else {
      DiffValues(b, a, path, out);
    }
    Leave(path);
  }
}

void DiffArrays(DocumentView before, DocumentView after, Path* path, Diff* out) {
  std::vector<Element> old_elements(before.begin(), before.end());
  int64_t n = 0;
  for (const Element& a : after) {
    Enter(path, std::to_string(n), true);
    if (static_cast<size_t>(n) < old_elements.size()) {
      DiffValues(old_elements[n], a, path, out);
    } else {
      out->Updated(*path, a);
    }
    Leave(path);
    ++n;
  }
  if (static_cast<size_t>(n) < old_elements.size()) {
    out->truncated.emplace_back(path->dotted, n);
    out->Note(*path);
  }
}

void DiffValues(const Element& before, const Element& after, Path* path, Diff* out) {
  if (SameValue(before, after)) return;
  if (before.IsDocument() && after.IsDocument()) {
    DiffDocuments(before.Document(), after.Document(), path, out);
  } else if (before.IsArray() && after.IsArray()) {
    DiffArrays(before.Array(), after.Array(), path, out);
  } else {
    out->Updated(*path, after);
  }
}

}  // namespace

Document ComputeUpdateDescription(DocumentView before, DocumentView after) {
  Diff diff;
  // The thread's path, reused: its buffers outlive one update, so that a
  // diff allocates nothing for them once warm.
  thread_local Path path;
  path.dotted.clear();
  path.starts.clear();
  DiffDocuments(before, after, &path, &diff);
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
  if (diff.disambiguated) {
    b.AppendDocument("disambiguatedPaths", std::move(*diff.disambiguated).Build());
  }
  return std::move(b).Build();
}

}  // namespace rockdoc::internal
