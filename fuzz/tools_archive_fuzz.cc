// libFuzzer: arbitrary bytes into the readers restore trusts with files it
// did not write: a mongodump archive (plain, or gunzipped when the first
// byte is odd), a .bson file (concatenated documents) and a
// .metadata.json. None may crash, hang or read out of bounds (ASan, UBSan);
// what they accept must hold together: an archive read whole has, for each
// namespace, documents that a .bson reader takes back one by one, valid,
// adding up to the size and the CRC-64 its EOF header stored.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "tools/archive.h"
#include "tools/formats.h"
#include "tools/legacy_json.h"
#include "tools/streams.h"

namespace {

using rockdoc::fuzz::Fail;
namespace tools = rockdoc::tools;

// Reads every document of a .bson stream; the bytes and CRC-64 of those
// read, and whether the stream ended cleanly.
struct BsonScan {
  uint64_t bytes = 0;
  uint64_t crc = 0;
  bool clean = false;
};
BsonScan ScanBson(std::string_view data) {
  BsonScan scan;
  std::unique_ptr<tools::InputStream> in = tools::StringInput(data, "fuzz.bson");
  tools::BsonReader reader(in.get());
  rockdoc::Document doc;
  while (true) {
    auto next = reader.Next(&doc);
    if (!next.ok()) return scan;
    if (!*next) break;
    if (!rockdoc::ValidateBson(doc.bytes()).ok()) Fail("BsonReader returned invalid BSON", "", "");
    scan.bytes += doc.size();
    scan.crc = tools::Crc64Update(scan.crc, doc.bytes());
  }
  scan.clean = true;
  return scan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // As an archive.
  {
    std::unique_ptr<tools::InputStream> in = tools::StringInput(bytes.substr(size > 0 ? 1 : 0), "fuzz.archive");
    if (size > 0 && (data[0] & 1) != 0) in = tools::GunzipInput(std::move(in));
    auto archive = tools::ReadArchive(in.get());
    if (archive.ok()) {
      for (const tools::ArchiveNamespace& ns : archive->namespaces) {
        BsonScan scan = ScanBson(ns.documents);
        if (!scan.clean) Fail("an accepted archive's documents do not read back", ns.db, ns.collection);
        if (static_cast<int64_t>(scan.bytes) != ns.size) Fail("archive size disagrees", ns.db, ns.collection);
        if (ns.eof_seen && scan.crc != ns.crc) Fail("archive CRC accepted but wrong", ns.db, ns.collection);
        (void)tools::ParseMetadata(ns.metadata_json, "fuzz.metadata.json");
      }
    }
  }
  // As a .bson file and as metadata.
  ScanBson(bytes);
  (void)tools::ParseMetadata(bytes, "fuzz.metadata.json");
  // As legacy (shell-mode) JSON: what it accepts is v2 text the v2 parser
  // reads (the converter quotes and escapes everything it writes).
  auto v2 = tools::LegacyJsonToV2(bytes);
  if (v2.ok() && !bytes.empty() && bytes.find('{') != std::string_view::npos) {
    auto doc = rockdoc::FromJson("{\"v\": " + tools::UpgradeLegacyJson(*v2) + "}");
    // Values the v2 parser may still refuse (a bad $oid, date or number)
    // are refused cleanly; nothing else is checked of them.
    if (doc.ok() && !rockdoc::ValidateBson(doc->bytes()).ok()) Fail("legacy JSON made invalid BSON", "", "");
  }
  return 0;
}
