// The lab's rules of thumb in their sources' own words: every claim of every
// bundled scenario names a seed document (../shared/seeds, beside the
// checkout as ../shared/test-data is) and a quote that appears in it
// verbatim, whitespace aside; or says it is the lab's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scenario.h"
#include "test_paths.h"

namespace rockdoc::lab {
namespace {

std::string SeedsDir() { return rockdoc::test::TestDataDir() + "/../seeds"; }

// Runs of whitespace (spaces, newlines, tabs) become one space.
std::string Squeeze(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(LabSourcesTest, EveryQuoteIsInItsSeedVerbatim) {
  ASSERT_TRUE(std::filesystem::is_directory(SeedsDir())) << SeedsDir();
  auto all = LoadScenarioDir(DefaultScenarioDir());
  ASSERT_TRUE(all.ok()) << all.status();
  int quoted = 0, own = 0;
  for (const Scenario& s : *all) {
    for (const RuleOfThumb& rule : s.rules) {
      for (const Claim& c : rule.claims) {
        if (c.source.empty()) {
          EXPECT_EQ(c.quote, "") << s.name;
          EXPECT_EQ(SourceText(c), "the lab's own claim");
          ++own;
          continue;
        }
        const std::string path = SeedsDir() + "/" + c.source;
        ASSERT_TRUE(std::filesystem::is_regular_file(path)) << s.name << ": " << path;
        EXPECT_NE(Squeeze(ReadFile(path)).find(Squeeze(c.quote)), std::string::npos)
            << s.name << " \"" << rule.text << "\": not verbatim in " << c.source << ": "
            << c.quote;
        ++quoted;
      }
    }
  }
  // Most claims come from the sources; those none makes are the lab's.
  EXPECT_GE(quoted, 20);
  EXPECT_GE(own, 1);
}

// A claim without a source, or with an empty quote, is an error naming it.
TEST(LabSourcesTest, AClaimWithoutASourceIsRefused) {
  const std::string dir = ::testing::TempDir() + "/lab_sources";
  std::filesystem::create_directories(dir);
  const std::string base = ReadFile(DefaultScenarioDir() + "/covered-index.json");
  const std::string quoted = "\"source\": {";
  const size_t at = base.find(quoted);
  ASSERT_NE(at, std::string::npos);
  auto load = [&](const std::string& text) {
    std::ofstream(dir + "/s.json") << text;
    return LoadScenarioFile(dir + "/s.json").status();
  };
  ASSERT_TRUE(load(base).ok()) << load(base);
  // The source object replaced by a bare string that is not "lab".
  const size_t end = base.find('}', at);
  const std::string no_lab = base.substr(0, at) + "\"source\": \"me\"" + base.substr(end + 1);
  EXPECT_THAT(std::string(load(no_lab).message()), ::testing::HasSubstr("needs \"source\""));
  const std::string lab = base.substr(0, at) + "\"source\": \"lab\"" + base.substr(end + 1);
  EXPECT_TRUE(load(lab).ok()) << load(lab);
  std::string empty = base;
  const size_t q = empty.find("\"quote\": \"", at) + 10;
  empty.erase(q, empty.find('"', q) - q);
  EXPECT_THAT(std::string(load(empty).message()), ::testing::HasSubstr("must not be empty"));
}

}  // namespace
}  // namespace rockdoc::lab
