// The interactive shell, driven through a pseudo-terminal as a person would:
// a child process runs the `rockdoc` program's main (RunMain) on the pty's
// terminal side, and the test types into the other side and reads the
// screen. Covers line editing (libedit), multi-line entries, history recall
// (and the history file), `it`, an error, Ctrl-C during a long statement and
// at the prompt, and Ctrl-D.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "shell/shell.h"
#include "test_util.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;

class PtySession {
 public:
  // Forks a child running `rockdoc --db <db_dir>` with HOME=<home>.
  PtySession(const std::string& db_dir, const std::string& home) {
    struct winsize ws = {};
    ws.ws_row = 40;
    ws.ws_col = 100;
    pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      setenv("HOME", home.c_str(), 1);
      setenv("TERM", "xterm", 1);
      std::string db = db_dir;
      char arg0[] = "rockdoc";
      char arg1[] = "--db";
      char* argv[] = {arg0, arg1, db.data(), nullptr};
      int status = RunMain(3, argv);
      std::fflush(stdout);
      _exit(status);
    }
  }
  ~PtySession() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  bool started() const { return pid_ > 0; }

  void Type(const std::string& keys) {
    ASSERT_EQ(write(fd_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }
  // Types keys meant for the line editor itself (Ctrl-C, Ctrl-D at the
  // prompt). libedit takes the terminal out of canonical mode only after the
  // prompt is on the screen; a control character typed in that instant is
  // the kernel's (a ^D becomes an end-of-line marker that libedit never
  // sees). A person cannot type that fast; the test waits a moment instead.
  void TypeAtPrompt(const std::string& keys) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Type(keys);
  }

  // Reads until `needle` appears after everything matched so far; returns
  // whether it did within the timeout. What came before it is consumed.
  bool WaitFor(const std::string& needle, int timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      size_t at = screen_.find(needle, consumed_);
      if (at != std::string::npos) {
        consumed_ = at + needle.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      struct pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) return screen_.find(needle, consumed_) != std::string::npos;
      screen_.append(buf, n);
    }
  }

  // Waits for the child to end; its exit status, or -1.
  int Wait(int timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      // Keep draining the terminal so the child never blocks on output.
      WaitFor("\x01never\x01", 50);
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    return -1;
  }

  const std::string& screen() const { return screen_; }
  // What arrived since the last match (for failure messages).
  std::string Unmatched() const { return screen_.substr(consumed_); }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  std::string screen_;
  size_t consumed_ = 0;
};

TEST(ShellReplTest, InteractiveSessionThroughAPseudoTerminal) {
  test::ScratchDir dir;
  PtySession s(dir.Sub("db"), dir.path());
  ASSERT_TRUE(s.started());
  ASSERT_TRUE(s.WaitFor("Type \"help\" for help")) << s.screen();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.screen();

  // A multi-line entry: the continuation prompt until the unit is complete.
  s.Type("function area(w, h) {\r");
  ASSERT_TRUE(s.WaitFor("... ")) << s.Unmatched();
  s.Type("  return w * h\r");
  ASSERT_TRUE(s.WaitFor("... ")) << s.Unmatched();
  s.Type("}\r");
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.Type("area(6, 7)\r");
  ASSERT_TRUE(s.WaitFor("\r\n42\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();

  // Non-ASCII input is edited and evaluated as UTF-8.
  s.Type("'\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac'.length * 1000\r");  // 'é日本'
  ASSERT_TRUE(s.WaitFor("\r\n3000\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();

  // History: the up arrow recalls the last entry, Enter runs it again.
  s.Type("'recalled ' + (20 + 3)\r");
  ASSERT_TRUE(s.WaitFor("\r\nrecalled 23\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.Type("\x1b[A\r");
  ASSERT_TRUE(s.WaitFor("\r\nrecalled 23\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();

  // `it` pages through a cursor.
  s.Type("for (let i = 0; i < 25; i++) db.pages.insertOne({_id: i})\r");
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.Type("db.pages.find()\r");
  ASSERT_TRUE(s.WaitFor("{ _id: 19 }")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("Type \"it\" for more")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.Type("it\r");
  ASSERT_TRUE(s.WaitFor("{ _id: 24 }")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();

  // An error prints one line and the shell goes on.
  s.Type("db.pages.insertOne({_id: 3})\r");
  ASSERT_TRUE(s.WaitFor("MongoServerError[DuplicateKey]: E11000 duplicate key error"))
      << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();

  // Ctrl-C stops a running statement without leaving the shell.
  // (The loop announces itself, so the Ctrl-C surely lands inside it.)
  s.Type("let n = 0; print('loop' + 'ing'); while (true) { n++ }\r");
  ASSERT_TRUE(s.WaitFor("\r\nlooping\r\n")) << s.Unmatched();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s.Type("\x03");
  ASSERT_TRUE(s.WaitFor("Interrupted: the statement was stopped")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.Type("n > 0 ? 'looped' : 'never ran'\r");
  ASSERT_TRUE(s.WaitFor("\r\nlooped\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();

  // Ctrl-C at the prompt drops what was typed (and the shell keeps its db).
  s.Type("use other\r");
  ASSERT_TRUE(s.WaitFor("switched to db other")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("other> ")) << s.Unmatched();
  s.TypeAtPrompt("this is not run\x03");
  ASSERT_TRUE(s.WaitFor("other> ")) << s.Unmatched();
  s.Type("100 + 11\r");
  ASSERT_TRUE(s.WaitFor("\r\n111\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("other> ")) << s.Unmatched();

  // Ctrl-D on an empty line leaves, with status 0.
  s.TypeAtPrompt("\x04");
  EXPECT_EQ(s.Wait(), 0) << s.screen();
  EXPECT_EQ(s.screen().find("not run\r\n"), std::string::npos);

  // The history file holds whole entries, the multi-line one as one entry.
  std::ifstream history(dir.Sub(".rockdoc_history"));
  std::stringstream text;
  text << history.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("area(6,"));
  EXPECT_THAT(text.str(), HasSubstr("function"));
  EXPECT_EQ(text.str().find("this is not run"), std::string::npos);
}

// Issue 33.14: Tab completes a collection name and a method, as mongosh.
TEST(ShellReplTest, TabCompletesCollectionsAndMethods) {
  test::ScratchDir dir;
  PtySession s(dir.Sub("db"), dir.path());
  ASSERT_TRUE(s.started());
  ASSERT_TRUE(s.WaitFor("test> ")) << s.screen();
  s.Type("db.tabbed.insertOne({_id: 7, v: 'found by tab'})\r");
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.TypeAtPrompt("db.tabb\t");  // only one collection starts so
  ASSERT_TRUE(s.WaitFor("ed")) << s.Unmatched();
  s.Type(".findO\t");  // findOne, findOneAndDelete, ...: the common start
  ASSERT_TRUE(s.WaitFor("ne")) << s.Unmatched();
  s.Type("().v\r");
  ASSERT_TRUE(s.WaitFor("\r\nfound by tab\r\n")) << s.Unmatched();
  ASSERT_TRUE(s.WaitFor("test> ")) << s.Unmatched();
  s.Type("exit\r");
  EXPECT_EQ(s.Wait(), 0) << s.screen();
}

TEST(ShellReplTest, ExitCommandEndsTheSessionWithItsStatus) {
  test::ScratchDir dir;
  PtySession s(dir.Sub("db"), dir.path());
  ASSERT_TRUE(s.started());
  ASSERT_TRUE(s.WaitFor("test> ")) << s.screen();
  s.Type("exit(5)\r");
  EXPECT_EQ(s.Wait(), 5) << s.screen();
}

}  // namespace
}  // namespace rockdoc::shell
