// The read-eval-print loop: libedit for a terminal, plain lines otherwise.
//
// An entry is read line by line until it is a complete JavaScript unit
// (JS_Utf8BufferIsCompilableUnit), then evaluated and its value displayed.
// On a terminal, Ctrl-C while a statement runs stops it (SIGINT asks the
// engine for an interrupt; the statement ends, the shell stays); Ctrl-C at
// the prompt abandons the entry being typed; Ctrl-D on an empty line leaves;
// Tab completes through Shell::Complete (CompleteFn).

#include <fcntl.h>
#include <histedit.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "shell/shell.h"

namespace rockdoc::shell {
namespace {

// The shell the SIGINT handler interrupts (one interactive REPL per process).
Shell* volatile g_interactive_shell = nullptr;
volatile sig_atomic_t g_sigint = 0;
// Self-pipe: the handler writes a byte so that a reader waiting in poll()
// wakes up even when the signal arrived just before it started waiting.
int g_sigint_pipe[2] = {-1, -1};

void OnSigint(int) {
  int saved_errno = errno;
  g_sigint = 1;
  if (Shell* shell = g_interactive_shell) shell->RequestInterrupt();
  if (g_sigint_pipe[1] >= 0) {
    char byte = 1;
    ssize_t ignored = write(g_sigint_pipe[1], &byte, 1);
    (void)ignored;
  }
  errno = saved_errno;
}

// libedit's character reader, replaced so that a Ctrl-C at the prompt always
// ends el_gets: the built-in reader blocks in read(), and a SIGINT that
// lands between two reads (while libedit is echoing typed characters) would
// be lost. Waits on the terminal and the self-pipe; decodes UTF-8 itself
// (libedit wants wide characters). Returns 1 with a character, 0 at end of
// input, -1 (errno EINTR) on Ctrl-C.
int ReadChar(EditLine*, wchar_t* out) {
  unsigned char bytes[4];
  size_t have = 0, need = 1;
  while (have < need) {
    if (g_sigint) {
      errno = EINTR;
      return -1;
    }
    struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {g_sigint_pipe[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (fds[1].revents & POLLIN) {
      char drain[64];
      while (read(g_sigint_pipe[0], drain, sizeof drain) > 0) {
      }
      continue;  // g_sigint is set: reported at the top of the loop
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(STDIN_FILENO, &bytes[have], 1);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (have == 0) {
      unsigned char b = bytes[0];
      need = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
    } else if ((bytes[have] & 0xC0) != 0x80) {
      // A broken sequence: give the lead byte as it is.
      *out = bytes[0];
      return 1;
    }
    ++have;
  }
  uint32_t cp = bytes[0];
  if (need == 2) cp = ((bytes[0] & 0x1F) << 6) | (bytes[1] & 0x3F);
  if (need == 3) cp = ((bytes[0] & 0x0F) << 12) | ((bytes[1] & 0x3F) << 6) | (bytes[2] & 0x3F);
  if (need == 4) {
    cp = ((bytes[0] & 0x07) << 18) | ((bytes[1] & 0x3F) << 12) | ((bytes[2] & 0x3F) << 6) |
         (bytes[3] & 0x3F);
  }
  *out = static_cast<wchar_t>(cp);
  return 1;
}

// libedit writes wide characters back out through the C library, which
// needs a UTF-8 character type to print anything beyond ASCII.
void UseUtf8CharacterType() {
  if (std::setlocale(LC_CTYPE, "") && std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0) return;
  std::setlocale(LC_CTYPE, "C.UTF-8");
}

// Multi-line entries go into history as one entry: joined with spaces when
// no line holds a // comment (so the recalled entry edits as one line), else
// with newlines.
std::string HistoryEntry(const std::string& entry) {
  if (entry.find("//") != std::string::npos) return entry;
  std::string out;
  for (char c : entry) out += c == '\n' ? ' ' : c;
  return out;
}

struct PromptState {
  std::string text;
  Shell* shell = nullptr;
  const std::string* entry = nullptr;  // the lines of the entry before this one
};

char* PromptFn(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return const_cast<char*>(static_cast<PromptState*>(data)->text.c_str());
}

// Tab: Shell::Complete over the entry so far. One completion, or a longer
// common start of several, is typed in; otherwise the choices are listed
// under the line (their last words), as a shell lists file names.
unsigned char CompleteFn(EditLine* el, int) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  const PromptState* state = static_cast<PromptState*>(data);
  const LineInfo* li = el_line(el);
  std::string before(li->buffer, static_cast<size_t>(li->cursor - li->buffer));
  if (state->entry != nullptr && !state->entry->empty()) before = *state->entry + "\n" + before;
  const std::vector<std::string> options = state->shell->Complete(before);
  if (options.empty()) return CC_REFRESH_BEEP;
  std::string common = options[0];
  for (const std::string& o : options) {
    size_t n = 0;
    while (n < common.size() && n < o.size() && common[n] == o[n]) ++n;
    common.resize(n);
  }
  if (common.size() > before.size() && common.compare(0, before.size(), before) == 0) {
    el_insertstr(el, common.substr(before.size()).c_str());
    return CC_REFRESH;
  }
  if (options.size() == 1) return CC_REFRESH;
  size_t word = before.size();
  while (word > 0 && (std::isalnum(static_cast<unsigned char>(before[word - 1])) ||
                      before[word - 1] == '_' || before[word - 1] == '$')) {
    --word;
  }
  std::string list = "\n";
  for (const std::string& o : options) list += o.substr(std::min(word, o.size())) + "  ";
  list += "\n";
  std::fputs(list.c_str(), stdout);
  std::fflush(stdout);
  return CC_REDISPLAY;
}

int RunInteractive(Shell& shell, const ReplOptions& options) {
  UseUtf8CharacterType();
  if (pipe(g_sigint_pipe) != 0) {
    std::cerr << "Error: cannot create a pipe: " << std::strerror(errno) << "\n";
    return 1;
  }
  for (int fd : g_sigint_pipe) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  EditLine* el = el_init("rockdoc", stdin, stdout, stderr);
  if (!el) {
    std::cerr << "Error: cannot initialize line editing\n";
    return 1;
  }
  std::string entry;
  PromptState prompt;
  prompt.shell = &shell;
  prompt.entry = &entry;
  el_set(el, EL_CLIENTDATA, &prompt);
  el_set(el, EL_PROMPT, PromptFn);
  el_set(el, EL_EDITOR, "emacs");
  // Our SIGINT handler, not libedit's: Ctrl-C must interrupt a statement.
  el_set(el, EL_SIGNAL, 0);
  el_set(el, EL_GETCFN, ReadChar);
  el_set(el, EL_ADDFN, "rockdoc-complete", "complete the word before the cursor", CompleteFn);
  el_set(el, EL_BIND, "^I", "rockdoc-complete", nullptr);
  HistEvent ev;
  History* history_db = history_init();
  history(history_db, &ev, H_SETSIZE, 1000);
  history(history_db, &ev, H_SETUNIQUE, 1);
  el_set(el, EL_HIST, history, history_db);
  if (!options.history_file.empty()) {
    history(history_db, &ev, H_LOAD, options.history_file.c_str());
  }

  // No SA_RESTART: a Ctrl-C at the prompt must end el_gets's read().
  struct sigaction action = {};
  struct sigaction old_action = {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  g_interactive_shell = &shell;
  sigaction(SIGINT, &action, &old_action);

  while (!shell.exit_requested()) {
    prompt.text = entry.empty() ? shell.Prompt() : "... ";
    g_sigint = 0;
    int count = 0;
    const char* line = el_gets(el, &count);
    if (!line) {
      if (g_sigint || (count == -1 && errno == EINTR)) {
        // Ctrl-C at the prompt: drop what was typed.
        std::fputs("\n", stdout);
        std::fflush(stdout);
        entry.clear();
        continue;
      }
      break;  // Ctrl-D or end of input
    }
    std::string text(line, count);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (entry.empty() && text.find_first_not_of(" \t") == std::string::npos) continue;
    entry += entry.empty() ? text : "\n" + text;
    if (!shell.IsCompleteEntry(entry)) continue;
    history(history_db, &ev, H_ENTER, HistoryEntry(entry).c_str());
    if (!options.history_file.empty()) {
      history(history_db, &ev, H_SAVE, options.history_file.c_str());
    }
    std::string code;
    code.swap(entry);
    shell.Evaluate(code, "<repl>", /*show_result=*/true);
    std::cout.flush();
  }

  sigaction(SIGINT, &old_action, nullptr);
  g_interactive_shell = nullptr;
  history_end(history_db);
  el_end(el);
  for (int& fd : g_sigint_pipe) {
    close(fd);
    fd = -1;
  }
  if (!shell.exit_requested()) std::fputs("\n", stdout);
  return shell.exit_requested() ? shell.exit_code() : 0;
}

int RunPiped(Shell& shell, const ReplOptions& options) {
  std::istream& in = options.in ? *options.in : std::cin;
  std::string entry;
  std::string line;
  bool failed = false;
  while (!shell.exit_requested() && std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (entry.empty() && line.find_first_not_of(" \t") == std::string::npos) continue;
    entry += entry.empty() ? line : "\n" + line;
    if (!shell.IsCompleteEntry(entry)) continue;
    std::string code;
    code.swap(entry);
    if (!shell.Evaluate(code, "<stdin>", true)) failed = true;
  }
  // An unfinished entry at the end of input is still run: its syntax error
  // is the useful message.
  if (!entry.empty() && !shell.exit_requested()) {
    if (!shell.Evaluate(entry, "<stdin>", true)) failed = true;
  }
  if (shell.exit_requested()) return shell.exit_code();
  return failed ? 1 : 0;
}

}  // namespace

int RunRepl(Shell& shell, const ReplOptions& options) {
  return options.interactive ? RunInteractive(shell, options) : RunPiped(shell, options);
}

}  // namespace rockdoc::shell
