// Small, bounded helpers the cases share: reading kernel files, naming errnos, judging a refused
// call, and running an attempt in a throw-away child so a call that wrongly succeeds (unshare,
// setuid, personality) cannot change what later cases see.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escape-suite/case.h"

namespace escape {

// Hostile-input discipline: every file the space can influence is read only up to a bound.
inline constexpr std::size_t kMaxProcFileBytes = 64 * 1024;
inline constexpr std::size_t kMaxChildReportBytes = 4096;
inline constexpr int kMaxScannedPids = 4096;
inline constexpr int kMaxScannedFdsPerPid = 1024;

struct FileRead {
  bool ok = false;
  int err = 0;  // errno of the failed open/read
  std::string data;
};

FileRead read_bounded(const std::string& path, std::size_t max_bytes = kMaxProcFileBytes);

// "EPERM", "ENETUNREACH", ... or "errno 123".
std::string errno_name(int err);

// True when `err` is how a refused call ends: EPERM (capability/LSM), EACCES, ENOSYS, EOPNOTSUPP
// or the profile's own errno (--seccomp-errno; seccomp-profiles/space.json uses EOPNOTSUPP = 95).
bool is_refusal(const Options& opts, int err);
// "seccomp" when err is the profile's errno, else "kernel".
std::string_view refusal_layer(const Options& opts, int err);

// Judges a raw system call made with arguments that fail harmlessly when the call is allowed
// (bubblewrap's try-syscall method): rc >= 0 is FAIL (the call worked), a refusal errno is PASS, any
// other errno is FAIL (the call reached the kernel's own argument checks: nothing filtered it).
Outcome judge_syscall(const Options& opts, std::string_view what, long rc, int err);

// Like judge_syscall but a kernel "not here" errno (ENOENT, EAFNOSUPPORT...) in `absent` also passes.
Outcome judge_open_or_absent(const Options& opts, std::string_view what, long rc, int err,
                             const std::vector<int>& absent);

struct ChildOutcome {
  bool exited = false;     // exited normally
  int exit_code = -1;
  int signal = 0;          // killed by this signal
  bool timed_out = false;  // we killed it after the timeout
  std::string report;      // what the child wrote (bounded)
};

// A child's "A B" report of two decimal numbers (a return value or a count, then an errno), or
// one number alone (B is then 0). Nothing else is a report: a child that printed anything other
// proves nothing (the caller answers INCONCLUSIVE, never a verdict read from a guessed 0).
struct ChildNumbers {
  long long first = 0;
  int second = 0;
};
std::optional<ChildNumbers> child_numbers(std::string_view report);

// Forks; the child runs `fn`, writes its return text to a pipe and _exit(0)s. The parent waits up
// to `timeout_ms`, then SIGKILLs the child (and its process group when `own_group`).
ChildOutcome run_in_child(const std::function<std::string()>& fn, int timeout_ms,
                          bool own_group = false);

// Makes `call` in a throw-away child (it returns rc and leaves errno) and judges it like
// judge_syscall. A child killed by SIGSYS passes (a seccomp KILL action); another death or a
// timeout is INCONCLUSIVE. `segv_means_absent`: a SIGSEGV means the entry point does not exist
// (int 0x80 on a kernel without IA32 emulation), which also passes.
Outcome syscall_in_child(const Options& opts, std::string_view what, const std::function<long()>& call,
                         int timeout_ms = 3000, bool segv_means_absent = false);

// Like syscall_in_child, but only `expected_errno` passes: the errno the space's profile gives
// this call (--seccomp-errno, or ENOSYS for clone3). EPERM or EACCES FAIL, because they come from
// a missing capability or an LSM: the profile let the call reach the kernel. SIGSYS also passes
// (a seccomp kill).
Outcome syscall_in_child_expect(const Options& opts, std::string_view what, const std::function<long()>& call,
                                int expected_errno, int timeout_ms = 3000);

// A field of /proc/self/status ("CapEff"), trimmed; empty when missing.
std::string status_field(std::string_view status_text, std::string_view field);

std::vector<std::string> split_lines(std::string_view text, std::size_t max_lines = 100000);
std::vector<std::string> list_dir(const std::string& path, std::size_t max_entries = 4096);
std::vector<int> numeric_pids(std::size_t max = kMaxScannedPids);
std::string read_link(const std::string& path);  // "" on error

std::int64_t now_ms();
std::string to_lower(std::string_view s);

}  // namespace escape
