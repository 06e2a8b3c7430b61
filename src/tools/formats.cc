#include "tools/formats.h"

#include <openssl/evp.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include "common/option_table.h"

namespace rockdoc::tools {

std::string QueryEscape(std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  for (unsigned char c : name) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> QueryUnescape(std::string_view escaped) {
  auto hex = HexDigitValue;
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    char c = escaped[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= escaped.size()) return std::nullopt;
      int hi = hex(escaped[i + 1]), lo = hex(escaped[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Sha1(std::string_view data) {
  std::string out(20, '\0');
  unsigned int size = 0;
  // OpenSSL fails only when it cannot allocate or has no SHA-1 (a broken
  // installation): nothing to fall back on.
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &size,
                 EVP_sha1(), nullptr) != 1 ||
      size != out.size()) {
    std::abort();
  }
  return out;
}

namespace {

std::string Base64UrlRaw(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(data[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(data[i + 1])} << 8) | static_cast<uint8_t>(data[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  size_t rest = data.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{static_cast<uint8_t>(data[i])} << 16;
    if (rest == 2) v |= uint32_t{static_cast<uint8_t>(data[i + 1])} << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    if (rest == 2) out.push_back(kAlphabet[(v >> 6) & 63]);
  }
  return out;
}

std::array<uint64_t, 256> MakeCrc64Table() {
  // ECMA-182's polynomial 0x42F0E1EBA9EA3693, bit-reversed (Go's crc64.ECMA).
  constexpr uint64_t kPoly = 0xC96C5795D7870F42ULL;
  std::array<uint64_t, 256> table{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t crc = i;
    for (int j = 0; j < 8; ++j) crc = (crc & 1) ? (crc >> 1) ^ kPoly : crc >> 1;
    table[i] = crc;
  }
  return table;
}

}  // namespace

std::string CollectionFileName(std::string_view name) {
  std::string escaped = QueryEscape(name);
  if (escaped.size() <= 238) return escaped;
  return escaped.substr(0, 208) + "%24" + Base64UrlRaw(Sha1(name));
}

uint64_t Crc64Update(uint64_t crc, std::string_view data) {
  static const std::array<uint64_t, 256> kTable = MakeCrc64Table();
  crc = ~crc;
  for (unsigned char c : data) crc = kTable[(crc ^ c) & 0xff] ^ (crc >> 8);
  return ~crc;
}

StatusOr<std::optional<int32_t>> BsonReader::PeekLength() {
  if (peeked_) return peeked_;
  char len[4];
  size_t got = 0;
  uint64_t at = in_->offset();
  ROCKDOC_RETURN_IF_ERROR(in_->ReadFull(len, 4, &got));
  if (got == 0) return std::optional<int32_t>();
  if (got < 4) {
    return Status(ErrorCode::kFailedToParse,
                  in_->name() + ": at offset " + std::to_string(at) +
                      ": the last document is cut short: " + std::to_string(got) +
                      " bytes remain, fewer than a length prefix");
  }
  int32_t n;
  std::memcpy(&n, len, 4);  // little-endian hosts only, as the rest of rockdoc
  peeked_ = n;
  peeked_offset_ = at;
  return peeked_;
}

StatusOr<bool> BsonReader::Next(Document* doc) {
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<int32_t> len, PeekLength());
  if (!len) return false;
  peeked_.reset();
  last_offset_ = peeked_offset_;
  std::string where = in_->name() + ": at offset " + std::to_string(last_offset_);
  if (*len < 5 || static_cast<size_t>(*len) > static_cast<size_t>(kMaxBsonObjectInternalSize)) {
    return Status(ErrorCode::kFailedToParse,
                  where + ": invalid document length " + std::to_string(*len));
  }
  buf_.resize(static_cast<size_t>(*len));
  std::memcpy(buf_.data(), &*len, 4);
  size_t got = 0;
  ROCKDOC_RETURN_IF_ERROR(in_->ReadFull(buf_.data() + 4, buf_.size() - 4, &got));
  if (got < buf_.size() - 4) {
    return Status(ErrorCode::kFailedToParse,
                  where + ": the last document is cut short: its length says " +
                      std::to_string(*len) + " bytes, " + std::to_string(got + 4) + " remain");
  }
  Status valid = ValidateBson(buf_);
  if (!valid.ok()) return Status(valid.code(), where + ": " + std::string(valid.message()));
  *doc = Document::AdoptValidated(buf_);
  return true;
}

std::string CompactJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  JsonStringTracker strings;
  for (char c : json) {
    if (strings.Feed(c) || (c != ' ' && c != '\n' && c != '\t' && c != '\r')) out.push_back(c);
  }
  return out;
}

std::string CompactCanonicalJson(DocumentView doc) {
  return CompactJson(ToJson(doc, JsonFormat::kCanonical));
}

Document MetadataToBson(const CollectionMetadata& m) {
  BsonBuilder b;
  if (!m.options.empty()) b.AppendDocument("options", m.options);
  b.OpenArray("indexes");
  for (const Document& index : m.indexes) b.AppendDocument("", index);
  b.Close();
  if (!m.uuid.empty()) b.AppendString("uuid", m.uuid);
  b.AppendString("collectionName", m.collection_name);
  if (!m.type.empty()) b.AppendString("type", m.type);
  return std::move(b).Build();
}

StatusOr<CollectionMetadata> ParseMetadata(std::string_view json, const std::string& source) {
  auto doc = FromJson(json);
  if (!doc.ok()) {
    return Status(ErrorCode::kFailedToParse,
                  source + ": error parsing metadata: " + std::string(doc.status().message()));
  }
  using internal::OptionField;
  static constexpr OptionField<CollectionMetadata> kFields[] = {
      {"options",
       [](const Element& e, CollectionMetadata* m) {
         if (!e.IsDocument()) return TypeMismatch("'options' must be a document");
         m->options = Document::AdoptValidated(std::string(e.Document().bytes()));
         return Status::OK();
       }},
      {"indexes",
       [](const Element& e, CollectionMetadata* m) {
         if (!e.IsArray()) return TypeMismatch("'indexes' must be an array");
         size_t i = 0;
         for (Element index : e.Array()) {
           std::string at = "index " + std::to_string(i++);
           if (!index.IsDocument()) return TypeMismatch(at + " is not a document");
           if (!index.Document().Get("key").IsDocument()) {
             return Status(ErrorCode::kFailedToParse, at + " has no 'key' document");
           }
           if (!index.Document().Get("name").IsString()) {
             return Status(ErrorCode::kFailedToParse, at + " has no string 'name'");
           }
           m->indexes.push_back(Document::AdoptValidated(std::string(index.Document().bytes())));
         }
         return Status::OK();
       }},
      {"uuid",
       [](const Element& e, CollectionMetadata* m) {
         if (!e.IsString()) return TypeMismatch("'uuid' must be a string");
         m->uuid = std::string(e.String());
         return Status::OK();
       }},
      {"collectionName",
       [](const Element& e, CollectionMetadata* m) {
         if (!e.IsString()) return TypeMismatch("'collectionName' must be a string");
         m->collection_name = std::string(e.String());
         return Status::OK();
       }},
      {"type",
       [](const Element& e, CollectionMetadata* m) {
         if (!e.IsString()) return TypeMismatch("'type' must be a string");
         m->type = std::string(e.String());
         if (m->type != "view" && m->type != "collection") {
           return Status(ErrorCode::kNotImplemented,
                         "collection type '" + m->type + "' is not supported by rockdoc");
         }
         return Status::OK();
       }},
  };
  CollectionMetadata out;
  Status s = internal::DecodeValidatedOptions(
      doc->view(), kFields, &out,
      [&](std::string_view name) {
        return Status(ErrorCode::kFailedToParse,
                      "unknown metadata field '" + std::string(name) + "'");
      },
      [](std::string_view) { return Status::OK(); });
  if (!s.ok()) return Status(s.code(), source + ": " + std::string(s.message()));
  return out;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

bool HexDecode(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexDigitValue(hex[i]), lo = HexDigitValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}

std::optional<std::string> UuidFromHex(std::string_view hex) {
  std::string out;
  if (hex.size() != 32 || !HexDecode(hex, &out)) return std::nullopt;
  return out;
}

std::string RandomUuidHex() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;        // version 4
  lo = (lo & ~(3ULL << 62)) | (2ULL << 62);  // RFC 4122 variant
  std::string bytes;
  for (uint64_t v : {hi, lo}) {
    for (int shift = 56; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(v >> shift));
  }
  return HexEncode(bytes);
}

std::string LogTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace rockdoc::tools
