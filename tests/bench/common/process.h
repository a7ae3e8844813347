// Child processes of the benchmark: fork + execv with an argv (never a shell), optionally inside a
// network namespace; every child is registered so that a signal or an early exit still kills it
// and removes the namespace (nothing the benchmark starts outlives it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/number.h"

namespace bench {

struct SpawnOptions {
  int netns_fd = -1;          // setns() into this network namespace first (-1: stay here)
  bool capture_stdout = false;
  std::string stderr_path;    // empty: /dev/null
  int uid = -1;               // >= 0: drop to this uid/gid (no supplementary groups) before exec
  int gid = -1;
};

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;  // read end when capture_stdout
};

// Starts argv[0] (a path) with argv. The child dies with us (PR_SET_PDEATHSIG) unless it changes
// credentials (squid does); the registry covers that case.
Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options);
// Runs `body` in a forked child (inside netns_fd when >= 0); the child exits with its result.
pid_t fork_run(int netns_fd, const std::function<int()>& body);
// fork_run whose body reports "ready\n" on ready_fd once it serves: the pid once that line came
// within timeout_ms; otherwise the child is stopped and -1 returned.
pid_t fork_until_ready(int netns_fd, const std::function<int(int ready_fd)>& body, int timeout_ms);
// Runs argv to completion with stdout and stderr discarded; returns the exit status or -1.
int run(const std::vector<std::string>& argv);

// SIGTERM, then SIGKILL after timeout_ms; reaps and unregisters the child.
void stop(pid_t pid, int timeout_ms);
// Drops a child that was already reaped elsewhere from the registry.
void forget(pid_t pid);
// VmRSS of pid in KiB from /proc/<pid>/status; -1 when unreadable.
long vm_rss_kib(pid_t pid);
// The value of a /proc/<pid>/status or /proc/meminfo line after its "Name:": spaces or tabs, a
// count, " kB" and an optional newline; nothing when the count does not read.
inline std::optional<long> kib_value(std::string_view after_name) {
  std::string_view v = after_name;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  if (v.size() < 3 || v.substr(v.size() - 3) != " kB") return std::nullopt;
  return policy::parse_number<long>(v.substr(0, v.size() - 3));
}
// One line (without '\n') from fd within timeout_ms; empty on timeout or EOF.
std::string read_line(int fd, int timeout_ms);

// Cleanup on SIGINT/SIGTERM/SIGHUP, on a crash (SIGSEGV/SIGBUS/SIGABRT/SIGFPE) and at exit: kill every registered child, then run
// `ip netns del <name>` if a namespace was registered.
void install_cleanup_handlers();
void register_netns(const std::string& name);
void unregister_netns();
void cleanup_now();

}  // namespace bench
