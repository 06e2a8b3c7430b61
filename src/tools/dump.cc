// Dump: the selected collections, from one snapshot, as a directory or an
// archive (rockdoc/tools.h).
#include <algorithm>
#include <filesystem>
#include <memory>

#include "rockdoc/c.h"
#include "rockdoc/json.h"
#include "tools/archive.h"
#include "tools/formats.h"
#include "tools/progress.h"
#include "rockdoc/tools.h"

namespace rockdoc::tools {
namespace {

// '*' matches any run of characters; '\' makes the next one literal.
bool PatternMatches(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '*') {
    for (size_t i = 0; i <= text.size(); ++i) {
      if (PatternMatches(pattern.substr(1), text.substr(i))) return true;
    }
    return false;
  }
  size_t skip = 0;
  if (pattern[0] == '\\' && pattern.size() > 1) skip = 1;
  if (text.empty() || text[0] != pattern[skip]) return false;
  return PatternMatches(pattern.substr(skip + 1), text.substr(1));
}

// Matches `pattern` (NamespaceRename's: '*', '\', "$var$") against `text`,
// recording what each variable matched; shortest runs first.
bool MatchRenamePattern(std::string_view pattern, std::string_view text,
                        std::vector<std::pair<std::string, std::string>>* vars) {
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '*' || pattern[0] == '$') {
    std::string name;
    size_t rest = 1;
    if (pattern[0] == '$') {
      size_t close = pattern.find('$', 1);
      name = std::string(pattern.substr(1, close - 1));
      rest = close + 1;
    }
    for (size_t i = 0; i <= text.size(); ++i) {
      if (!name.empty()) vars->emplace_back(name, std::string(text.substr(0, i)));
      if (MatchRenamePattern(pattern.substr(rest), text.substr(i), vars)) return true;
      if (!name.empty()) vars->pop_back();
    }
    return false;
  }
  size_t skip = 0;
  if (pattern[0] == '\\' && pattern.size() > 1) skip = 1;
  if (text.empty() || text[0] != pattern[skip]) return false;
  return MatchRenamePattern(pattern.substr(skip + 1), text.substr(1), vars);
}

// The variables of a pattern, in order; BadValue for an unclosed '$' or an
// empty name.
StatusOr<std::vector<std::string>> RenameVariables(std::string_view pattern) {
  std::vector<std::string> names;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
      continue;
    }
    if (pattern[i] != '$') continue;
    size_t close = pattern.find('$', i + 1);
    if (close == std::string_view::npos || close == i + 1) {
      return BadValue("namespace pattern '" + std::string(pattern) +
                      "': '$' opens a variable that needs a name and a closing '$'");
    }
    names.emplace_back(pattern.substr(i + 1, close - i - 1));
    i = close;
  }
  return names;
}

}  // namespace

StatusOr<std::string> RenamedNamespace(const std::vector<NamespaceRename>& renames,
                                       std::string_view ns) {
  for (const NamespaceRename& r : renames) {
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> from_vars, RenameVariables(r.from));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> to_vars, RenameVariables(r.to));
    for (const std::string& v : to_vars) {
      if (std::find(from_vars.begin(), from_vars.end(), v) == from_vars.end()) {
        return BadValue("--nsTo '" + r.to + "' uses $" + v + "$, which --nsFrom '" + r.from +
                        "' does not have");
      }
    }
    std::vector<std::pair<std::string, std::string>> vars;
    if (!MatchRenamePattern(r.from, ns, &vars)) continue;
    std::string out;
    for (size_t i = 0; i < r.to.size(); ++i) {
      char c = r.to[i];
      if (c == '\\' && i + 1 < r.to.size()) {
        out.push_back(r.to[++i]);
      } else if (c == '$') {
        size_t close = r.to.find('$', i + 1);
        std::string name = r.to.substr(i + 1, close - i - 1);
        auto var = std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
        out += var->second;  // every variable of `to` is one of `from`, checked above
        i = close;
      } else {
        out.push_back(c);
      }
    }
    return out;
  }
  return std::string(ns);
}

namespace {

// One collection or view to dump.
struct Intent {
  std::string db;
  std::string collection;
  bool is_view = false;
  CollectionMetadata metadata;
  int64_t size = 0;
};

std::string ToolVersion(const char* tool) { return std::string(tool) + " " + rockdoc_version(); }

void Log(std::ostream* log, const std::string& line) {
  if (log != nullptr) *log << LogTimestamp() << '\t' << line << '\n';
}

StatusOr<std::vector<Intent>> CollectIntents(const Client& client, const Session& snapshot,
                                             const DumpOptions& options) {
  std::vector<std::string> dbs;
  if (!options.ns.db.empty()) {
    dbs.push_back(options.ns.db);
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(dbs, client.ListDatabaseNames());
  }
  std::vector<Intent> intents;
  for (const std::string& db_name : dbs) {
    Database db = snapshot.GetDatabase(db_name);
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Database::CollectionInfo> infos, db.ListCollections());
    for (Database::CollectionInfo& info : infos) {
      if (!options.ns.Matches(db_name, info.name)) continue;
      // As mongodump: <db>.system.* are the server's own, not data.
      if (info.name.rfind("system.", 0) == 0) continue;
      // A restore's collection being built aside (tools/restore.cc) is not
      // data yet.
      if (info.name.rfind("tmp.rockdoc_restore.", 0) == 0) continue;
      Intent intent;
      intent.db = db_name;
      intent.collection = info.name;
      intent.is_view = info.is_view;
      intent.metadata.options = std::move(info.options);
      intent.metadata.collection_name = info.name;
      // The collection's UUID (a view has none), which mongorestore (and
      // rockdoc-restore) give the restored collection with --preserveUUID.
      if (!info.is_view) intent.metadata.uuid = UuidToHex(info.uuid);
      if (info.is_view) {
        intent.metadata.type = "view";
      } else {
        Collection coll = db.GetCollection(info.name);
        ROCKDOC_ASSIGN_OR_RETURN(intent.metadata.indexes, coll.ListIndexes());
        auto stats = coll.Stats();
        if (stats.ok()) intent.size = stats->size;
      }
      intents.push_back(std::move(intent));
    }
  }
  return intents;
}

// Streams one collection's documents through `emit`.
template <typename Emit>
Status ForEachDocument(const Session& snapshot, const Intent& intent, const DumpOptions& options,
                       int64_t* count, int64_t* bytes, Emit emit) {
  if (intent.is_view) return Status::OK();
  Progress progress(options.progress, intent.db + "." + intent.collection, intent.size);
  Collection coll = snapshot.GetDatabase(intent.db).GetCollection(intent.collection);
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll.Find(options.query));
  while (cursor.Next()) {
    DocumentView doc = cursor.document();
    ROCKDOC_RETURN_IF_ERROR(emit(doc));
    ++*count;
    *bytes += static_cast<int64_t>(doc.size());
    progress.Add(1, static_cast<int64_t>(doc.size()));
  }
  return cursor.status();
}

}  // namespace

bool NamespaceFilter::Matches(std::string_view db_name, std::string_view coll_name) const {
  if (!db.empty() && db != db_name) return false;
  if (!collection.empty() && collection != coll_name) return false;
  std::string ns = std::string(db_name) + "." + std::string(coll_name);
  if (!include.empty()) {
    bool any = false;
    for (const std::string& p : include) any = any || PatternMatches(p, ns);
    if (!any) return false;
  }
  for (const std::string& p : exclude) {
    if (PatternMatches(p, ns)) return false;
  }
  return true;
}

StatusOr<DumpReport> Dump(const Client& client, const DumpOptions& options) {
  if (!options.query.empty() && options.ns.collection.empty()) {
    return BadValue("cannot dump using a query without a specified collection");
  }
  if (!options.ns.collection.empty() && options.ns.db.empty()) {
    return BadValue("cannot dump a collection without a specified database");
  }
  ROCKDOC_ASSIGN_OR_RETURN(Session snapshot, client.StartSession(SessionOptions{.snapshot = true}));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Intent> intents, CollectIntents(client, snapshot, options));
  DumpReport report;
  const std::string version = ToolVersion("rockdoc-dump");

  if (options.archive) {
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> out,
                             OpenOutput(*options.archive, options.gzip));
    ArchiveWriter writer(out.get());
    ROCKDOC_RETURN_IF_ERROR(writer.WriteHeader(version));
    for (const Intent& intent : intents) {
      ROCKDOC_RETURN_IF_ERROR(writer.WriteMetadata(
          intent.db, intent.collection, CompactCanonicalJson(MetadataToBson(intent.metadata)),
          intent.size));
    }
    ROCKDOC_RETURN_IF_ERROR(writer.EndMetadata());
    for (const Intent& intent : intents) {
      Log(options.log, "writing " + intent.db + "." + intent.collection + " to archive");
      int64_t count = 0;
      bool open = false;
      ROCKDOC_RETURN_IF_ERROR(ForEachDocument(
          snapshot, intent, options, &count, &report.bytes, [&](DocumentView doc) -> Status {
            if (!open) {
              ROCKDOC_RETURN_IF_ERROR(writer.BeginSegment(intent.db, intent.collection));
              open = true;
            }
            return writer.WriteDocument(intent.db, intent.collection, doc);
          }));
      if (open) ROCKDOC_RETURN_IF_ERROR(writer.EndSegment());
      ROCKDOC_RETURN_IF_ERROR(writer.WriteEof(intent.db, intent.collection));
      report.documents += count;
      ++report.collections;
      Log(options.log, "done dumping " + intent.db + "." + intent.collection + " (" +
                           std::to_string(count) + " documents)");
    }
    ROCKDOC_RETURN_IF_ERROR(out->Close());
    return report;
  }

  if (options.out == "-") {
    // One collection's documents to stdout (mongodump --out -).
    if (options.ns.collection.empty()) {
      return BadValue("can only dump a single collection to stdout");
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> out, OpenOutput("-", options.gzip));
    for (const Intent& intent : intents) {
      int64_t count = 0;
      ROCKDOC_RETURN_IF_ERROR(ForEachDocument(
          snapshot, intent, options, &count, &report.bytes, [&](DocumentView doc) {
            return out->Write(
                std::string_view(reinterpret_cast<const char*>(doc.data()), doc.size()));
          }));
      report.documents += count;
      ++report.collections;
    }
    ROCKDOC_RETURN_IF_ERROR(out->Close());
    return report;
  }

  const std::string gz = options.gzip ? ".gz" : "";
  {
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> prelude,
                             OpenOutput(options.out + "/prelude.json" + gz, options.gzip));
    BsonBuilder p;
    p.AppendString("ServerVersion", "unknown");
    p.AppendString("ToolVersion", version);
    ROCKDOC_RETURN_IF_ERROR(prelude->Write(CompactCanonicalJson(std::move(p).Build())));
    ROCKDOC_RETURN_IF_ERROR(prelude->Close());
  }
  for (const Intent& intent : intents) {
    std::string base = options.out + "/" + intent.db + "/" + CollectionFileName(intent.collection);
    if (!intent.is_view) {
      std::string path = base + ".bson" + gz;
      Log(options.log, "writing " + intent.db + "." + intent.collection + " to " + path);
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> out, OpenOutput(path, options.gzip));
      int64_t count = 0;
      ROCKDOC_RETURN_IF_ERROR(ForEachDocument(
          snapshot, intent, options, &count, &report.bytes, [&](DocumentView doc) {
            return out->Write(
                std::string_view(reinterpret_cast<const char*>(doc.data()), doc.size()));
          }));
      ROCKDOC_RETURN_IF_ERROR(out->Close());
      report.documents += count;
      Log(options.log, "done dumping " + intent.db + "." + intent.collection + " (" +
                           std::to_string(count) + " documents)");
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> meta,
                             OpenOutput(base + ".metadata.json" + gz, options.gzip));
    ROCKDOC_RETURN_IF_ERROR(meta->Write(CompactCanonicalJson(MetadataToBson(intent.metadata))));
    ROCKDOC_RETURN_IF_ERROR(meta->Close());
    ++report.collections;
  }
  return report;
}

}  // namespace rockdoc::tools
