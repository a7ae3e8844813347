#include "appliance/serve/confine.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>

#include "appliance/loop/handle.h"
#include "appliance/serve/metrics.h"

namespace appliance::serve {
namespace {

using policy::Error;
using policy::Result;

constexpr ArgCheck equal(unsigned index, std::uint64_t value, std::string_view name) {
  return ArgCheck{index, ArgOp::kEqual, ~std::uint64_t{0}, value, name};
}
constexpr ArgCheck masked(unsigned index, std::uint64_t mask, std::uint64_t value,
                          std::string_view name) {
  return ArgCheck{index, ArgOp::kMaskedEqual, mask, value, name};
}
constexpr ArgCheck own_pid(unsigned index) {
  return ArgCheck{index, ArgOp::kEqualOwnPid, ~std::uint64_t{0}, 0, "getpid()"};
}

// The socket type sits in the low four bits; the rest may only be SOCK_NONBLOCK / SOCK_CLOEXEC
// (anything else is EINVAL in the kernel, net/socket.c __sys_socket).
constexpr std::uint64_t kSockTypeMask = 0xf;
// ioctl(2) takes an unsigned int command: compare only the low 32 bits the kernel reads
// (CVE-2019-10063: a filter comparing all 64 bits was bypassed with high bits set).
constexpr std::uint64_t kIoctlMask = 0xffffffff;

// The reviewed table. Anything not listed kills the process (SIGSYS, SCMP_ACT_KILL_PROCESS).
// Deliberately absent: execve, execveat, fork, vfork, clone, clone3 (no process or thread is
// created after confinement; RLIMIT_NPROC 0 already refuses them), ptrace, process_vm_*, mount
// and the namespace calls, listen, socketpair, AF_UNIX, prctl, seccomp, open/creat, memfd_create,
// mprotect (nothing changes page protections after start-up), futex other than
// FUTEX_WAKE_PRIVATE (one thread: no lock is ever contended; no requeue, CVE-2014-3153). The
// rows were checked against strace of the integration suite, window TLS included.
// One rule per entry, laid out by hand so each reason stays beside its call.
// clang-format off
constexpr SeccompRule kTable[] = {
    // --- the loop (libuv src/unix/epoll.c, stream.c, signal.c)
    {"epoll_wait", SeccompAction::kAllow, "libuv uv__io_poll waits for events"},
    {"epoll_ctl", SeccompAction::kAllow, "libuv adds, changes and removes watched sockets"},
    {"read", SeccompAction::kAllow,
     "stream reads (uv__read), libuv's signal pipe and signal lock pipe"},
    {"write", SeccompAction::kAllow,
     "stream writes (uv_try_write, uv__write), signal pipe wake-ups, stdout/stderr lines"},
    {"writev", SeccompAction::kAllow,
     "libuv writes a request of several buffers with writev (uv__write); c-ares TCP queries"},
    {"close", SeccompAction::kAllow, "closing sockets, tunnels and c-ares sockets"},
    {"rt_sigaction", SeccompAction::kAllow,
     "uv_signal_stop restores SIGTERM/SIGINT handlers at shutdown"},
    {"rt_sigprocmask", SeccompAction::kAllow,
     "libuv blocks signals around its signal bookkeeping (uv__signal_block_and_lock)"},
    {"rt_sigreturn", SeccompAction::kAllow, "return from libuv's SIGTERM/SIGINT handler"},
    {"restart_syscall", SeccompAction::kAllow, "the kernel restarts an interrupted wait"},
    // --- sockets
    {"socket", SeccompAction::kAllow,
     "upstream TCP connections over IPv4; each listener's reserve descriptor for EMFILE",
     {equal(0, AF_INET, "AF_INET"), masked(1, kSockTypeMask, SOCK_STREAM, "SOCK_STREAM"),
      equal(2, 0, "0")}},
    {"socket", SeccompAction::kAllow, "upstream TCP connections over IPv6",
     {equal(0, AF_INET6, "AF_INET6"), masked(1, kSockTypeMask, SOCK_STREAM, "SOCK_STREAM"),
      equal(2, 0, "0")}},
    {"socket", SeccompAction::kAllow, "c-ares UDP queries to an IPv4 name server",
     {equal(0, AF_INET, "AF_INET"), masked(1, kSockTypeMask, SOCK_DGRAM, "SOCK_DGRAM"),
      equal(2, 0, "0")}},
    {"socket", SeccompAction::kAllow, "c-ares UDP queries to an IPv6 name server",
     {equal(0, AF_INET6, "AF_INET6"), masked(1, kSockTypeMask, SOCK_DGRAM, "SOCK_DGRAM"),
      equal(2, 0, "0")}},
    {"socket", SeccompAction::kAllow,
     "getifaddrs(3) refreshes the own-address list once a second (ServeContext::own_addresses), "
     "so an interface added after start is still refused as a target",
     {equal(0, AF_NETLINK, "AF_NETLINK"), masked(1, kSockTypeMask, SOCK_RAW, "SOCK_RAW"),
      equal(2, NETLINK_ROUTE, "NETLINK_ROUTE")}},
    {"bind", SeccompAction::kAllow,
     "getifaddrs(3) binds its netlink socket; addrlen 12 (sockaddr_nl) is too short for "
     "sockaddr_in (16) or sockaddr_in6 (24), so no IP address can be bound",
     {equal(2, sizeof(sockaddr_nl), "sizeof(sockaddr_nl)")}},
    {"getsockname", SeccompAction::kAllow, "getifaddrs(3) reads its netlink port id"},
    {"sendto", SeccompAction::kAllow,
     "c-ares UDP queries (send); getifaddrs(3) netlink request; the corridor's relay sends the "
     "bytes held before a tunnel started (send(2))"},
    {"recvfrom", SeccompAction::kAllow, "c-ares reads UDP and TCP answers (recvfrom, recv)"},
    {"recvmsg", SeccompAction::kAllow, "getifaddrs(3) reads the netlink dump"},
    {"accept4", SeccompAction::kAllow,
     "libuv accepts on the three listeners bound before confinement; at EMFILE the listener "
     "accepts the pending connection itself to close it (serve/listener.cc)"},
    {"connect", SeccompAction::kAllow,
     "upstream connections to ApprovedEndpoint addresses; c-ares connects its UDP sockets"},
    {"shutdown", SeccompAction::kAllow, "uv_shutdown passes a FIN on; refusals end with a FIN"},
    {"splice", SeccompAction::kAllow,
     "the corridor relays each tunnel direction socket -> pipe -> socket without a copy to user "
     "space (loop/splice.cc); only non-blocking, page-moving calls",
     {equal(5, SPLICE_F_NONBLOCK | SPLICE_F_MOVE, "SPLICE_F_NONBLOCK|SPLICE_F_MOVE")}},
    {"getsockopt", SeccompAction::kAllow,
     "SO_ERROR after a non-blocking connect (libuv uv__stream_connect, c-ares)",
     {equal(1, SOL_SOCKET, "SOL_SOCKET")}},
    {"setsockopt", SeccompAction::kAllow,
     "uv_tcp_nodelay on client and upstream sockets; c-ares on its TCP sockets",
     {equal(1, IPPROTO_TCP, "IPPROTO_TCP"), equal(2, TCP_NODELAY, "TCP_NODELAY")}},
    {"ioctl", SeccompAction::kAllow,
     "libuv sets O_NONBLOCK with ioctl on Linux (uv__nonblock_ioctl), on c-ares sockets too",
     {masked(1, kIoctlMask, FIONBIO, "FIONBIO")}},
    // No F_GETFL/F_SETFL/F_SETFD: c-ares opens its sockets through the resolver's socket
    // functions with SOCK_NONBLOCK|SOCK_CLOEXEC (dns/resolver.cc) and configures none itself.
    {"fcntl", SeccompAction::kAllow,
     "the corridor's relay grows the pipe of a direction that carries bulk (loop/splice.cc); the "
     "kernel still caps it by fs.pipe-max-size and the user's pipe budget",
     {equal(1, F_SETPIPE_SZ, "F_SETPIPE_SZ")}},
    // --- memory (malloc, BoringSSL); never executable: W^X after start-up
    {"mmap", SeccompAction::kAllow, "malloc arenas and large buffers; never PROT_EXEC",
     {masked(2, PROT_EXEC, 0, "no PROT_EXEC")}},
    {"munmap", SeccompAction::kAllow, "free of large blocks"},
    {"mremap", SeccompAction::kAllow, "realloc of large blocks"},
    {"madvise", SeccompAction::kAllow,
     "malloc returns memory (MADV_DONTNEED); BoringSSL fork detection (MADV_WIPEONFORK)"},
    {"brk", SeccompAction::kAllow, "malloc grows the heap"},
    // --- time, randomness, locks
    {"clock_gettime", SeccompAction::kAllow,
     "loop time and journal time; normally the vDSO, the syscall when the vDSO is missing"},
    {"futex", SeccompAction::kAllow,
     "glibc pthread_once ends every first initialisation with FUTEX_WAKE (BoringSSL's lazy "
     "CRYPTO_once tables on the first window TLS connection); a private wake never blocks",
     {equal(1, FUTEX_WAKE_PRIVATE, "FUTEX_WAKE_PRIVATE")}},
    {"getrandom", SeccompAction::kAllow,
     "BoringSSL keys and nonces (window TLS), c-ares query ids; no /dev/urandom needed"},
    // --- process identity, abort, exit
    {"getpid", SeccompAction::kAllow, "abort(3) raises SIGABRT on its own process"},
    {"gettid", SeccompAction::kAllow, "abort(3) raises SIGABRT on its own thread"},
    {"tgkill", SeccompAction::kAllow,
     "abort(3) and raise(3) signal this process only; no other process can be signalled",
     {own_pid(0)}},
    {"exit_group", SeccompAction::kAllow, "process exit after SIGTERM"},
    // --- refused without a kill
    {"io_uring_setup", SeccompAction::kErrnoEnosys,
     "libuv >= 1.45 probes io_uring and falls back on failure; a kill would end the loop"},
    {"io_uring_enter", SeccompAction::kErrnoEnosys, "as io_uring_setup"},
    {"io_uring_register", SeccompAction::kErrnoEnosys, "as io_uring_setup"},
    {"openat", SeccompAction::kErrnoEacces,
     "no file is opened after start-up; libuv's EMFILE trick (uv__emfile_trick) reopens "
     "/dev/null after accept4 hits EMFILE, and a kill there would let a descriptor flood stop the "
     "gatekeeper"},
#if defined(GK_SANITIZER_BUILD)
    // --- sanitizer builds only (the asan preset; never the release or test image binaries)
    {"pipe2", SeccompAction::kAllow,
     "ASan/UBSan runtime: IsAccessibleMemoryRange() probes memory by writing it into a pipe; the "
     "corridor's relay pipes (below, in other builds)"},
    {"readlink", SeccompAction::kErrnoEacces,
     "ASan/UBSan runtime: a report first reads /proc/self/exe for the module name; a kill there "
     "ends the process with SIGSYS before the report is written, hiding the bug it found"},
    {"open", SeccompAction::kErrnoEacces,
     "ASan/UBSan runtime: a report opens /proc/self/maps with open(2), not openat; refused "
     "without a kill for the same reason"},
    {"ioctl", SeccompAction::kErrnoEacces,
     "ASan/UBSan runtime: a report asks whether stderr is a terminal (TCGETS) to choose colours",
     {masked(1, kIoctlMask, TCGETS, "TCGETS")}},
#else
    {"pipe2", SeccompAction::kAllow,
     "the corridor's relay: one pipe per tunnel direction for splice(2) (loop/splice.cc)",
     {equal(1, O_NONBLOCK | O_CLOEXEC, "O_NONBLOCK|O_CLOEXEC")}},
#endif
};
// clang-format on

const char* action_text(SeccompAction action) {
  switch (action) {
    case SeccompAction::kAllow:
      return "allow";
    case SeccompAction::kErrnoEnosys:
      return "errno:ENOSYS";
    case SeccompAction::kErrnoEacces:
      return "errno:EACCES";
  }
  return "kill";
}

std::uint32_t libseccomp_action(SeccompAction action) {
  switch (action) {
    case SeccompAction::kAllow:
      return SCMP_ACT_ALLOW;
    case SeccompAction::kErrnoEnosys:
      return SCMP_ACT_ERRNO(ENOSYS);
    case SeccompAction::kErrnoEacces:
      return SCMP_ACT_ERRNO(EACCES);
  }
  return SCMP_ACT_KILL_PROCESS;
}

std::string hex(std::uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%#llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string checks_text(const SeccompRule& rule) {
  std::string out;
  for (const ArgCheck& check : rule.args) {
    if (check.index == kNoArgument) continue;
    if (!out.empty()) out += " && ";
    const std::string arg = "a" + std::to_string(check.index);
    switch (check.op) {
      case ArgOp::kEqual:
        out += arg + " == " + std::string(check.value_name);
        if (check.value_name != std::to_string(check.value)) out += " (" + std::to_string(check.value) + ")";
        break;
      case ArgOp::kMaskedEqual:
        out += "(" + arg + " & " + hex(check.mask) + ") == " + std::string(check.value_name) + " (" +
               std::to_string(check.value) + ")";
        break;
      case ArgOp::kEqualOwnPid:
        out += arg + " == getpid()";
        break;
    }
  }
  return out.empty() ? "-" : out;
}

std::string errno_text(const char* operation) {
  return std::string(operation) + ": " + strerrorname_np(errno);
}

// Step 1. Root in the container is root on the host's kernel (user namespaces are off by
// default in Docker); nothing the gatekeeper does needs it.
Result<void> refuse_root() {
  uid_t real = 0, effective = 0, saved = 0;
  if (getresuid(&real, &effective, &saved) != 0) return Error{errno_text("getresuid")};
  if (real == 0 || effective == 0 || saved == 0) {
    return Error{"refusing to run as uid 0; run as an unprivileged user (the image uses 65532:65532)"};
  }
  return {};
}

// Step 2. prctl(2): execve can never grant privileges again (setuid bits, file capabilities);
// also what seccomp(2) requires of a process without CAP_SYS_ADMIN.
Result<void> set_no_new_privs() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Error{errno_text("prctl(PR_SET_NO_NEW_PRIVS)")};
  return {};
}

bool has_effective(unsigned capability) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[capability / 32].effective & (1u << (capability % 32))) != 0;
}

// Step 3. capabilities(7). PR_CAPBSET_DROP needs CAP_SETPCAP; a process that lacks it (any user
// started without capabilities) cannot empty its bounding set. The bounding set only limits what
// execve can add, and execve is forbidden by no_new_privs and by the filter, so a bounding set
// that cannot be emptied is left as it is; one that can must be emptied.
Result<void> drop_capabilities() {
  int last = CAP_LAST_CAP;
  // The running kernel may know more capabilities than these headers.
  while (prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0) ++last;
  if (has_effective(CAP_SETPCAP)) {
    for (int cap = 0; cap <= last; ++cap) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
        return Error{errno_text(("prctl(PR_CAPBSET_DROP, " + std::to_string(cap) + ")").c_str())};
      }
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return Error{errno_text("prctl(PR_CAP_AMBIENT_CLEAR_ALL)")};
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (syscall(SYS_capset, &header, data) != 0) return Error{errno_text("capset(all zero)")};
  return {};
}

Result<void> set_limit(int resource, const char* name, rlim_t value) {
  rlimit current{};
  if (getrlimit(resource, &current) != 0) return Error{errno_text(("getrlimit(" + std::string(name) + ")").c_str())};
  // Without CAP_SYS_RESOURCE (dropped in step 3) a hard limit can only go down.
  if (current.rlim_max != RLIM_INFINITY && current.rlim_max < value) {
    return Error{std::string("setrlimit(") + name + ", " + std::to_string(value) + "): the hard limit is " +
                 std::to_string(current.rlim_max) + "; lower the socket caps or raise the limit"};
  }
  const rlimit wanted{value, value};
  if (setrlimit(resource, &wanted) != 0) {
    return Error{errno_text(("setrlimit(" + std::string(name) + ", " + std::to_string(value) + ")").c_str())};
  }
  return {};
}

// Step 4. setrlimit(2). RLIMIT_NPROC counts every task (process or thread) of the real uid, in
// this user namespace, and fork/clone fail with EAGAIN once the count reaches the limit: 0 means
// this process can create neither processes nor threads. Other processes of the same uid keep
// running; only their own limit governs their forks.
#ifdef GATEKEEPER_TEST_BUILD
std::optional<std::uint64_t> g_test_descriptor_limit;
#endif

Result<void> set_limits(const ServeOptions& options) {
  if (auto r = set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0); !r) return r;
  std::uint64_t nofile = descriptor_limit(options);
#ifdef GATEKEEPER_TEST_BUILD
  if (g_test_descriptor_limit) nofile = *g_test_descriptor_limit;
#endif
  if (auto r = set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", nofile); !r) return r;
  if (auto r = set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", 0); !r) return r;
  return {};
}

// Step 5. prctl(2) PR_SET_DUMPABLE 0: no core dump, /proc/<pid>/ files owned by root, and no
// ptrace attach by processes of the same uid (ptrace(2) "ptrace access mode checking").
Result<void> set_non_dumpable() {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return Error{errno_text("prctl(PR_SET_DUMPABLE, 0)")};
  return {};
}

struct FilterDeleter {
  void operator()(void* ctx) const noexcept { seccomp_release(ctx); }
};

Result<void> libseccomp_error(const char* operation, int rc) {
  return Error{std::string(operation) + ": " + strerrorname_np(-rc)};
}

// Step 6. libseccomp: only the native architecture (x86_64); any other (i386's socketcall, x32)
// takes the bad-architecture action, which is also a kill.
Result<void> load_filter() {
  std::unique_ptr<void, FilterDeleter> ctx(seccomp_init(SCMP_ACT_KILL_PROCESS));
  if (!ctx) return Error{"seccomp_init(SCMP_ACT_KILL_PROCESS): failed"};
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc != 0) {
    return libseccomp_error("seccomp_attr_set(SCMP_FLTATR_ACT_BADARCH)", rc);
  }
  // Every thread gets the filter, should a library ever have started one (seccomp(2) TSYNC).
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 1); rc != 0) {
    return libseccomp_error("seccomp_attr_set(SCMP_FLTATR_CTL_TSYNC)", rc);
  }
  const std::uint64_t pid = static_cast<std::uint64_t>(getpid());
  for (const SeccompRule& rule : kTable) {
    const std::string name(rule.name);
    const int number = seccomp_syscall_resolve_name(name.c_str());
    if (number == __NR_SCMP_ERROR) return Error{"seccomp: unknown syscall " + name};
    std::vector<scmp_arg_cmp> checks;
    for (const ArgCheck& check : rule.args) {
      if (check.index == kNoArgument) continue;
      switch (check.op) {
        case ArgOp::kEqual:
          checks.push_back(SCMP_CMP(check.index, SCMP_CMP_EQ, check.value));
          break;
        case ArgOp::kMaskedEqual:
          checks.push_back(SCMP_CMP(check.index, SCMP_CMP_MASKED_EQ, check.mask, check.value));
          break;
        case ArgOp::kEqualOwnPid:
          checks.push_back(SCMP_CMP(check.index, SCMP_CMP_EQ, pid));
          break;
      }
    }
    const int rc = seccomp_rule_add_array(ctx.get(), libseccomp_action(rule.action), number,
                                          static_cast<unsigned>(checks.size()), checks.data());
    if (rc != 0) return libseccomp_error(("seccomp_rule_add(" + name + ")").c_str(), rc);
  }
  if (int rc = seccomp_load(ctx.get()); rc != 0) return libseccomp_error("seccomp_load", rc);
  return {};
}

}  // namespace

std::span<const SeccompRule> seccomp_table() { return kTable; }

std::string seccomp_table_text() {
  std::string out =
      "# gatekeeper serve seccomp allowlist (x86_64); anything else: kill-process (SIGSYS)\n"
      "# name\taction\targuments\treason\n";
  for (const SeccompRule& rule : kTable) {
    out += std::string(rule.name) + "\t" + action_text(rule.action) + "\t" + checks_text(rule) +
           "\t" + std::string(rule.reason) + "\n";
  }
  return out;
}

std::uint64_t descriptor_limit(const ServeOptions& options) {
  // Accepted sockets: at most the cap per listener, plus the one an over-cap accept holds
  // until it closes it.
  const std::uint64_t accepted = options.max_corridor_sockets + options.max_window_sockets +
                                 options.max_control_sockets + kListenerCount;
  // One upstream per tunnel (corridor), and the window's upstream pool.
  const std::uint64_t upstream = options.max_tunnels + options.max_upstream_sockets;
  // The corridor's relay in the kernel: two pipes (four descriptors) per tunnel.
  const std::uint64_t relay_pipes = 4 * options.max_tunnels;
  // c-ares: one UDP and one TCP socket per name server; resolv.conf servers when none given.
  constexpr std::uint64_t kResolvConfServers = 8;
  const std::uint64_t dns = 2 * std::max<std::uint64_t>(options.dns_servers.size(), kResolvConfServers);
  // stdio, epoll, the libuv signal pipes and eventfd, libuv's reserved EMFILE descriptor, the
  // three listeners, the transient netlink socket of getifaddrs, and headroom.
  constexpr std::uint64_t kFixed = 64;
  // Each listener's reserve descriptor for the EMFILE refusal (serve/listener.h).
  constexpr std::uint64_t kReserves = kListenerCount;
  return accepted + upstream + relay_pipes + dns + kFixed + kReserves;
}

// Lazy glibc work that would otherwise run under the filter:
// - stdio allocates a stream's buffer on first use with fstat(2) and ioctl(TCGETS)
//   (_IO_file_doallocate), and the ready line is printed after confinement: a static buffer
//   means no allocation. stderr is unbuffered and never allocates.
// - the first gmtime_r/localtime_r (BoringSSL's certificate time checks) runs tzset, which opens
//   /etc/localtime: done now, so openat never happens after confinement.
// - glibc's qsort asks sysconf(_SC_PHYS_PAGES), i.e. sysinfo(2), the first time it sorts 1 KiB
//   or more, and keeps the answer: BoringSSL sorts the CA store when the window's first TLS
//   session loads it, after confinement, so the first large sort happens now.
static void prepare_libc() {
  static char stdout_buffer[BUFSIZ];
  std::setvbuf(stdout, stdout_buffer, _IOLBF, sizeof stdout_buffer);
  tzset();
  std::array<int, 1024> warm{};
  std::qsort(warm.data(), warm.size(), sizeof(int), [](const void* a, const void* b) {
    return *static_cast<const int*>(a) - *static_cast<const int*>(b);
  });
}

Result<void> confine(const ServeOptions& options) {
  if (auto r = refuse_root(); !r) return r;
  prepare_libc();
  if (auto r = set_no_new_privs(); !r) return r;
  if (auto r = drop_capabilities(); !r) return r;
  if (auto r = set_limits(options); !r) return r;
  if (auto r = set_non_dumpable(); !r) return r;
  return load_filter();
}

#ifdef GATEKEEPER_TEST_BUILD
bool take_test_descriptor_limit(std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), kTestDescriptorLimitFlag);
  if (it == args.end()) return true;
  if (std::next(it) == args.end()) return false;
  const std::string& value = *std::next(it);
  std::uint64_t n = 0;
  if (value.empty() || value.size() > 6) return false;
  for (char c : value) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  g_test_descriptor_limit = n;
  args.erase(it, std::next(it, 2));
  return true;
}

bool take_test_forbidden_syscall_flag(std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), kTestForbiddenSyscallFlag);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

void arm_test_forbidden_syscall(uv_loop_t* loop) {
  static uv_timer_t timer;
  uv_timer_init(loop, &timer);
  uv_timer_start(
      &timer,
      [](uv_timer_t* t) noexcept {
        // pid 0 never exists: without the filter this is ESRCH and nothing is traced.
        syscall(SYS_ptrace, PTRACE_PEEKDATA, 0, 0, 0);
        std::fputs("gatekeeper: test: ptrace(2) returned; the filter is not loaded\n", stderr);
        uv_close(loop::as_handle(t), nullptr);
      },
      0, 0);
}
#endif

#if defined(GATEKEEPER_TEST_BUILD) && defined(GK_SANITIZER_BUILD)
bool take_unsafe_test_no_confinement_flag(std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), kUnsafeTestNoConfinementFlag);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}
#endif

}  // namespace appliance::serve
