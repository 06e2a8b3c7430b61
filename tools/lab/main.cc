// rockdoc-lab: runs schema-pattern scenarios and reports what each variant
// costs. Usage: rockdoc-lab [--scenario NAME|FILE] [--scenarios DIR]
//                           [--out DIR] [--work DIR] [--quick] [--tiny]
//                           [--repetitions N] [--sizes N,...] [--keep DIR]
//                           [--advise] [--list]
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "common/option_table.h"
#include "provenance.h"
#include "report.h"
#include "rockdoc/c.h"
#include "runner.h"
#include "scenario.h"
#include "tools/flags.h"

namespace {

using rockdoc::Element;
using rockdoc::Status;
using rockdoc::internal::OptionField;
using rockdoc::tools::FlagArity;
using rockdoc::tools::FlagSpec;

// The command line, decoded from the tables below: kLabSpecs says which flags
// exist and whether they take a value (tools/flags.h), kLabFlags decodes
// each (common/option_table.h). A flag in neither is an error, never ignored.
struct LabFlags {
  std::vector<std::string> wanted;  // --scenario, in order
  std::string scenario_dir, out_dir, work_dir, keep_dir;
  bool quick = false, tiny = false, list = false, help = false, advise = false, version = false;
  int repetitions = 0;
  std::vector<int64_t> sizes;  // --sizes: replace every profile's
};

Status StringFlag(const Element& e, std::string* out) {
  if (!e.IsString() || e.String().empty()) return rockdoc::BadValue("expected a value");
  *out = std::string(e.String());
  return Status::OK();
}

#define ROCKDOC_LAB_TRUE_FLAG(flag, member) \
  {                                         \
    flag, [](const Element&, LabFlags* f) { \
      f->member = true;                     \
      return Status::OK();                  \
    }                                       \
  }

constexpr OptionField<LabFlags> kLabFlags[] = {
    {"scenario",
     [](const Element& e, LabFlags* f) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(StringFlag(e, &v));
       f->wanted.push_back(std::move(v));
       return Status::OK();
     }},
    {"scenarios", [](const Element& e, LabFlags* f) { return StringFlag(e, &f->scenario_dir); }},
    {"out", [](const Element& e, LabFlags* f) { return StringFlag(e, &f->out_dir); }},
    {"work", [](const Element& e, LabFlags* f) { return StringFlag(e, &f->work_dir); }},
    ROCKDOC_LAB_TRUE_FLAG("quick", quick),
    ROCKDOC_LAB_TRUE_FLAG("tiny", tiny),
    ROCKDOC_LAB_TRUE_FLAG("list", list),
    ROCKDOC_LAB_TRUE_FLAG("help", help),
    ROCKDOC_LAB_TRUE_FLAG("version", version),
    {"keep", [](const Element& e, LabFlags* f) { return StringFlag(e, &f->keep_dir); }},
    ROCKDOC_LAB_TRUE_FLAG("advise", advise),
    {"sizes",
     [](const Element& e, LabFlags* f) {
       // "3000" or "10,100,1000": each a whole number, 0 or more.
       const std::string v = e.IsString() ? std::string(e.String()) : "";
       f->sizes.clear();
       size_t start = 0;
       while (start <= v.size()) {
         const size_t comma = std::min(v.find(',', start), v.size());
         const std::string item = v.substr(start, comma - start);
         char* end = nullptr;
         errno = 0;
         const long long n = std::strtoll(item.c_str(), &end, 10);
         if (item.empty() || *end != '\0' || n < 0 || errno == ERANGE) {
           return rockdoc::BadValue("--sizes takes whole numbers (0 or more) separated by "
                                    "commas, not \"" + v + "\"");
         }
         f->sizes.push_back(n);
         start = comma + 1;
       }
       return Status::OK();
     }},
    {"repetitions",
     [](const Element& e, LabFlags* f) {
       const std::string v = e.IsString() ? std::string(e.String()) : "";
       char* end = nullptr;
       const long n = std::strtol(v.c_str(), &end, 10);
       if (v.empty() || *end != '\0' || n < 1 || n > 1000) {
         return rockdoc::BadValue("--repetitions takes a number from 1 to 1000");
       }
       f->repetitions = static_cast<int>(n);
       return Status::OK();
     }},
};

const std::vector<FlagSpec> kLabSpecs = {
    {"scenario", 0, FlagArity::kRequired},
    {"scenarios", 0, FlagArity::kRequired},
    {"out", 0, FlagArity::kRequired},
    {"work", 0, FlagArity::kRequired},
    {"quick", 0, FlagArity::kNone},
    {"tiny", 0, FlagArity::kNone},
    {"list", 0, FlagArity::kNone},
    {"help", 'h', FlagArity::kNone},
    {"repetitions", 0, FlagArity::kRequired},
    {"sizes", 0, FlagArity::kRequired},
    {"keep", 0, FlagArity::kRequired},
    {"advise", 0, FlagArity::kNone},
    {"version", 0, FlagArity::kNone},
};

int Usage(const char* argv0, int status) {
  (status == 0 ? std::cout : std::cerr)
      << "usage: " << argv0
      << " [--scenario NAME|FILE.json]... [--scenarios DIR] [--out DIR] [--work DIR]"
         " [--quick] [--tiny] [--repetitions N] [--sizes N,...] [--keep DIR] [--advise]"
         " [--list] [--version]\n"
         "  --scenario   run only this scenario (by name, or a scenario file)\n"
         "  --scenarios  directory of scenario files (default: the bundled ones)\n"
         "  --out        write results.json, report.md and report.html there\n"
         "  --work       scratch directory for the databases (default: a temporary one)\n"
         "  --quick      small sizes and few repetitions (under 2 minutes)\n"
         "  --tiny       the tests' sizes (seconds; checks the scenario runs)\n"
         "  --repetitions N  override every profile's repetitions (at least 5 but with\n"
         "               --tiny: a median's confidence interval needs 5)\n"
         "  --sizes N,... measure at these sizes instead of the profile's (the values\n"
         "               of $$n: --tiny --scenario blog-comments --sizes 3000)\n"
         "  --keep DIR   keep each variant's database, as DIR/<scenario>/<variant>-<size>\n"
         "  --advise     run the schema advisor over each rockdoc variant's database\n"
         "               and report its findings per variant\n"
         "  --list       list the scenarios and exit\n"
         "  --help, -h   this text\n"
         "  --version    the version of rockdoc\n";
  return status;
}

// Progress on a terminal: one line per scenario and size, rewritten in place
// ("\r", erase line) with the fraction done and an estimate of the time
// left; a new key starts a new line. Nothing when stderr is not a terminal
// (a log file or CI gets the results, not a thousand carriage returns).
class ProgressLine {
 public:
  void Update(const std::string& key, const std::string& what, double done) {
    const auto now = std::chrono::steady_clock::now();
    if (key != key_) {
      if (!key_.empty()) std::cerr << "\n";
      key_ = key;
      start_ = now;
    }
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::string eta = "ETA -";
    if (done >= 1) {
      eta = "done in " + Seconds(elapsed);
    } else if (done > 0.02 && elapsed > 0.5) {
      eta = "ETA " + Seconds(elapsed * (1 - done) / done);
    }
    std::string line = key + ": " + what + "  " + std::to_string(static_cast<int>(done * 100)) +
                       "%  " + eta;
    std::cerr << "\r\033[K" << line << std::flush;
  }
  void End() {
    if (!key_.empty()) std::cerr << "\n";
    key_.clear();
  }

 private:
  static std::string Seconds(double s) {
    char buf[32];
    if (s >= 60) {
      std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    } else {
      std::snprintf(buf, sizeof buf, "%.0fs", s);
    }
    return buf;
  }
  std::string key_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

int main(int argc, char** argv) {
  using rockdoc::lab::Scenario;
  LabFlags flags;
  flags.scenario_dir = rockdoc::lab::DefaultScenarioDir();
  {
    auto parsed = rockdoc::tools::ParseFlags(argc, argv, kLabSpecs);
    rockdoc::Status st = parsed.status();
    if (st.ok() && !parsed->positional.empty()) {
      st = rockdoc::BadValue("unknown argument: " + parsed->positional.front());
    }
    if (st.ok()) {
      st = rockdoc::internal::DecodeValidatedOptions(
          parsed->flags.view(), kLabFlags, &flags,
          [](std::string_view name) {
            return rockdoc::BadValue("unknown option \"--" + std::string(name) + "\"");
          },
          [](std::string_view name) {
            return rockdoc::BadValue("the option --" + std::string(name) + " is not supported");
          });
    }
    if (!st.ok()) {
      std::cerr << st.message() << "\n";
      return Usage(argv[0], 2);
    }
  }
  if (flags.help) return Usage(argv[0], 0);
  if (flags.version) {
    std::cout << "rockdoc-lab version: " << rockdoc_version() << "\n";
    return 0;
  }
  const std::vector<std::string>& wanted = flags.wanted;
  const std::string& scenario_dir = flags.scenario_dir;
  const std::string& out_dir = flags.out_dir;
  std::string work_dir = flags.work_dir;
  const bool quick = flags.quick, tiny = flags.tiny, list = flags.list;
  const int repetitions = flags.repetitions;

  std::vector<Scenario> all;
  if (!scenario_dir.empty()) {
    auto loaded = rockdoc::lab::LoadScenarioDir(scenario_dir);
    if (!loaded.ok()) {
      std::cerr << loaded.status() << "\n";
      return 1;
    }
    all = std::move(loaded).value();
  }
  std::vector<Scenario> selected;
  for (const std::string& w : wanted) {
    if (w.size() > 5 && w.substr(w.size() - 5) == ".json") {
      auto s = rockdoc::lab::LoadScenarioFile(w);
      if (!s.ok()) {
        std::cerr << s.status() << "\n";
        return 1;
      }
      selected.push_back(std::move(s).value());
      continue;
    }
    bool found = false;
    for (const Scenario& s : all) {
      if (s.name == w) {
        selected.push_back(s);
        found = true;
      }
    }
    if (!found) {
      std::cerr << "no scenario named " << w << " in " << scenario_dir << " (try --list)\n";
      return 2;
    }
  }
  if (wanted.empty()) selected = all;
  if (repetitions > 0 && repetitions < 5 && !tiny) {
    std::cerr << "--repetitions " << repetitions
              << ": at least 5 (fewer give no 95% confidence interval of a median); "
                 "only --tiny runs fewer\n";
    return 2;
  }
  if (list) {
    for (const Scenario& s : all) std::cout << s.name << "\t" << s.title << "\n";
    return 0;
  }
  if (selected.empty()) {
    std::cerr << "no scenarios found (looked in \"" << scenario_dir << "\")\n";
    return 1;
  }

  bool own_work = work_dir.empty();
  if (own_work) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rockdoc-lab-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::cerr << "cannot create a scratch directory\n";
      return 1;
    }
    work_dir = tmpl;
  }
  rockdoc::lab::RunOptions options;
  options.mode = tiny    ? rockdoc::lab::Mode::kTest
                 : quick ? rockdoc::lab::Mode::kQuick
                         : rockdoc::lab::Mode::kFull;
  options.work_dir = work_dir;
  options.repetitions = repetitions;
  options.sizes = flags.sizes;
  options.keep_dir = flags.keep_dir;
  options.advise = flags.advise;
  ProgressLine progress_line;
  if (isatty(STDERR_FILENO)) {
    options.progress = [&](const std::string& key, const std::string& what, double done) {
      progress_line.Update(key, what, done);
    };
  }
  rockdoc::lab::Provenance provenance = rockdoc::lab::CollectProvenance();
  provenance.mode = rockdoc::lab::ModeName(options.mode);
  provenance.repetitions = repetitions;
  for (int i = 1; i < argc; ++i) {
    provenance.command_line += (i > 1 ? " " : "") + std::string(argv[i]);
  }

  std::vector<rockdoc::lab::ScenarioResult> results;
  int status = 0;
  for (const Scenario& s : selected) {
    auto r = rockdoc::lab::RunScenario(s, options);
    progress_line.End();
    if (!r.ok()) {
      std::cerr << r.status() << "\n";
      status = 1;
      continue;
    }
    std::cout << rockdoc::lab::TextTable(*r) << std::endl;
    if (!r->consistent) status = 1;
    results.push_back(std::move(r).value());
  }
  rockdoc::lab::FinishProvenance(provenance);
  std::cout << rockdoc::lab::ProvenanceText(provenance) << "\n"
            << rockdoc::lab::SummaryText(results) << std::flush;
  if (!out_dir.empty()) {
    rockdoc::Status st = rockdoc::lab::WriteOutputs(results, out_dir, provenance);
    if (!st.ok()) {
      std::cerr << st << "\n";
      status = 1;
    } else {
      std::cerr << "wrote " << out_dir << "/results.json, " << out_dir << "/report.md and "
                << out_dir << "/report.html\n";
    }
  }
  if (own_work) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  }
  if (!flags.keep_dir.empty()) {
    std::cerr << "kept the databases in " << flags.keep_dir
              << "/<scenario>/<variant>-<size> (rockdoc-advise DIR examines one)\n";
  }
  return status;
}
