// tools/formats.h: the pieces of mongo-tools' formats the tools share:
// mongodump's file-name escaping, the CRC-64 of archives, a reader of
// concatenated BSON documents (a .bson file, an archive segment), and the
// collection metadata document (<collection>.metadata.json, and the
// metadata string of an archive).
//
// The formats are mongo-tools' (github.com/mongodb/mongo-tools, Apache 2.0):
// learned from its documentation, spec (common/archive/spec.md) and the
// files its tools write; no code is taken from it.
//
// Thread safety: pure functions; a BsonReader is used by one thread.
#ifndef ROCKDOC_TOOLS_FORMATS_H_
#define ROCKDOC_TOOLS_FORMATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "rockdoc/status.h"
#include "tools/streams.h"

namespace rockdoc::tools {

// Go's url.QueryEscape, which mongodump applies to collection names: ASCII
// letters, digits and "-_.~" stay, a space becomes '+', every other byte
// %XX (upper-case hex).
std::string QueryEscape(std::string_view name);
// The inverse (url.QueryUnescape); nullopt for a malformed escape.
std::optional<std::string> QueryUnescape(std::string_view escaped);
// The file name (without extension) mongodump gives collection `name`: the
// escaped name, or, when that is longer than 238 bytes, its first 208
// bytes, "%24" and the unpadded URL-safe base64 of the SHA-1 of the name.
std::string CollectionFileName(std::string_view name);

// SHA-1 (FIPS 180-4) of `data`, 20 bytes: OpenSSL's (libcrypto), never
// written by hand.
std::string Sha1(std::string_view data);

// CRC-64 with the ECMA-182 polynomial, reflected, initial value and final
// xor all ones: Go's crc64.Checksum(data, crc64.MakeTable(crc64.ECMA)),
// which the archive format uses. Update-able: Crc64Update(Crc64Update(0, a), b)
// == Crc64Update(0, a + b).
uint64_t Crc64Update(uint64_t crc, std::string_view data);

// Reads concatenated BSON documents from a stream: each is validated
// (ValidateBson) before it is returned. Errors name the stream and the byte
// offset of the bad document: a torn last document ("... at offset 1234:
// the last document is cut short: its length says 200 bytes, 57 remain"),
// a length out of range, invalid BSON.
class BsonReader {
 public:
  explicit BsonReader(InputStream* in) : in_(in) {}
  // The next document into *doc; false at a clean end.
  StatusOr<bool> Next(Document* doc);
  // Offset of the document Next returned last.
  uint64_t last_offset() const { return last_offset_; }
  // Reads the next 4 bytes as a little-endian int32 without consuming a
  // document: for archives, whose segments end with 0xffffffff. nullopt at
  // a clean end of the stream.
  StatusOr<std::optional<int32_t>> PeekLength();
  // Consumes the length PeekLength returned (a terminator).
  void DropPeeked() { peeked_.reset(); }

 private:
  InputStream* in_;
  uint64_t last_offset_ = 0;
  std::optional<int32_t> peeked_;
  uint64_t peeked_offset_ = 0;
  std::string buf_;
};

// Whether each byte of JSON text is inside a string literal, fed one byte
// at a time (so that text may arrive in pieces). Every walker of JSON text
// in the tools (compacting, indenting, upgrading legacy forms, splitting a
// stream into documents) asks it, so that none rewrites a string's bytes.
// With `single_quotes`, strings may also be single-quoted (the shell's
// legacy JSON).
class JsonStringTracker {
 public:
  explicit JsonStringTracker(bool single_quotes = false) : single_quotes_(single_quotes) {}
  // Consumes `c`; true when it belongs to a string literal (quotes included).
  bool Feed(char c) {
    if (quote_ != 0) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == quote_) {
        quote_ = 0;
      }
      return true;
    }
    if (c == '"' || (single_quotes_ && c == '\'')) quote_ = c;
    return quote_ != 0;
  }
  // True between a string's opening quote and its closing one.
  bool in_string() const { return quote_ != 0; }

 private:
  bool single_quotes_;
  char quote_ = 0;  // the open string's quote; 0 outside strings
  bool escaped_ = false;
};

// Canonical Extended JSON on one line without spaces, as mongodump writes
// metadata (Go's bson.MarshalExtJSON(v, canonical=true, escapeHTML=false)).
std::string CompactCanonicalJson(DocumentView doc);
// Removes the spaces rockdoc's JSON writer puts after ':' and ',' (never
// inside strings).
std::string CompactJson(std::string_view json);

// A collection's metadata, as mongodump writes it and mongorestore reads it.
struct CollectionMetadata {
  Document options;               // createCollection options; empty when none
  std::vector<Document> indexes;  // full index specifications, _id_ included
  std::string uuid;               // 32 lower-case hex digits, or empty
  std::string collection_name;    // empty in old dumps
  std::string type;               // "view" for views; empty for collections
};
// The metadata document: {options?, indexes, uuid?, collectionName, type?}.
Document MetadataToBson(const CollectionMetadata& metadata);
// Parses a metadata.json text (canonical or relaxed Extended JSON, as
// different mongodump versions wrote). `source` names it in errors. Unknown
// top-level fields are an error, as is an index that is not a document
// with a `key` document and a string `name`.
StatusOr<CollectionMetadata> ParseMetadata(std::string_view json, const std::string& source);

// A fresh random (version 4) UUID as 32 lower-case hex digits.
std::string RandomUuidHex();
// Bytes as lower-case hex digits, and back (either case; false for an odd
// count or another character). The value of one hex digit, or -1.
std::string HexEncode(std::string_view bytes);
bool HexDecode(std::string_view hex, std::string* out);
int HexDigitValue(char c);
// 16 bytes as 32 lower-case hex digits (metadata.json's "uuid"), and back:
// nullopt unless `hex` is 32 hex digits.
inline std::string UuidToHex(std::string_view bytes) { return HexEncode(bytes); }
std::optional<std::string> UuidFromHex(std::string_view hex);

// The time as mongo-tools' log lines start ("2026-11-27T02:15:22.123+0000").
std::string LogTimestamp();

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_FORMATS_H_
