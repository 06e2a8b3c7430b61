// The fixture of the shell's in-process tests, one file per subject
// (tests/shell_{values,crud,cursor,admin,scripts,transaction}_test.cc; the
// REPL's pseudo-terminal test, shell_repl_test.cc, has its own). ShellTest
// opens a rockdoc::shell::Shell over a scratch directory and captures what
// it prints: Show and Run evaluate code as the REPL and as a script, Ok
// expects success, err() is the error stream, OpenShell reopens (in JSON
// mode or not), and Coll and Stored read what landed in the database back
// through the public C++ API (an independent view of the data). CodeLine is
// an error code as the shell prints it.
#ifndef ROCKDOC_TESTS_SHELL_TEST_FIXTURE_H_
#define ROCKDOC_TESTS_SHELL_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "rockdoc/status.h"
#include "shell/shell.h"
#include "test_util.h"

namespace rockdoc::shell {

class ShellTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenShell(/*json=*/false); }

  void OpenShell(bool json) {
    shell_.reset();
    ShellOptions options;
    options.db_path = dir_.Sub("db");
    options.out = &out_;
    options.err = &err_;
    options.json = json;
    auto shell = Shell::Open(options);
    ASSERT_TRUE(shell.ok()) << shell.status();
    shell_ = std::move(shell).value();
  }

  // Runs `code` as the REPL runs an entry (its value is displayed) and
  // returns what was printed on the output stream.
  std::string Show(std::string_view code) {
    out_.str("");
    err_.str("");
    ok_ = shell_->Evaluate(code, "<test>", /*show_result=*/true);
    return out_.str();
  }
  // Runs `code` as a script (values not displayed); returns the output.
  std::string Run(std::string_view code) {
    out_.str("");
    err_.str("");
    ok_ = shell_->Evaluate(code, "<test>", /*show_result=*/false);
    return out_.str();
  }
  // Runs `code`, expecting it to succeed.
  std::string Ok(std::string_view code) {
    std::string out = Run(code);
    EXPECT_TRUE(ok_) << code << "\nerror: " << err_.str();
    return out;
  }
  std::string err() const { return err_.str(); }

  Collection Coll(const std::string& name, const std::string& db = "test") {
    return shell_->client().GetDatabase(db).GetCollection(name);
  }
  // The stored document with _id `id` (an int), in canonical Extended JSON.
  std::string Stored(const std::string& coll, int id) {
    auto doc = Coll(coll).FindOne(test::Json("{\"_id\": " + std::to_string(id) + "}"));
    EXPECT_TRUE(doc.ok()) << doc.status();
    if (!doc.ok() || !doc->has_value()) return "<missing>";
    return ToJson(**doc, JsonFormat::kCanonical);
  }

  test::ScratchDir dir_;
  std::ostringstream out_;
  std::ostringstream err_;
  std::unique_ptr<Shell> shell_;
  bool ok_ = false;
};

// The value of `e.code` as the shell prints it.
inline std::string CodeLine(ErrorCode code) {
  return std::to_string(static_cast<int>(code)) + "\n";
}

}  // namespace rockdoc::shell

#endif  // ROCKDOC_TESTS_SHELL_TEST_FIXTURE_H_
