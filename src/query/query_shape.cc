#include "query/query_shape.h"

#include <string>

namespace rockdoc::internal {

std::string_view ShapePlaceholder(BsonType type) {
  switch (type) {
    case BsonType::kInt32:
    case BsonType::kInt64:
    case BsonType::kDouble:
    case BsonType::kDecimal128:
      return "?number";
    case BsonType::kString:
    case BsonType::kSymbol:
      return "?string";
    case BsonType::kDocument:
      return "?object";
    case BsonType::kArray:
      return "?array<>";
    case BsonType::kBool:
      return "?bool";
    case BsonType::kDateTime:
      return "?date";
    case BsonType::kObjectId:
      return "?objectId";
    case BsonType::kNull:
      return "?null";
    case BsonType::kBinary:
      return "?binData";
    case BsonType::kTimestamp:
      return "?timestamp";
    case BsonType::kRegex:
      return "?regex";
    case BsonType::kMinKey:
      return "?minKey";
    case BsonType::kMaxKey:
      return "?maxKey";
    case BsonType::kUndefined:
      return "?undefined";
    case BsonType::kCode:
    case BsonType::kCodeWithScope:
      return "?javascript";
    case BsonType::kDbPointer:
      return "?dbPointer";
    case BsonType::kEod:
      break;
  }
  return "?";
}

namespace {

// Writes a shape to a builder (when given) and folds it into a hash
// (always): the same walk serves both.
class ShapeWriter {
 public:
  ShapeWriter(BsonBuilder* out, ShapeTraits* traits) : out_(out), traits_(traits) {}

  void Open(std::string_view key, bool array) {
    Mix(array ? 'A' : 'D', key);
    if (out_ != nullptr) array ? out_->OpenArray(key) : out_->OpenDocument(key);
  }
  void Close() {
    Mix('C', {});
    if (out_ != nullptr) out_->Close();
  }
  void Text(std::string_view key, std::string_view text) {
    Mix('S', key);
    Mix('s', text);
    if (out_ != nullptr) out_->AppendString(key, text);
  }
  // An element kept as it is (a sort direction, a projection flag).
  void Keep(const Element& e) {
    Mix('K', e.key());
    Mix(static_cast<char>(e.type()),
        std::string_view(reinterpret_cast<const char*>(e.value_data()), e.value_size()));
    if (out_ != nullptr) out_->AppendElement(e);
  }
  // A literal replaced by its type's placeholder.
  void Literal(std::string_view key, const Element& v) {
    if (v.type() != BsonType::kArray) {
      Text(key, ShapePlaceholder(v.type()));
      return;
    }
    // "?array<T>" when every element has placeholder T.
    std::string_view common;
    bool mixed = false;
    for (Element x : v.Array()) {
      std::string_view p = x.type() == BsonType::kArray ? "?array<>" : ShapePlaceholder(x.type());
      if (common.empty()) {
        common = p;
      } else if (common != p) {
        mixed = true;
        break;
      }
    }
    if (mixed || common.empty() || common == "?array<>") {
      Text(key, "?array<>");
    } else {
      std::string text = "?array<" + std::string(common) + ">";
      Text(key, text);
    }
  }

  ShapeTraits* traits() { return traits_; }
  uint64_t hash() const { return hash_; }

 private:
  // FNV-1a over a tag and the bytes, with the length folded in so that
  // adjacent strings cannot run into each other.
  void Mix(char tag, std::string_view bytes) {
    uint64_t h = hash_;
    h = (h ^ static_cast<uint8_t>(tag)) * 0x100000001b3ULL;
    h = (h ^ bytes.size()) * 0x100000001b3ULL;
    for (char c : bytes) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
    hash_ = h;
  }

  BsonBuilder* out_;
  ShapeTraits* traits_;
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

bool IsOperatorObject(const Element& v) {
  if (v.type() != BsonType::kDocument) return false;
  auto it = v.Document().begin();
  return it != v.Document().end() && !(*it).key().empty() && (*it).key()[0] == '$';
}

// Whether a regex is case-insensitive is a trait of the run, not of the
// shape (MongoDB's shape hides the options): the statistics count the runs.
void NoteRegexOptions(std::string_view options, ShapeWriter* w) {
  if (options.find('i') != std::string_view::npos) w->traits()->case_insensitive = true;
}

// A regex literal: {$regex: "?string", $options: "?string"}, whatever its
// flags.
void RegexLiteral(std::string_view key, const Element& v, ShapeWriter* w) {
  NoteRegexOptions(v.Regex().options, w);
  w->Open(key, false);
  w->Text("$regex", "?string");
  w->Text("$options", "?string");
  w->Close();
}

void ShapeGeneric(const Element& e, bool keep_strings, ShapeWriter* w);
void ShapeFilter(DocumentView filter, ShapeWriter* w);

// The operators applied to one field: {$gt: 1, $lt: 5}.
void ShapeOperators(std::string_view key, DocumentView ops, ShapeWriter* w) {
  w->Open(key, false);
  for (Element op : ops) {
    const std::string_view name = op.key();
    if (name == "$not" && op.type() == BsonType::kDocument) {
      ShapeOperators(name, op.Document(), w);
    } else if (name == "$not" && op.type() == BsonType::kRegex) {
      RegexLiteral(name, op, w);
    } else if (name == "$elemMatch" && op.type() == BsonType::kDocument) {
      if (IsOperatorObject(op) && (*op.Document().begin()).key() != "$and" &&
          (*op.Document().begin()).key() != "$or" && (*op.Document().begin()).key() != "$nor" &&
          (*op.Document().begin()).key() != "$expr") {
        ShapeOperators(name, op.Document(), w);
      } else {
        w->Open(name, false);
        ShapeFilter(op.Document(), w);
        w->Close();
      }
    } else if (name == "$regex") {
      if (op.type() == BsonType::kRegex) NoteRegexOptions(op.Regex().options, w);
      w->Text(name, "?string");
    } else if (name == "$options") {
      if (op.type() == BsonType::kString) NoteRegexOptions(op.String(), w);
      w->Text(name, "?string");
    } else if (op.type() == BsonType::kRegex) {
      // {$in: /x/i} is not valid, but {$eq: /x/} compares regexes: a literal.
      w->Literal(name, op);
    } else {
      if ((name == "$in" || name == "$nin" || name == "$all") && op.type() == BsonType::kArray) {
        for (Element x : op.Array()) {
          if (x.type() == BsonType::kRegex) NoteRegexOptions(x.Regex().options, w);
        }
      }
      w->Literal(name, op);
    }
  }
  w->Close();
}

void ShapeFilter(DocumentView filter, ShapeWriter* w) {
  for (Element e : filter) {
    const std::string_view key = e.key();
    if ((key == "$and" || key == "$or" || key == "$nor") && e.type() == BsonType::kArray) {
      w->Open(key, true);
      for (Element clause : e.Array()) {
        if (clause.type() == BsonType::kDocument) {
          w->Open(clause.key(), false);
          ShapeFilter(clause.Document(), w);
          w->Close();
        } else {
          w->Literal(clause.key(), clause);
        }
      }
      w->Close();
    } else if (key == "$expr") {
      ShapeGeneric(e, /*keep_strings=*/false, w);
    } else if (!key.empty() && key[0] == '$') {
      // $comment, $text, $where, $jsonSchema, $alwaysTrue...: their values
      // are literals.
      w->Literal(key, e);
    } else if (e.type() == BsonType::kRegex) {
      RegexLiteral(key, e, w);
    } else if (IsOperatorObject(e)) {
      ShapeOperators(key, e.Document(), w);
    } else {
      w->Open(key, false);
      w->Literal("$eq", e);
      w->Close();
    }
  }
}

// Expressions and stage specifications: documents and arrays walked,
// strings naming a field path or variable ("$a") kept (and every string
// with `keep_strings`), other values placeholders.
void ShapeGeneric(const Element& e, bool keep_strings, ShapeWriter* w) {
  switch (e.type()) {
    case BsonType::kDocument:
      w->Open(e.key(), false);
      for (Element x : e.Document()) ShapeGeneric(x, keep_strings, w);
      w->Close();
      return;
    case BsonType::kArray: {
      bool structured = false;
      for (Element x : e.Array()) {
        structured = structured || x.type() == BsonType::kDocument ||
                     x.type() == BsonType::kArray ||
                     (x.type() == BsonType::kString && !x.String().empty() && x.String()[0] == '$');
      }
      if (!structured) {
        w->Literal(e.key(), e);
        return;
      }
      w->Open(e.key(), true);
      for (Element x : e.Array()) ShapeGeneric(x, keep_strings, w);
      w->Close();
      return;
    }
    case BsonType::kString:
      if (keep_strings || (!e.String().empty() && e.String()[0] == '$')) {
        w->Keep(e);
        return;
      }
      w->Literal(e.key(), e);
      return;
    case BsonType::kRegex:
      NoteRegexOptions(e.Regex().options, w);
      w->Literal(e.key(), e);
      return;
    default:
      w->Literal(e.key(), e);
  }
}

void ShapeStages(std::string_view key, DocumentView pipeline, ShapeWriter* w);

// $lookup's, $graphLookup's and $unionWith's specification: the names it
// refers to (from, localField, as, ...) are the shape; a nested pipeline
// is shaped as a pipeline, `let` and startWith as expressions,
// restrictSearchWithMatch as a filter.
void ShapeJoinSpec(const Element& spec, ShapeWriter* w) {
  if (spec.type() != BsonType::kDocument) {
    ShapeGeneric(spec, /*keep_strings=*/true, w);  // {$unionWith: "coll"}
    return;
  }
  w->Open(spec.key(), false);
  for (Element f : spec.Document()) {
    if (f.key() == "pipeline" && f.type() == BsonType::kArray) {
      ShapeStages(f.key(), f.Array(), w);
    } else if (f.key() == "let" || f.key() == "startWith") {
      ShapeGeneric(f, /*keep_strings=*/false, w);
    } else if (f.key() == "restrictSearchWithMatch" && f.type() == BsonType::kDocument) {
      w->Open(f.key(), false);
      ShapeFilter(f.Document(), w);
      w->Close();
    } else {
      ShapeGeneric(f, /*keep_strings=*/true, w);
    }
  }
  w->Close();
}

void ShapeStages(std::string_view key, DocumentView pipeline, ShapeWriter* w) {
  w->Open(key, true);
  for (Element stage : pipeline) {
    if (stage.type() != BsonType::kDocument || stage.Document().empty()) {
      w->Literal(stage.key(), stage);
      continue;
    }
    const Element spec = *stage.Document().begin();
    const std::string_view name = spec.key();
    w->Open(stage.key(), false);
    if (name == "$match" && spec.type() == BsonType::kDocument) {
      w->Open(name, false);
      ShapeFilter(spec.Document(), w);
      w->Close();
    } else if (name == "$sort" && spec.type() == BsonType::kDocument) {
      w->Open(name, false);
      for (Element e : spec.Document()) w->Keep(e);
      w->Close();
    } else if (name == "$lookup" || name == "$graphLookup" || name == "$unionWith") {
      ShapeJoinSpec(spec, w);
    } else if (name == "$unwind" || name == "$out" || name == "$merge" || name == "$count") {
      // The names they refer to are the shape.
      ShapeGeneric(spec, /*keep_strings=*/true, w);
    } else {
      ShapeGeneric(spec, /*keep_strings=*/false, w);
    }
    w->Close();
  }
  w->Close();
}

// A field that holds references by convention: _id, or a name ending in
// "Id" or "_id" (postId, author_id).
bool IsReferenceField(std::string_view key) {
  auto ends = [&](std::string_view suffix) {
    return key.size() > suffix.size() && key.substr(key.size() - suffix.size()) == suffix;
  };
  return key == "_id" || ends("Id") || ends("_id");
}

void NoteIdLookup(DocumentView filter, ShapeTraits* traits) {
  auto it = filter.begin();
  if (it == filter.end()) return;
  const Element id = *it;
  if (!IsReferenceField(id.key()) || ++it != filter.end()) return;
  if (!IsOperatorObject(id)) {
    traits->id_lookup = id.type() != BsonType::kRegex;
    return;
  }
  auto op = id.Document().begin();
  const std::string_view name = (*op).key();
  traits->id_lookup = (name == "$in" || name == "$eq") && ++op == id.Document().end();
}

}  // namespace

uint64_t ShapeFind(DocumentView filter, DocumentView sort, DocumentView projection, bool has_skip,
                   bool has_limit, BsonBuilder* out, ShapeTraits* traits) {
  ShapeWriter w(out, traits);
  w.Open("filter", false);
  ShapeFilter(filter, &w);
  w.Close();
  if (!sort.empty()) {
    w.Open("sort", false);
    for (Element e : sort) w.Keep(e);
    w.Close();
  }
  if (!projection.empty()) {
    w.Open("projection", false);
    for (Element e : projection) {
      if (e.type() == BsonType::kDocument) {
        ShapeGeneric(e, /*keep_strings=*/false, &w);  // $slice, $elemMatch
      } else {
        w.Keep(e);
      }
    }
    w.Close();
  }
  if (has_skip) w.Text("skip", "?number");
  if (has_limit) w.Text("limit", "?number");
  NoteIdLookup(filter, traits);
  return w.hash();
}

uint64_t ShapePipeline(DocumentView pipeline, BsonBuilder* out, ShapeTraits* traits) {
  ShapeWriter w(out, traits);
  ShapeStages("pipeline", pipeline, &w);
  return w.hash();
}

}  // namespace rockdoc::internal
