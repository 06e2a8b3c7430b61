// Restore: a dump directory, one .bson file, or an archive, into a client
// (rockdoc/tools.h). Every selected collection is read and validated whole
// before anything changes, then each is built in a temporary collection
// that replaces the target by a rename.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "command/collection_options.h"
#include "rockdoc/json.h"
#include "rockdoc/tools.h"
#include "tools/archive.h"
#include "tools/formats.h"
#include "tools/progress.h"

namespace rockdoc::tools {
namespace {

namespace fs = std::filesystem;

void Log(std::ostream* log, const std::string& line) {
  if (log != nullptr) *log << LogTimestamp() << '\t' << line << '\n';
}

// One collection (or view) to restore, wherever its bytes are.
struct Source {
  std::string db;
  std::string collection;
  CollectionMetadata metadata;
  // Opens the documents; null when there are none (a metadata file alone,
  // a view).
  std::function<StatusOr<std::unique_ptr<InputStream>>()> open_documents;
  // What errors call the documents and the metadata.
  std::string documents_name;
  // Where the documents come from, for the log ("restoring db.c from
  // <from>"): the file, or "archive 'NAME'"; documents_name when empty.
  std::string from;
  std::string metadata_name;
  // The documents' bytes when known (0: unknown, as for a gzipped file).
  int64_t size = 0;
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

StatusOr<std::string> ReadFile(const std::string& path, bool gzip) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, OpenInput(path, gzip));
  return ReadAll(in.get());
}

// The collections of one database directory.
Status ScanDatabaseDir(const std::string& dir, const std::string& db, const RestoreOptions& options,
                       std::vector<Source>* out) {
  const std::string gz = options.gzip ? ".gz" : "";
  struct Files {
    std::string bson, metadata;
  };
  std::map<std::string, Files> by_stem;
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  if (ec) return Status(ErrorCode::kFileNotOpen, "error reading directory " + dir + ": " + ec.message());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& p : entries) {
    std::string name = p.filename().string();
    if (name == "prelude.json" + gz || name == "prelude.json") continue;
    if (EndsWith(name, ".bson" + gz) && (options.gzip || !EndsWith(name, ".gz"))) {
      by_stem[name.substr(0, name.size() - 5 - gz.size())].bson = p.string();
    } else if (EndsWith(name, ".metadata.json" + gz) && (options.gzip || !EndsWith(name, ".gz"))) {
      by_stem[name.substr(0, name.size() - 14 - gz.size())].metadata = p.string();
    } else {
      Log(options.log, "don't know what to do with file \"" + p.string() + "\", skipping...");
    }
  }
  for (auto& [stem, files] : by_stem) {
    Source s;
    s.db = db;
    if (!files.metadata.empty()) {
      ROCKDOC_ASSIGN_OR_RETURN(std::string text, ReadFile(files.metadata, options.gzip));
      ROCKDOC_ASSIGN_OR_RETURN(s.metadata, ParseMetadata(text, files.metadata));
      s.metadata_name = files.metadata;
    }
    if (!s.metadata.collection_name.empty()) {
      s.collection = s.metadata.collection_name;
    } else {
      std::optional<std::string> name = QueryUnescape(stem);
      if (!name) {
        return Status(ErrorCode::kFailedToParse,
                      dir + "/" + stem + ": malformed escaped collection name");
      }
      s.collection = *name;
    }
    if (!files.bson.empty()) {
      std::string path = files.bson;
      bool gzip = options.gzip;
      s.documents_name = path;
      s.open_documents = [path, gzip]() { return OpenInput(path, gzip); };
      std::error_code ec;
      if (!gzip) s.size = static_cast<int64_t>(fs::file_size(path, ec));
    }
    out->push_back(std::move(s));
  }
  return Status::OK();
}

// A directory that is removed with everything in it when it goes.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string tmpl = (fs::temp_directory_path(ec) / "rockdoc-restore-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `--dir -`: one collection's documents on stdin, copied into `spill` (they
// are read twice: validated whole, then inserted).
StatusOr<std::vector<Source>> ScanStdin(const RestoreOptions& options, const TempDir& spill) {
  if (options.ns.db.empty() || options.ns.collection.empty()) {
    return BadValue("restoring from stdin (--dir -) needs --db and --collection");
  }
  if (spill.path().empty()) {
    return Status(ErrorCode::kFileNotOpen, "cannot create a temporary directory for stdin");
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, OpenInput("-", options.gzip));
  const std::string path = spill.path() + "/stdin.bson";
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> out, OpenOutput(path, false));
  char buf[1 << 16];
  while (true) {
    ROCKDOC_ASSIGN_OR_RETURN(size_t n, in->Read(buf, sizeof(buf)));
    if (n == 0) break;
    ROCKDOC_RETURN_IF_ERROR(out->Write(std::string_view(buf, n)));
  }
  ROCKDOC_RETURN_IF_ERROR(out->Close());
  Source s;
  s.db = options.ns.db;
  s.collection = options.ns.collection;
  s.documents_name = "stdin";
  std::error_code ec;
  s.size = static_cast<int64_t>(fs::file_size(path, ec));
  s.open_documents = [path]() -> StatusOr<std::unique_ptr<InputStream>> {
    return OpenInput(path, false);
  };
  return std::vector<Source>{std::move(s)};
}

StatusOr<std::vector<Source>> ScanDirectory(const RestoreOptions& options) {
  std::vector<Source> sources;
  const std::string& dir = options.dir;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    return Status(ErrorCode::kFileNotOpen, "error reading " + dir + ": no such file or directory");
  }
  if (!fs::is_directory(dir, ec)) {
    // One .bson file: into --db and --collection (default: the file's name).
    if (options.ns.db.empty()) {
      return BadValue("restoring the single file " + dir + " needs --db");
    }
    std::string name = fs::path(dir).filename().string();
    const std::string ext = options.gzip ? ".bson.gz" : ".bson";
    if (!EndsWith(name, ext)) {
      return BadValue("file " + dir + " does not have a " + ext + " extension");
    }
    std::string stem = name.substr(0, name.size() - ext.size());
    Source s;
    s.db = options.ns.db;
    if (!options.ns.collection.empty()) {
      s.collection = options.ns.collection;
    } else {
      std::optional<std::string> c = QueryUnescape(stem);
      if (!c) return Status(ErrorCode::kFailedToParse, dir + ": malformed escaped collection name");
      s.collection = *c;
    }
    std::string meta = (fs::path(dir).parent_path() / (stem + ".metadata.json" +
                                                       (options.gzip ? ".gz" : "")))
                           .string();
    if (fs::exists(meta, ec)) {
      ROCKDOC_ASSIGN_OR_RETURN(std::string text, ReadFile(meta, options.gzip));
      ROCKDOC_ASSIGN_OR_RETURN(s.metadata, ParseMetadata(text, meta));
      s.metadata_name = meta;
    }
    std::string path = dir;
    bool gzip = options.gzip;
    s.documents_name = path;
    s.open_documents = [path, gzip]() { return OpenInput(path, gzip); };
    sources.push_back(std::move(s));
    return sources;
  }
  // A database's directory (with --db): it holds collection files itself.
  bool has_subdirs = false, has_collection_files = false;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) has_subdirs = true;
    std::string n = e.path().filename().string();
    if (EndsWith(n, ".bson") || EndsWith(n, ".bson.gz") || EndsWith(n, ".metadata.json") ||
        EndsWith(n, ".metadata.json.gz")) {
      has_collection_files = true;
    }
  }
  if (!options.ns.db.empty() && has_collection_files && !has_subdirs) {
    ROCKDOC_RETURN_IF_ERROR(ScanDatabaseDir(dir, options.ns.db, options, &sources));
    return sources;
  }
  std::string prelude = dir + "/prelude.json" + (options.gzip ? ".gz" : "");
  if (fs::exists(prelude, ec)) {
    ROCKDOC_ASSIGN_OR_RETURN(std::string text, ReadFile(prelude, options.gzip));
    auto doc = FromJson(text);
    if (!doc.ok()) {
      return Status(ErrorCode::kFailedToParse,
                    prelude + ": " + std::string(doc.status().message()));
    }
  }
  std::vector<fs::path> dbs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) dbs.push_back(e.path());
  }
  std::sort(dbs.begin(), dbs.end());
  for (const fs::path& p : dbs) {
    std::string db = p.filename().string();
    if (!options.ns.db.empty() && db != options.ns.db) continue;
    ROCKDOC_RETURN_IF_ERROR(ScanDatabaseDir(p.string(), db, options, &sources));
  }
  return sources;
}

// The documents of archive namespaces are spilled into `spill` (an archive
// on stdin cannot be read twice, and need not fit in memory); `contents`
// and `spill` outlive the sources.
StatusOr<std::vector<Source>> ScanArchive(const RestoreOptions& options, const TempDir& spill,
                                          ArchiveContents* contents) {
  const std::string& path = *options.archive;
  if (spill.path().empty()) {
    return Status(ErrorCode::kFileNotOpen, "cannot create a temporary directory for the archive");
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, OpenInput(path, options.gzip));
  ROCKDOC_ASSIGN_OR_RETURN(*contents, ReadArchive(in.get(), spill.path()));
  std::string name = path.empty() || path == "-" ? "archive on stdin" : "archive '" + path + "'";
  std::vector<Source> sources;
  for (const ArchiveNamespace& ns : contents->namespaces) {
    if (ns.db.empty() && ns.collection == "oplog") {
      // mongodump --oplog's entries (the namespace "" / "oplog", without
      // metadata): mongorestore replays them only with --oplogReplay, which
      // rockdoc refuses; without it they are skipped, as mongorestore does.
      Log(options.log,
          "skipping the oplog entries of " + name +
              " (they are replayed only with --oplogReplay, which rockdoc does not support)");
      continue;
    }
    Source s;
    s.db = ns.db;
    s.collection = ns.collection;
    s.metadata_name = name + " metadata of " + ns.db + "." + ns.collection;
    ROCKDOC_ASSIGN_OR_RETURN(s.metadata, ParseMetadata(ns.metadata_json, s.metadata_name));
    s.documents_name = name + " documents of " + ns.db + "." + ns.collection;
    s.from = name;
    s.size = ns.size;
    if (!ns.spill_path.empty()) {
      std::string spill_path = ns.spill_path;
      s.open_documents = [spill_path]() -> StatusOr<std::unique_ptr<InputStream>> {
        return OpenInput(spill_path, false);
      };
    }
    sources.push_back(std::move(s));
  }
  return sources;
}

// Index options MongoDB defines; --convertLegacyIndexes drops any other.
constexpr std::string_view kKnownIndexOptions[] = {
    "v", "key", "name", "unique", "sparse", "partialFilterExpression", "expireAfterSeconds",
    "background", "collation", "hidden", "weights", "default_language", "language_override",
    "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max", "bucketSize",
    "wildcardProjection", "storageEngine", "prepareUnique", "columnstoreProjection"};

// An index specification as createIndexes takes it: without `ns` (which
// MongoDB 4.4 and later refuse, as mongorestore drops it), and with
// legacy forms rewritten when asked.
Document PrepareIndexSpec(DocumentView spec, bool convert_legacy) {
  BsonBuilder b;
  for (Element e : spec) {
    if (e.key() == "ns") continue;
    if (!convert_legacy) {
      b.AppendElement(e);
      continue;
    }
    if (std::find(std::begin(kKnownIndexOptions), std::end(kKnownIndexOptions), e.key()) ==
        std::end(kKnownIndexOptions)) {
      continue;
    }
    if (e.key() == "v") {
      b.AppendInt32("v", 2);
    } else if (e.key() == "key" && e.IsDocument()) {
      // Key values MongoDB no longer accepts (0, true, "", and other
      // non-numbers that name no index type) become 1; a negative
      // number stays descending.
      b.OpenDocument("key");
      for (Element k : e.Document()) {
        if (k.IsNumber()) {
          double d = k.NumberAsDouble();
          if (d < 0) {
            b.AppendInt32(k.key(), -1);
          } else if (d > 0) {
            b.AppendElement(k);
          } else {
            b.AppendInt32(k.key(), 1);
          }
        } else if (k.IsString() && !k.String().empty()) {
          b.AppendElement(k);
        } else {
          b.AppendInt32(k.key(), 1);
        }
      }
      b.Close();
    } else {
      b.AppendElement(e);
    }
  }
  return std::move(b).Build();
}

bool IsIdIndex(DocumentView spec) {
  Element name = spec.Get("name");
  return name.IsString() && name.String() == "_id_";
}

Status CommandStatus(const Document& reply) {
  Element ok = reply.Get("ok");
  if (ok.ok() && ok.NumberAsDouble() == 1) return Status::OK();
  Element code = reply.Get("code");
  Element msg = reply.Get("errmsg");
  return Status(code.IsNumber() ? static_cast<ErrorCode>(code.NumberAsDouble())
                                : ErrorCode::kUnknownError,
                msg.IsString() ? std::string(msg.String()) : ToJson(reply));
}

Status CreateIndexes(const Client& client, const std::string& db, const std::string& coll,
                     const std::vector<Document>& specs) {
  if (specs.empty()) return Status::OK();
  BsonBuilder cmd;
  cmd.AppendString("createIndexes", coll);
  cmd.OpenArray("indexes");
  for (const Document& s : specs) cmd.AppendDocument("", s);
  cmd.Close();
  return CommandStatus(client.RunCommand(db, std::move(cmd).Build()));
}

// A collection built aside is named tmp.rockdoc_restore.<pid>.<random>: one
// process opens a directory at a time, so one whose pid is not ours was
// left by a restore that died (a crash, a kill) and is removed by the next
// restore into its database (RemoveAbandoned).
constexpr char kTempPrefix[] = "tmp.rockdoc_restore.";
std::string TempName() {
  return kTempPrefix + std::to_string(::getpid()) + "." + RandomUuidHex().substr(0, 12);
}

Status RemoveAbandoned(const Database& db, const RestoreOptions& options) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> names, db.ListCollectionNames());
  const std::string ours = kTempPrefix + std::to_string(::getpid()) + ".";
  for (const std::string& name : names) {
    if (name.rfind(kTempPrefix, 0) != 0 || name.rfind(ours, 0) == 0) continue;
    Log(options.log, "removing " + name + ", left by an interrupted restore");
    ROCKDOC_RETURN_IF_ERROR(db.DropCollection(name));
  }
  return Status::OK();
}

// Reads every document once, validating: nothing changes before the whole
// input is known good.
StatusOr<int64_t> ValidateDocuments(const Source& s) {
  if (!s.open_documents) return int64_t{0};
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, s.open_documents());
  BsonReader reader(in.get());
  Document doc;
  int64_t n = 0;
  while (true) {
    ROCKDOC_ASSIGN_OR_RETURN(bool have, reader.Next(&doc));
    if (!have) break;
    ++n;
  }
  return n;
}

// Inserts the documents into `coll`, in batches, counting failures.
Status InsertDocuments(const Source& s, const Collection& coll, const RestoreOptions& options,
                       RestoreReport* report) {
  if (!s.open_documents) return Status::OK();
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, s.open_documents());
  BsonReader reader(in.get());
  Progress progress(options.progress, s.db + "." + s.collection, s.size);
  std::vector<Document> batch;
  size_t batch_bytes = 0;
  InsertManyOptions insert_options;
  insert_options.ordered = options.stop_on_error;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::OK();
    ROCKDOC_ASSIGN_OR_RETURN(InsertManyResult r, coll.InsertMany(batch, insert_options));
    report->documents_restored += static_cast<int64_t>(r.inserted_count());
    for (const WriteError& w : r.write_errors) {
      ++report->documents_failed;
      report->failures.push_back(s.db + "." + s.collection + ": " + w.status.ToString());
      Log(options.log, "continuing through error: " + w.status.ToString());
    }
    batch.clear();
    batch_bytes = 0;
    if (options.stop_on_error && !r.write_errors.empty()) {
      return r.write_errors.front().status.WithContext(s.db + "." + s.collection);
    }
    return Status::OK();
  };
  Document doc;
  while (true) {
    ROCKDOC_ASSIGN_OR_RETURN(bool have, reader.Next(&doc));
    if (!have) break;
    batch_bytes += doc.size();
    progress.Add(1, static_cast<int64_t>(doc.size()));
    batch.push_back(std::move(doc));
    if (batch.size() >= 1000 || batch_bytes >= (8u << 20)) ROCKDOC_RETURN_IF_ERROR(flush());
  }
  return flush();
}

// --preserveUUID: the collection's UUID from its metadata, or why none.
StatusOr<std::string> PreservedUuid(const Source& s) {
  std::optional<std::string> uuid = UuidFromHex(s.metadata.uuid);
  if (uuid) return *uuid;
  const std::string ns = s.db + "." + s.collection;
  return BadValue(
      "--preserveUUID: " + (s.metadata_name.empty() ? ns : s.metadata_name) +
      (s.metadata.uuid.empty() ? " names no UUID" : " has a UUID that is not 32 hex digits"));
}

Status CheckView(const Source& s) {
  if (!s.metadata.options.Get("viewOn").IsString() ||
      !s.metadata.options.Get("pipeline").IsArray()) {
    return Status(ErrorCode::kFailedToParse,
                  s.metadata_name + ": a view's options need viewOn and pipeline");
  }
  return Status::OK();
}

// What can be known of a source without writing: its documents read whole
// and valid, a view's definition, --preserveUUID's UUID. Restore checks
// every selected source before it changes anything, so that a damaged
// file late in a dump leaves the earlier collections as they were too.
Status CheckSource(const Source& s, const RestoreOptions& options) {
  ROCKDOC_RETURN_IF_ERROR(ValidateDocuments(s).status());
  if (s.metadata.type == "view") return CheckView(s);
  if (options.preserve_uuid) return PreservedUuid(s).status();
  return Status::OK();
}

Status RestoreView(const Client& client, const Source& s, const RestoreOptions& options,
                   bool exists) {
  ROCKDOC_RETURN_IF_ERROR(CheckView(s));
  Element view_on = s.metadata.options.Get("viewOn");
  Element pipeline = s.metadata.options.Get("pipeline");
  Database db = client.GetDatabase(s.db);
  if (exists && options.drop) ROCKDOC_RETURN_IF_ERROR(db.DropCollection(s.collection));
  return db.CreateView(s.collection, view_on.String(), pipeline.Array());
}

Status RestoreOne(const Client& client, const Source& s, const RestoreOptions& options,
                  RestoreReport* report) {
  const std::string ns = s.db + "." + s.collection;
  Database db = client.GetDatabase(s.db);
  ROCKDOC_RETURN_IF_ERROR(RemoveAbandoned(db, options));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> names, db.ListCollectionNames());
  bool exists = std::find(names.begin(), names.end(), s.collection) != names.end();
  if (s.metadata.type == "view") {
    Log(options.log, "restoring view " + ns);
    Status st = RestoreView(client, s, options, exists);
    if (!st.ok()) return st.WithContext("restoring view " + ns);
    ++report->collections;
    return Status::OK();
  }
  std::vector<Document> specs;
  if (!options.no_index_restore) {
    for (const Document& spec : s.metadata.indexes) {
      if (IsIdIndex(spec)) continue;
      specs.push_back(PrepareIndexSpec(spec, options.convert_legacy_indexes));
    }
  }
  // The new collection is built aside, then renamed over the target: its
  // options and unique indexes first (a document that violates one fails
  // alone and is counted, as its insert would; with the indexes listed
  // before them, to keep the dump's order), then the documents, then the
  // other indexes, each built over the loaded documents as one sorted bulk
  // load (as mongorestore creates indexes after the data). A bad
  // option, index or document drops the aside collection and leaves the
  // target as it was. Without --drop into an existing collection, the
  // documents are added to it, as mongorestore does; the options and
  // indexes are still checked on an empty aside collection first.
  const std::string temp = TempName();
  auto drop_temp = [&]() { db.DropCollection(temp).IgnoreError(); };
  // The metadata's options are the create command's (mongorestore sends
  // them in one), decoded by the command layer's table.
  StatusOr<CreateCollectionOptions> create_options =
      internal::ParseCreateCollectionOptions(s.metadata.options);
  Status st = create_options.status();
  if (st.ok() && options.preserve_uuid) {
    ROCKDOC_ASSIGN_OR_RETURN(std::string uuid, PreservedUuid(s));
    st = db.CreateCollectionWithUuid(temp, *create_options, uuid);
  } else if (st.ok()) {
    st = db.CreateCollection(temp, *create_options);
  }
  if (!st.ok()) {
    return st.WithContext(s.metadata_name.empty() ? ns : s.metadata_name);
  }
  // In the dump's order (listIndexes shows creation order): those up to the
  // last unique one before the documents, the rest after them.
  size_t before_data = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    Element u = specs[i].Get("unique");  // booleanish, as createIndexes reads it
    if (u.ok() && ((u.IsBool() && u.Bool()) || (u.IsNumber() && u.NumberAsDouble() != 0))) {
      before_data = i + 1;
    }
  }
  const std::vector<Document> specs_before_data(specs.begin(), specs.begin() + static_cast<long>(before_data));
  const std::vector<Document> specs_after_data(specs.begin() + static_cast<long>(before_data), specs.end());
  auto create_indexes = [&](const std::string& coll, const std::vector<Document>& which) -> Status {
    Status created = CreateIndexes(client, s.db, coll, which);
    if (created.ok()) return created;
    return created.WithContext((s.metadata_name.empty() ? ns : s.metadata_name) +
                               ": error creating indexes for " + ns);
  };
  Log(options.log, "restoring " + ns + " from " + (s.from.empty() ? s.documents_name : s.from));
  const int64_t restored_before = report->documents_restored;
  const int64_t failed_before = report->documents_failed;
  st = create_indexes(temp, specs_before_data);
  if (!st.ok()) {
    drop_temp();
    return st;
  }
  if (exists && !options.drop) {
    st = create_indexes(temp, specs_after_data);
    if (!st.ok()) {
      drop_temp();
      return st;
    }
    drop_temp();
    // The same order here.
    st = CreateIndexes(client, s.db, s.collection, specs_before_data);
    if (!st.ok()) return st.WithContext("error creating indexes for " + ns);
    st = InsertDocuments(s, db.GetCollection(s.collection), options, report);
    if (!st.ok()) return st;
    st = CreateIndexes(client, s.db, s.collection, specs_after_data);
    if (!st.ok()) return st.WithContext("error creating indexes for " + ns);
  } else {
    st = InsertDocuments(s, db.GetCollection(temp), options, report);
    if (st.ok()) st = create_indexes(temp, specs_after_data);
    if (!st.ok()) {
      drop_temp();
      return st;
    }
    st = db.RenameCollection(temp, s.collection, /*drop_target=*/true);
    if (!st.ok()) {
      drop_temp();
      return st.WithContext("replacing " + ns);
    }
  }
  ++report->collections;
  // mongorestore's line: what went in and what failed, not what was read.
  auto counted = [](int64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  Log(options.log,
      "finished restoring " + ns + " (" +
          counted(report->documents_restored - restored_before, "document", "documents") + ", " +
          counted(report->documents_failed - failed_before, "failure", "failures") + ")");
  return Status::OK();
}

}  // namespace

StatusOr<RestoreReport> Restore(const Client& client, const RestoreOptions& options) {
  ArchiveContents contents;
  std::unique_ptr<TempDir> spill;
  std::vector<Source> sources;
  if (options.archive) {
    spill = std::make_unique<TempDir>();
    ROCKDOC_ASSIGN_OR_RETURN(sources, ScanArchive(options, *spill, &contents));
  } else if (options.dir == "-") {
    spill = std::make_unique<TempDir>();
    ROCKDOC_ASSIGN_OR_RETURN(sources, ScanStdin(options, *spill));
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(sources, ScanDirectory(options));
  }
  if (options.preserve_uuid && !options.drop) {
    return BadValue("cannot specify --preserveUUID without --drop");
  }
  // Each selected collection's target, decided (and --nsFrom/--nsTo's
  // mistakes refused: malformed patterns, a target that is no namespace,
  // two collections sent to one target) before anything is written.
  ROCKDOC_RETURN_IF_ERROR(RenamedNamespace(options.renames, "").status());
  std::vector<Source*> selected;
  std::map<std::string, std::string> targets;  // target -> the dump's namespace
  for (Source& s : sources) {
    if (!options.ns.Matches(s.db, s.collection)) continue;
    if (s.collection.rfind("system.", 0) == 0) {
      Log(options.log, "skipping restoring " + s.db + "." + s.collection +
                           ", a system collection rockdoc does not have");
      continue;
    }
    const std::string from = s.db + "." + s.collection;
    ROCKDOC_ASSIGN_OR_RETURN(std::string to, RenamedNamespace(options.renames, from));
    if (to != from) {
      size_t dot = to.find('.');
      if (dot == std::string::npos || dot == 0 || dot + 1 == to.size()) {
        return BadValue("--nsTo makes '" + to + "' of " + from + ": not a namespace (db.collection)");
      }
      Log(options.log, "restoring " + from + " as " + to);
      s.db = to.substr(0, dot);
      s.collection = to.substr(dot + 1);
    }
    auto [it, fresh] = targets.emplace(to, from);
    if (!fresh) {
      return BadValue("--nsFrom/--nsTo send both " + it->second + " and " + from + " to " + to);
    }
    selected.push_back(&s);
  }
  for (const Source* s : selected) ROCKDOC_RETURN_IF_ERROR(CheckSource(*s, options));
  RestoreReport report;
  for (Source* s : selected) {
    Status st = RestoreOne(client, *s, options, &report);
    if (!st.ok()) return st;
  }
  Log(options.log, std::to_string(report.documents_restored) +
                       " document(s) restored successfully. " +
                       std::to_string(report.documents_failed) + " document(s) failed to restore.");
  return report;
}

}  // namespace rockdoc::tools
