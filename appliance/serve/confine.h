// Self-confinement of `gatekeeper serve`. Called once, after the listeners are
// bound and before the ready line and the first accept, while the process has one thread:
//   1. refuse uid 0 (real, effective or saved)
//   2. no_new_privs (prctl(2) PR_SET_NO_NEW_PRIVS)
//   3. empty the capability bounding set (when CAP_SETPCAP allows it), clear the ambient set, then
//      capset(2) permitted/effective/inheritable to zero
//   4. rlimits: RLIMIT_CORE 0, RLIMIT_NOFILE = descriptor_limit(), RLIMIT_NPROC 0
//   5. non-dumpable (prctl(2) PR_SET_DUMPABLE 0)
//   6. the libseccomp allowlist below, default action SCMP_ACT_KILL_PROCESS, TSYNC on
// Everything that opens a file (CA bundle, resolv.conf) or binds a listener happens before.
// After it the process cannot open files, listen, exec, fork, create threads, trace or mount.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "appliance/serve/options.h"
#include "policy/result.h"

namespace appliance::serve {

enum class SeccompAction {
  kAllow,
  kErrnoEnosys,  // "not implemented": callers fall back
  kErrnoEacces,  // refused without a kill, where a kill would hand an attacker a shutdown switch
};

enum class ArgOp {
  kEqual,        // arg == value
  kMaskedEqual,  // (arg & mask) == value
  kEqualOwnPid,  // arg == getpid() of the process that loads the filter
};

inline constexpr unsigned kNoArgument = 6;  // syscalls have arguments 0..5

struct ArgCheck {
  unsigned index = kNoArgument;
  ArgOp op = ArgOp::kEqual;
  std::uint64_t mask = ~std::uint64_t{0};
  std::uint64_t value = 0;
  std::string_view value_name;  // for --print-seccomp
};

// One row of the reviewed table. Several rows with the same name are OR-ed; the checks of one row
// are AND-ed. Every row carries its reason (docs/decisions.md#every-row-has-a-reason).
struct SeccompRule {
  std::string_view name;
  SeccompAction action = SeccompAction::kAllow;
  std::string_view reason;
  std::array<ArgCheck, 3> args{};
};

// The whole allowlist; anything not in it kills the process with SIGSYS.
std::span<const SeccompRule> seccomp_table();

// `gatekeeper serve --print-seccomp`: one line per row, tab-separated:
// name, action, argument checks ("-" for none), reason.
std::string seccomp_table_text();

// RLIMIT_NOFILE for these options: every socket the caps allow plus the fixed descriptors.
std::uint64_t descriptor_limit(const ServeOptions& options);

// Steps 1..6 above, in that order. The error names the step that failed.
policy::Result<void> confine(const ServeOptions& options);

#ifdef GATEKEEPER_TEST_BUILD
// Test build only: once the loop runs, it calls ptrace(2), which the filter forbids, so a test can
// prove the kill (SIGSYS). The release binary never contains this; a meta test greps it.
inline constexpr std::string_view kTestForbiddenSyscallFlag = "--test-forbidden-syscall-after-ready";
// Removes the flag from args; true when it was there.
bool take_test_forbidden_syscall_flag(std::vector<std::string>& args);
// Test build only: RLIMIT_NOFILE set to N instead of descriptor_limit(), so a test can reach
// EMFILE with a handful of sockets. Removes "--test-descriptor-limit N" from args; false when
// the value is not 0..999999.
inline constexpr std::string_view kTestDescriptorLimitFlag = "--test-descriptor-limit";
bool take_test_descriptor_limit(std::vector<std::string>& args);
void arm_test_forbidden_syscall(uv_loop_t* loop);
#endif

#if defined(GATEKEEPER_TEST_BUILD) && defined(GK_SANITIZER_BUILD)
// Sanitizer test build only (never the release binary, never an image): serve without confine(),
// so LeakSanitizer can stop the world at exit (the filter kills ptrace, and a non-dumpable process
// cannot be traced). Warns at start-up. The leak test runs the gatekeeper with it; every other test
// runs it confined.
inline constexpr std::string_view kUnsafeTestNoConfinementFlag = "--unsafe-test-no-confinement";
bool take_unsafe_test_no_confinement_flag(std::vector<std::string>& args);
#endif

}  // namespace appliance::serve
