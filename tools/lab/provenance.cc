#include "provenance.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "lab_commit.h"  // ROCKDOC_LAB_COMMIT, written at build time

namespace rockdoc::lab {
namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

void Load(double out[3]) {
  if (getloadavg(out, 3) != 3) out[0] = out[1] = out[2] = -1;
}

}  // namespace

Provenance CollectProvenance() {
  Provenance p;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  p.date = buf;
  p.cpu_model = CpuModel();
  p.cores = static_cast<int>(std::thread::hardware_concurrency());
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  p.memory_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * page : 0;
  Load(p.load_before);
  p.rockdoc_commit = ROCKDOC_LAB_COMMIT;
  p.rocksdb_version = ROCKDOC_LAB_ROCKSDB_VERSION;
  p.sqlite_version = sqlite3_libversion();
  return p;
}

void FinishProvenance(Provenance& p) { Load(p.load_after); }

}  // namespace rockdoc::lab
