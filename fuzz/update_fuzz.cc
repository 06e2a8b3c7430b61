// libFuzzer: JSON text {"u": <update>, "arrayFilters": [...], "q": <filter>}
// into UpdateDriver::Parse (run with -dict=fuzz/update.dict). A parse error
// carries a code and a message. A parsed update is applied to fixed
// documents (and, when "q" is given, to the upsert seed built from it), and
// whatever Apply returns must be a clean error or a document that is safe to
// store; aborts otherwise:
//   * valid BSON within kMaxBsonObjectSize, array keys 0, 1, ..., and every
//     field name one the input document or the update wrote (no name cut at
//     a NUL, no empty name out of nowhere);
//   * `_id` unchanged; no new top-level '$' field outside an upsert insert;
//   * `modified` exactly when the bytes changed; a value an index on any
//     path P extracts is unchanged unless PathMayAffect(changed path, P);
//   * the storage depth check of the changed paths alone (what the write
//     path runs) accepts only documents the full depth check accepts.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "query/field_path.h"
#include "query/update/update_driver.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "store/write_ops.h"

namespace {

using rockdoc::BsonType;
using rockdoc::DocumentView;
using rockdoc::Element;
using rockdoc::fuzz::Fail;
using rockdoc::fuzz::Json;

constexpr int kMaxPathDepth = 8;
constexpr size_t kMaxPaths = 400;
constexpr size_t kMaxPathCheckBytes = 256 * 1024;

void SplitInto(std::string_view s, std::set<std::string, std::less<>>* out) {
  out->emplace(s);
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    out->emplace(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
}

// Every field name and string in `doc` (and, when `split`, their dotted
// parts): the names an update of or to `doc` can legitimately produce.
void CollectNames(DocumentView doc, bool split, std::set<std::string, std::less<>>* out) {
  for (const Element& e : doc) {
    if (split) {
      SplitInto(e.key(), out);
    } else {
      out->emplace(e.key());
    }
    if (e.type() == BsonType::kString) SplitInto(e.String(), out);
    if (e.IsContainer()) CollectNames(e.Document(), split, out);
    if (e.type() == BsonType::kCodeWithScope) CollectNames(e.CodeWithScopeScope(), split, out);
  }
}

// What is wrong with the field names of `doc`, or "" when nothing is.
std::string BadName(DocumentView doc, bool is_array,
                    const std::set<std::string, std::less<>>& known) {
  size_t index = 0;
  for (const Element& e : doc) {
    if (is_array) {
      if (e.key() != std::to_string(index))
        return "an array key out of sequence: " + std::string(e.key());
    } else if (known.find(e.key()) == known.end()) {
      return "a made-up field name: '" + std::string(e.key()) + "'";
    }
    ++index;
    std::string bad;
    if (e.IsContainer()) bad = BadName(e.Document(), e.type() == BsonType::kArray, known);
    if (e.type() == BsonType::kCodeWithScope) bad = BadName(e.CodeWithScopeScope(), false, known);
    if (!bad.empty()) return bad;
  }
  return "";
}

// Index-style paths of `doc`: field names, with and without array positions.
void CollectPaths(DocumentView doc, const std::string& prefix, int depth,
                  std::set<std::string>* out) {
  if (depth > kMaxPathDepth) return;
  for (const Element& e : doc) {
    if (out->size() >= kMaxPaths) return;
    std::string path = prefix.empty() ? std::string(e.key()) : prefix + "." + std::string(e.key());
    out->insert(path);
    if (e.type() == BsonType::kDocument) CollectPaths(e.Document(), path, depth + 1, out);
    if (e.type() == BsonType::kArray) {
      for (const Element& elt : e.Array()) {
        if (out->size() >= kMaxPaths) return;
        std::string positional = path + "." + std::string(elt.key());
        out->insert(positional);
        if (elt.type() == BsonType::kDocument) {
          CollectPaths(elt.Document(), path, depth + 1, out);
          CollectPaths(elt.Document(), positional, depth + 1, out);
        }
      }
    }
  }
}

// The values an index on `path` can see, as a set of bytes: every value the
// matcher's walk reaches, where (as in index keys) a missing value, nothing
// reached at all and null are the same.
std::set<std::string> ValuesAt(DocumentView doc, const std::string& path) {
  std::set<std::string> out;
  rockdoc::FieldPath field_path(path);
  rockdoc::ForEachPathValue(
      doc, field_path, rockdoc::LeafArrayMode::kTraverse, [&](const Element& v, int64_t) {
        std::string value(1, static_cast<char>(BsonType::kNull));
        if (v.ok()) {
          value[0] = static_cast<char>(v.type());
          value.append(reinterpret_cast<const char*>(v.value_data()), v.value_size());
        }
        out.insert(std::move(value));
        return false;
      });
  if (out.empty()) out.insert(std::string(1, static_cast<char>(BsonType::kNull)));
  return out;
}

void CheckResult(const rockdoc::UpdateDriver& driver, DocumentView in,
                 const rockdoc::UpdateDriver::Result& r, bool upsert_insert,
                 const std::set<std::string, std::less<>>& update_names, std::string_view text) {
  auto context = [&] { return std::string(text) + "\n--- document\n" + Json(in); };
  rockdoc::BsonValidationOptions options;
  options.max_depth = 1000;  // depth is the storage check's business, below
  rockdoc::Status valid = rockdoc::ValidateBson(r.doc.bytes(), options);
  if (!valid.ok()) Fail("Apply produced invalid BSON", valid.ToString(), context());
  auto out = [&] { return Json(r.doc) + "\n--- from\n" + context(); };

  std::set<std::string, std::less<>> known = update_names;
  CollectNames(in, false, &known);
  std::string bad = BadName(r.doc, false, known);
  if (!bad.empty()) Fail("the update wrote a bad field name", bad, out());

  if (r.modified == (r.doc.bytes() == in.bytes())) Fail("`modified` is wrong", "", out());

  Element id_in = in.Get("_id"), id_out = r.doc.Get("_id");
  if (!upsert_insert && id_in.ok() &&
      (id_in.type() != id_out.type() || id_in.value_size() != id_out.value_size() ||
       std::string_view(reinterpret_cast<const char*>(id_in.value_data()), id_in.value_size()) !=
           std::string_view(reinterpret_cast<const char*>(id_out.value_data()),
                            id_out.value_size()))) {
    Fail("the update changed _id", "", out());
  }
  if (!upsert_insert) {
    for (const Element& e : r.doc) {
      if (!e.key().empty() && e.key()[0] == '$' && !in.Has(e.key())) {
        Fail("a new top-level '$' field outside an upsert insert", e.key(), out());
      }
    }
  }

  if (!driver.is_replacement() && rockdoc::internal::CheckStorageDepth(in).ok() &&
      rockdoc::internal::CheckStorageDepthOfPaths(r.doc, r.changed_paths).ok() &&
      !rockdoc::internal::CheckStorageDepth(r.doc).ok()) {
    Fail("too deep, and the changed paths do not show it", "", out());
  }

  // Walking every path of a huge result (arrays padded to a million
  // elements) would cost more than the update itself.
  if (r.doc.size() > kMaxPathCheckBytes) return;
  std::set<std::string> paths;
  CollectPaths(in, "", 0, &paths);
  CollectPaths(r.doc, "", 0, &paths);
  for (const std::string& p : paths) {
    bool affected = false;
    for (const std::string& c : r.changed_paths) affected |= rockdoc::PathMayAffect(c, p);
    if (!affected && ValuesAt(in, p) != ValuesAt(r.doc, p)) {
      std::string changed;
      for (const std::string& c : r.changed_paths) changed += c + " ";
      Fail("a path changed that changed_paths does not cover", p + "\n--- changed\n" + changed,
           out());
    }
  }
}

void ApplyAndCheck(const rockdoc::UpdateDriver& driver, DocumentView doc, bool upsert_insert,
                   size_t position, const std::set<std::string, std::less<>>& names,
                   std::string_view text) {
  rockdoc::UpdateContext ctx;
  ctx.is_upsert_insert = upsert_insert;
  ctx.now_millis = 1700000000123;
  if (driver.uses_positional()) ctx.positional_index = position;
  auto r = driver.Apply(doc, ctx);
  if (!r.ok()) {
    if (r.status().code() == rockdoc::ErrorCode::kOk || r.status().message().empty()) {
      Fail("Apply error without a code or a message", r.status().ToString(), text);
    }
    return;
  }
  if (!driver.uses_positional()) {
    CheckResult(driver, doc, *r, upsert_insert, names, text);
    return;
  }
  // `$` stands for the matched position, which may become a field name.
  std::set<std::string, std::less<>> with_position = names;
  with_position.insert(std::to_string(position));
  CheckResult(driver, doc, *r, upsert_insert, with_position, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto input = rockdoc::FromJson(text);
  if (!input.ok()) return 0;
  Element update = input->Get("u");
  if (update.type() != BsonType::kDocument) return 0;
  std::vector<rockdoc::Document> array_filters;
  Element filters = input->Get("arrayFilters");
  if (filters.type() == BsonType::kArray) {
    for (const Element& f : filters.Array()) {
      if (f.type() != BsonType::kDocument) return 0;
      array_filters.push_back(rockdoc::Document::AdoptValidated(std::string(f.Document().bytes())));
    }
  }
  auto driver = rockdoc::UpdateDriver::Parse(update.Document(), array_filters);
  if (!driver.ok()) {
    if (driver.status().code() == rockdoc::ErrorCode::kOk || driver.status().message().empty()) {
      Fail("Parse error without a code or a message", driver.status().ToString(), text);
    }
    return 0;
  }
  std::set<std::string, std::less<>> names;
  CollectNames(update.Document(), true, &names);

  const auto& docs = rockdoc::fuzz::FixedDocuments();
  for (size_t i = 0; i < docs.size(); ++i)
    ApplyAndCheck(*driver, docs[i], false, i % 3, names, text);

  Element query = input->Get("q");
  if (query.type() == BsonType::kDocument) {
    auto seed = rockdoc::SeedUpsertDocument(query.Document());
    if (!seed.ok()) return 0;
    std::set<std::string, std::less<>> seed_names = names;
    CollectNames(query.Document(), true, &seed_names);  // equalities' paths, split
    std::string bad = BadName(*seed, false, seed_names);
    if (!bad.empty()) Fail("the upsert seed has a bad field name", bad, Json(*seed));
    ApplyAndCheck(*driver, *seed, true, 0, seed_names, text);
  }
  return 0;
}
