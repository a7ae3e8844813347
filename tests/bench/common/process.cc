#include "tests/bench/common/process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bench {
namespace {

// The registry is read from a signal handler: fixed storage, no allocation.
constexpr std::size_t kMaxChildren = 32;
std::array<std::atomic<pid_t>, kMaxChildren> g_children{};
char g_netns_name[64] = {};
std::atomic<bool> g_netns_registered{false};

void track(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void untrack(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

// Async-signal-safe: kill, waitpid, fork, execv, _exit only.
void kill_all_and_remove_netns() {
  for (auto& slot : g_children) {
    const pid_t pid = slot.exchange(0);
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  if (g_netns_registered.exchange(false)) {
    const pid_t pid = fork();
    if (pid == 0) {
      const int null = open("/dev/null", O_RDWR);
      dup2(null, 1);
      dup2(null, 2);
      char ip[] = "/usr/sbin/ip";
      char netns[] = "netns";
      char del[] = "del";
      char* argv[] = {ip, netns, del, g_netns_name, nullptr};
      execv(argv[0], argv);
      _exit(127);
    }
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
}

void on_signal(int sig) {
  kill_all_and_remove_netns();
  _exit(128 + sig);
}

void enter_netns_or_die(int netns_fd) {
  if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "%s: setns: %s\n", program_invocation_short_name, std::strerror(errno));
    _exit(126);
  }
}

// fork() whose child dies with us (PR_SET_PDEATHSIG), also when we died before its prctl.
pid_t fork_tied() {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
  }
  return pid;
}

}  // namespace

Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  Child child;
  int out[2] = {-1, -1};
  if (options.capture_stdout && pipe2(out, O_CLOEXEC) != 0) return child;
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork_tied();
  if (pid == 0) {
    enter_netns_or_die(options.netns_fd);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(options.capture_stdout ? out[1] : null, 1);
    const int err = options.stderr_path.empty()
                        ? null
                        : open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err >= 0 ? err : null, 2);
    if (options.uid >= 0) {
      if (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(options.gid)) != 0 ||
          setuid(static_cast<uid_t>(options.uid)) != 0) {
        _exit(124);
      }
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a credential change cleared it
      if (getppid() != parent) _exit(125);
    }
    execv(raw[0], raw.data());
    _exit(127);
  }
  if (options.capture_stdout) close(out[1]);
  if (pid < 0) {
    if (options.capture_stdout) close(out[0]);
    return child;
  }
  track(pid);
  child.pid = pid;
  child.stdout_fd = options.capture_stdout ? out[0] : -1;
  return child;
}

pid_t fork_run(int netns_fd, const std::function<int()>& body) {
  const pid_t pid = fork_tied();
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    enter_netns_or_die(netns_fd);
    _exit(body());
  }
  if (pid > 0) track(pid);
  return pid;
}

pid_t fork_until_ready(int netns_fd, const std::function<int(int ready_fd)>& body, int timeout_ms) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork_run(netns_fd, [&] {
    close(ready[0]);
    return body(ready[1]);
  });
  close(ready[1]);
  const bool up = pid > 0 && read_line(ready[0], timeout_ms) == "ready";
  close(ready[0]);
  if (up) return pid;
  stop(pid, 2000);
  return -1;
}

int run(const std::vector<std::string>& argv) {
  const Child child = spawn(argv, SpawnOptions{});
  if (child.pid < 0) return -1;
  int status = 0;
  waitpid(child.pid, &status, 0);
  untrack(child.pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void stop(pid_t pid, int timeout_ms) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      untrack(pid);
      return;
    }
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  untrack(pid);
}

void forget(pid_t pid) { untrack(pid); }

long vm_rss_kib(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) {
      kib = kib_value(line + 6).value_or(-1);
      break;
    }
  }
  std::fclose(f);
  return kib;
}

std::string read_line(int fd, int timeout_ms) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return {};
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char c;
    if (read(fd, &c, 1) != 1) return {};
    if (c == '\n') return line;
    line.push_back(c);
  }
}

void install_cleanup_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // A crash of the benchmark itself must not leave the namespace behind either.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::atexit(kill_all_and_remove_netns);
}

void register_netns(const std::string& name) {
  std::snprintf(g_netns_name, sizeof g_netns_name, "%s", name.c_str());
  g_netns_registered = true;
}

void unregister_netns() { g_netns_registered = false; }

void cleanup_now() { kill_all_and_remove_netns(); }

}  // namespace bench
