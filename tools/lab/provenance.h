// tools/lab/provenance.h: what a reader needs to weigh a run's figures: when
// and where it ran (date, CPU, cores, memory, load before and after), what
// ran (the rockdoc commit it was built from, RocksDB's and SQLite's
// versions) and how (mode, repetitions, the command line).
#ifndef ROCKDOC_TOOLS_LAB_PROVENANCE_H_
#define ROCKDOC_TOOLS_LAB_PROVENANCE_H_

#include <cstdint>
#include <string>

namespace rockdoc::lab {

struct Provenance {
  std::string date;        // UTC, ISO 8601, when the run started
  std::string cpu_model;   // /proc/cpuinfo's "model name", or "unknown"
  int cores = 0;           // hardware threads available to the process
  uint64_t memory_bytes = 0;
  double load_before[3] = {0, 0, 0};  // getloadavg(): 1, 5 and 15 minutes
  double load_after[3] = {0, 0, 0};
  std::string rockdoc_commit;   // git HEAD at build time, "-dirty" with local changes
  std::string rocksdb_version;  // the RocksDB rockdoc was built against
  std::string sqlite_version;   // the SQLite linked (sqlite3_libversion)
  std::string mode;             // full, quick, test
  int repetitions = 0;          // --repetitions, or 0: each profile's own
  std::string command_line;     // the options as given
};

// The machine, the versions, the date and the load now.
Provenance CollectProvenance();
// Records the load at the end of the run.
void FinishProvenance(Provenance& p);

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_PROVENANCE_H_
