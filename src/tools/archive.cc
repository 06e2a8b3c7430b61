#include "tools/archive.h"

#include <cstring>
#include <limits>

#include "tools/formats.h"

namespace rockdoc::tools {
namespace {

std::string Int32Bytes(int32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  return std::string(b, 4);
}

Status ArchiveError(InputStream* in, uint64_t at, const std::string& what) {
  return Status(ErrorCode::kFailedToParse,
                in->name() + ": at offset " + std::to_string(at) + ": " + what);
}

}  // namespace

Status ArchiveWriter::WriteHeader(const std::string& tool_version) {
  uint32_t magic = kArchiveMagic;
  char b[4];
  std::memcpy(b, &magic, 4);
  ROCKDOC_RETURN_IF_ERROR(out_->Write(std::string_view(b, 4)));
  BsonBuilder h;
  h.AppendInt32("concurrent_collections", 1);
  h.AppendString("version", "0.1");
  h.AppendString("server_version", "unknown");
  h.AppendString("tool_version", tool_version);
  return out_->Write(std::move(h).Build().bytes());
}

Status ArchiveWriter::WriteMetadata(const std::string& db, const std::string& collection,
                                    const std::string& metadata_json, int64_t size) {
  BsonBuilder m;
  m.AppendString("db", db);
  m.AppendString("collection", collection);
  m.AppendString("metadata", metadata_json);
  if (size <= std::numeric_limits<int32_t>::max()) {
    m.AppendInt32("size", static_cast<int32_t>(size));
  } else {
    m.AppendInt64("size", size);
  }
  return out_->Write(std::move(m).Build().bytes());
}

Status ArchiveWriter::EndMetadata() { return out_->Write(Int32Bytes(kArchiveTerminator)); }

Status ArchiveWriter::WriteNamespaceHeader(const std::string& db, const std::string& collection,
                                           bool eof, uint64_t crc) {
  BsonBuilder h;
  h.AppendString("db", db);
  h.AppendString("collection", collection);
  h.AppendBool("EOF", eof);
  h.AppendInt64("CRC", static_cast<int64_t>(crc));
  return out_->Write(std::move(h).Build().bytes());
}

Status ArchiveWriter::BeginSegment(const std::string& db, const std::string& collection) {
  return WriteNamespaceHeader(db, collection, false, 0);
}

Status ArchiveWriter::WriteDocument(const std::string& db, const std::string& collection,
                                    DocumentView doc) {
  std::string_view bytes(reinterpret_cast<const char*>(doc.data()), doc.size());
  uint64_t& crc = crcs_[{db, collection}];
  crc = Crc64Update(crc, bytes);
  return out_->Write(bytes);
}

Status ArchiveWriter::EndSegment() { return out_->Write(Int32Bytes(kArchiveTerminator)); }

Status ArchiveWriter::WriteEof(const std::string& db, const std::string& collection) {
  ROCKDOC_RETURN_IF_ERROR(WriteNamespaceHeader(db, collection, true, crcs_[{db, collection}]));
  return out_->Write(Int32Bytes(kArchiveTerminator));
}

StatusOr<ArchiveContents> ReadArchive(InputStream* in, const std::string& spill_dir) {
  ArchiveContents out;
  // Per namespace: the CRC so far and, when spilling, its open file.
  std::vector<uint64_t> crcs;
  std::vector<std::unique_ptr<OutputStream>> spills;
  char magic_bytes[4];
  size_t got = 0;
  ROCKDOC_RETURN_IF_ERROR(in->ReadFull(magic_bytes, 4, &got));
  uint32_t magic = 0;
  std::memcpy(&magic, magic_bytes, got);
  if (got < 4 || magic != kArchiveMagic) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%08x", magic);
    return ArchiveError(in, 0,
                        got < 4 ? std::string("not an archive: too short for the magic number")
                                : std::string("not an archive: wrong magic number ") + hex +
                                      " (expected 0x8199e26d)");
  }
  BsonReader reader(in);
  Document doc;
  ROCKDOC_ASSIGN_OR_RETURN(bool have, reader.Next(&doc));
  if (!have) return ArchiveError(in, 4, "archive cut short: no header document");
  out.header = std::move(doc);
  if (!out.header.Get("version").IsString()) {
    return ArchiveError(in, 4, "the header document has no string 'version'");
  }
  std::map<std::pair<std::string, std::string>, size_t> index;
  auto field = [](const Document& d, const char* name) -> std::optional<std::string> {
    Element e = d.Get(name);
    if (!e.IsString()) return std::nullopt;
    return std::string(e.String());
  };
  // Metadata documents until the terminator.
  while (true) {
    uint64_t at = in->offset();
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<int32_t> len, reader.PeekLength());
    if (!len) return ArchiveError(in, at, "archive cut short before the end of its metadata");
    if (*len == kArchiveTerminator) {
      reader.DropPeeked();
      break;
    }
    ROCKDOC_ASSIGN_OR_RETURN(have, reader.Next(&doc));
    auto db = field(doc, "db");
    auto coll = field(doc, "collection");
    auto meta = field(doc, "metadata");
    if (!db || !coll || !meta) {
      return ArchiveError(in, at, "a metadata document needs string db, collection and metadata");
    }
    if (index.count({*db, *coll})) {
      return ArchiveError(in, at, "namespace " + *db + "." + *coll + " has two metadata documents");
    }
    index[{*db, *coll}] = out.namespaces.size();
    ArchiveNamespace ns;
    ns.db = *db;
    ns.collection = *coll;
    ns.metadata_json = *meta;
    out.namespaces.push_back(std::move(ns));
    crcs.push_back(0);
    spills.emplace_back();
  }
  BsonReader& body = reader;
  while (true) {
    uint64_t at = in->offset();
    ROCKDOC_ASSIGN_OR_RETURN(have, body.Next(&doc));
    if (!have) break;
    auto db = field(doc, "db");
    auto coll = field(doc, "collection");
    Element eof = doc.Get("EOF");
    Element crc = doc.Get("CRC");
    if (!db || !coll || !eof.IsBool() || !crc.IsInt64()) {
      return ArchiveError(in, at, "a segment header needs db, collection, EOF and CRC");
    }
    auto it = index.find({*db, *coll});
    if (it == index.end()) {
      return ArchiveError(in, at, "a segment of " + *db + "." + *coll + ", which has no metadata");
    }
    const size_t ns_index = it->second;
    ArchiveNamespace& ns = out.namespaces[ns_index];
    if (ns.eof_seen) {
      return ArchiveError(in, at, "a segment of " + *db + "." + *coll + " after its EOF");
    }
    // `doc` is reused for the segment's documents below: keep what the
    // header says, not views into it.
    const bool is_eof = eof.Bool();
    const std::string ns_name = *db + "." + *coll;
    if (is_eof) {
      ns.eof_seen = true;
      ns.crc = static_cast<uint64_t>(crc.Int64());
      uint64_t actual = crcs[ns_index];
      if (spills[ns_index]) {
        ROCKDOC_RETURN_IF_ERROR(spills[ns_index]->Close());
        spills[ns_index].reset();
      }
      if (actual != ns.crc) {
        char buf[80];
        std::snprintf(buf, sizeof(buf), "stored 0x%016llx, computed 0x%016llx",
                      static_cast<unsigned long long>(ns.crc),
                      static_cast<unsigned long long>(actual));
        return ArchiveError(in, at, "CRC mismatch for " + *db + "." + *coll + ": " + buf);
      }
    }
    // Documents until the terminator.
    while (true) {
      uint64_t doc_at = in->offset();
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<int32_t> len, body.PeekLength());
      if (!len) {
        return ArchiveError(in, doc_at,
                            "archive cut short inside a segment of " + ns_name + " (no terminator)");
      }
      if (*len == kArchiveTerminator) {
        body.DropPeeked();
        break;
      }
      if (is_eof) return ArchiveError(in, doc_at, "documents after an EOF header");
      ROCKDOC_ASSIGN_OR_RETURN(have, body.Next(&doc));
      crcs[ns_index] = Crc64Update(crcs[ns_index], doc.bytes());
      ns.size += static_cast<int64_t>(doc.size());
      if (spill_dir.empty()) {
        ns.documents.append(doc.bytes());
      } else {
        if (!spills[ns_index]) {
          ns.spill_path = spill_dir + "/" + std::to_string(ns_index) + ".bson";
          ROCKDOC_ASSIGN_OR_RETURN(spills[ns_index], OpenOutput(ns.spill_path, false));
        }
        ROCKDOC_RETURN_IF_ERROR(spills[ns_index]->Write(doc.bytes()));
      }
    }
  }
  for (const ArchiveNamespace& ns : out.namespaces) {
    if (!ns.eof_seen) {
      return ArchiveError(in, in->offset(),
                          "archive cut short: no EOF for " + ns.db + "." + ns.collection);
    }
  }
  return out;
}

}  // namespace rockdoc::tools
