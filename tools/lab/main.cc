// rockdoc-lab: runs schema-pattern scenarios and reports what each variant
// costs. Usage: rockdoc-lab [--scenario NAME|FILE] [--scenarios DIR]
//                           [--out DIR] [--work DIR] [--quick] [--tiny]
//                           [--repetitions N] [--list]
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "report.h"
#include "runner.h"
#include "scenario.h"

namespace {

int Usage(const char* argv0, int status) {
  (status == 0 ? std::cout : std::cerr)
      << "usage: " << argv0
      << " [--scenario NAME|FILE.json]... [--scenarios DIR] [--out DIR] [--work DIR]"
         " [--quick] [--tiny] [--repetitions N] [--list]\n"
         "  --scenario   run only this scenario (by name, or a scenario file)\n"
         "  --scenarios  directory of scenario files (default: the bundled ones)\n"
         "  --out        write results.json and report.md there\n"
         "  --work       scratch directory for the databases (default: a temporary one)\n"
         "  --quick      small sizes and few repetitions (under 2 minutes)\n"
         "  --tiny       the tests' sizes (seconds; checks the scenario runs)\n"
         "  --repetitions N  override every profile's repetitions (rates are medians)\n"
         "  --list       list the scenarios and exit\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  using rockdoc::lab::Scenario;
  std::vector<std::string> wanted;
  std::string scenario_dir = rockdoc::lab::DefaultScenarioDir();
  std::string out_dir, work_dir;
  bool quick = false, tiny = false, list = false;
  int repetitions = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--tiny") {
      tiny = true;
    } else if (arg == "--list") {
      list = true;
    } else if (arg == "--repetitions") {
      const char* v = next();
      repetitions = v != nullptr ? std::atoi(v) : 0;
      if (repetitions < 1) return Usage(argv[0], 2);
    } else if (arg == "--help" || arg == "-h") {
      return Usage(argv[0], 0);
    } else if (arg == "--scenario" || arg == "--scenarios" || arg == "--out" || arg == "--work") {
      const char* v = next();
      if (v == nullptr) return Usage(argv[0], 2);
      if (arg == "--scenario") wanted.push_back(v);
      if (arg == "--scenarios") scenario_dir = v;
      if (arg == "--out") out_dir = v;
      if (arg == "--work") work_dir = v;
    } else {
      std::cerr << "unknown argument: " << arg << "\n";
      return Usage(argv[0], 2);
    }
  }

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
  options.progress = [](const std::string& line) { std::cerr << line << std::endl; };

  std::vector<rockdoc::lab::ScenarioResult> results;
  int status = 0;
  for (const Scenario& s : selected) {
    auto r = rockdoc::lab::RunScenario(s, options);
    if (!r.ok()) {
      std::cerr << r.status() << "\n";
      status = 1;
      continue;
    }
    std::cout << rockdoc::lab::TextTable(*r) << std::endl;
    if (!r->consistent) status = 1;
    results.push_back(std::move(r).value());
  }
  if (!out_dir.empty()) {
    rockdoc::Status st = rockdoc::lab::WriteOutputs(results, out_dir);
    if (!st.ok()) {
      std::cerr << st << "\n";
      status = 1;
    } else {
      std::cerr << "wrote " << out_dir << "/results.json and " << out_dir << "/report.md\n";
    }
  }
  if (own_work) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  }
  return status;
}
