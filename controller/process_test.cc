// The process runner: deadline, output cap and stdin, each at its boundary.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/process.h"

namespace controller {
namespace {

TEST(ProcessTest, PassesStdinAndCapturesOutput) {
  ProcessRequest r;
  r.argv = {"cat"};
  r.stdin_bytes = std::string(200000, 'x');  // larger than a pipe buffer
  ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.succeeded());
  EXPECT_EQ(o.out.size(), 200000u);
}

// Regression: a lock file spacectl inherited without close-on-exec (`flock LOCK spacectl …`) went
// on to Podman's aardvark-dns, a daemon the podman CLI starts, which held the lock for as long as
// the space's network existed. Only stdin, stdout and stderr reach a child now.
TEST(ProcessTest, AnInheritedDescriptorDoesNotReachTheChild) {
  // No O_CLOEXEC, like an inherited one; high, so it is not the descriptor ls opens itself.
  const int low = open("/dev/null", O_RDONLY);
  ASSERT_GE(low, 3);
  const int fd = dup2(low, 200);
  close(low);
  ASSERT_EQ(fd, 200);
  ProcessRequest r;
  r.argv = {"ls", "/proc/self/fd"};
  const ProcessOutcome o = run_process(r);
  close(fd);
  ASSERT_TRUE(o.succeeded()) << o.describe();
  // ls itself opens one descriptor for the directory it lists; stdio and that one only.
  std::size_t count = 0;
  for (const char c : o.out) count += c == '\n' ? 1u : 0u;
  EXPECT_EQ(count, 4u) << o.out;
  EXPECT_EQ(("\n" + o.out).find("\n" + std::to_string(fd) + "\n"), std::string::npos)
      << "fd " << fd << " reached the child: " << o.out;
}

TEST(ProcessTest, KillsTheWholeGroupAtTheDeadline) {
  ProcessRequest r;
  // `timeout` forks `sleep`: a grandchild holding the output pipe, which only a group kill ends early.
  r.argv = {"timeout", "30", "sleep", "30"};
  r.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ProcessTest, OutputAtTheCapPassesAndOneByteMoreIsKilled) {
  ProcessRequest r;
  r.argv = {"head", "-c", "1000", "/dev/zero"};
  r.output_cap = 1000;
  EXPECT_TRUE(run_process(r).succeeded());
  r.argv = {"head", "-c", "1001", "/dev/zero"};
  EXPECT_TRUE(run_process(r).output_too_large);
}

TEST(ProcessTest, MissingProgramIsENOENT) {
  ProcessRequest r;
  r.argv = {"spacectl-no-such-program"};
  ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.spawn_failed);
  EXPECT_EQ(o.spawn_errno, ENOENT);
}

// A parent that ignored SIGCHLD makes the kernel reap children itself and waitpid fail with
// ECHILD; that used to read as "exited 0".
TEST(ProcessTest, AWaitpidErrorIsAFailureNeverExitZero) {
  struct sigaction old{}, ignore{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGCHLD, &ignore, &old), 0);
  ProcessRequest r;
  r.argv = {"sh", "-c", "exit 7"};
  const ProcessOutcome o = run_process(r);
  sigaction(SIGCHLD, &old, nullptr);
  EXPECT_FALSE(o.succeeded());
  EXPECT_FALSE(o.exited && o.exit_code == 0) << o.describe();
  EXPECT_EQ(o.wait_errno, ECHILD) << o.describe();
}

// An ignored SIGTERM (or SIGINT) of spacectl's parent is not handed on to the child.
TEST(ProcessTest, TheChildStartsWithDefaultSignalDispositions) {
  struct sigaction old{}, ignore{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGTERM, &ignore, &old), 0);
  ProcessRequest r;
  r.argv = {"sh", "-c", "kill -TERM $$; exit 0"};
  const ProcessOutcome o = run_process(r);
  sigaction(SIGTERM, &old, nullptr);
  EXPECT_FALSE(o.exited) << o.describe();
  EXPECT_EQ(o.signal, SIGTERM);
}

// `space exec ID -- sh` at a terminal: the pass-through child must be able to read the terminal.
// In a process group of its own it was stopped by SIGTTIN and waited for forever. Under a
// pseudo-terminal: a shell reads a line, answers, and exits with a status.
TEST(ProcessTest, APassThroughChildReadsTheTerminalAndItsStatusComesBack) {
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ProcessRequest r;
    r.argv = {"sh", "-c", "read line; echo \"got:$line\"; exit 7"};
    r.inherit_stdio = true;
    const ProcessOutcome o = run_process(r);
    _exit(o.exited ? o.exit_code : 100 + o.signal);
  }
  ASSERT_EQ(write(master, "hello\n", 6), 6);
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  pid_t done = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      char buffer[256];
      const ssize_t n = read(master, buffer, sizeof buffer);
      if (n > 0) seen.append(buffer, static_cast<std::size_t>(n));
    }
    done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
  }
  if (done != pid) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  close(master);
  ASSERT_EQ(done, pid) << "the pass-through child hung (stopped by the terminal?); saw: " << seen;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_NE(seen.find("got:hello"), std::string::npos) << seen;
}

}  // namespace
}  // namespace controller
