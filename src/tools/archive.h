// tools/archive.h: mongodump's archive format (mongo-tools'
// common/archive/spec.md), written and read.
//
//   archive  = magic (0x8199e26d, little-endian bytes 6d e2 99 81)
//              header document {concurrent_collections: int32, version:
//                "0.1", server_version, tool_version}
//              one metadata document per namespace {db, collection,
//                metadata: <metadata.json text>, size}
//              terminator (ff ff ff ff)
//              segments: {db, collection, EOF: false, CRC: int64 0},
//                documents..., terminator
//              and per namespace one EOF: {db, collection, EOF: true, CRC:
//                CRC-64/ECMA of all its documents' bytes}, terminator
// Segments of different namespaces may interleave (mongodump writes several
// collections at once); rockdoc writes one segment per namespace.
//
// Thread safety: one thread per writer or reader.
#ifndef ROCKDOC_TOOLS_ARCHIVE_H_
#define ROCKDOC_TOOLS_ARCHIVE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "tools/streams.h"

namespace rockdoc::tools {

inline constexpr uint32_t kArchiveMagic = 0x8199e26d;
inline constexpr int32_t kArchiveTerminator = -1;  // bytes ff ff ff ff

class ArchiveWriter {
 public:
  explicit ArchiveWriter(OutputStream* out) : out_(out) {}
  // The magic number and header document.
  Status WriteHeader(const std::string& tool_version);
  Status WriteMetadata(const std::string& db, const std::string& collection,
                       const std::string& metadata_json, int64_t size);
  // Ends the prelude (after the last WriteMetadata).
  Status EndMetadata();
  // Opens a namespace's segment, appends documents, closes it.
  Status BeginSegment(const std::string& db, const std::string& collection);
  Status WriteDocument(const std::string& db, const std::string& collection, DocumentView doc);
  Status EndSegment();
  // The namespace's EOF header with the CRC of every document written for it.
  Status WriteEof(const std::string& db, const std::string& collection);

 private:
  Status WriteNamespaceHeader(const std::string& db, const std::string& collection, bool eof,
                              uint64_t crc);
  OutputStream* out_;
  std::map<std::pair<std::string, std::string>, uint64_t> crcs_;
};

// An archive read whole: its header, each namespace's metadata and the
// bytes of its documents (concatenated BSON), with every CRC checked.
struct ArchiveNamespace {
  std::string db;
  std::string collection;
  std::string metadata_json;
  // The documents, concatenated BSON as a .bson file holds them: in
  // `documents`, or in the file `spill_path` when ReadArchive spilled them.
  std::string documents;
  std::string spill_path;
  int64_t size = 0;       // bytes of the documents
  uint64_t crc = 0;       // as the EOF header stored it (checked)
  bool eof_seen = false;
};
struct ArchiveContents {
  Document header;
  std::vector<ArchiveNamespace> namespaces;  // in metadata order
};
// Reads and checks a whole archive. Errors name the stream and the offset:
// a wrong magic number, a truncated archive (a namespace without its EOF, a
// document cut short), a segment of a namespace with no metadata, a CRC
// mismatch, invalid BSON.
// With `spill_dir`, each namespace's documents go to a file in that
// (existing) directory instead of memory, so an archive of any size reads in
// bounded memory; the caller removes the directory.
StatusOr<ArchiveContents> ReadArchive(InputStream* in, const std::string& spill_dir = "");

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_ARCHIVE_H_
