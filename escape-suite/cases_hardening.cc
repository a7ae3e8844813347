// Host exhaustion and crash handling the container flags must hold: core dumps are off for good
// (`--ulimit core=0:0`: a crash never reaches the host's core_pattern, whose helper runs as root on
// the host), and the CPU quota holds while the space spins every core it can see, with the
// corridor still answering.
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <tuple>
#include <vector>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "policy/number.h"

namespace escape {
namespace {

inline constexpr int kSpinMs = 3000;
inline constexpr int kMaxSpinners = 256;
// Accounting jitter of CFS bandwidth control: one period (100 ms) of overrun per second at most.
inline constexpr double kQuotaSlack = 1.15;

std::string limit_text(rlim_t v) { return v == RLIM_INFINITY ? "unlimited" : std::to_string(v); }

std::string trim(std::string v) {
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

// The space's CPU quota in nano CPUs from its own cgroup (v2 cpu.max, v1 cfs files); 0: none.
std::uint64_t cgroup_quota(std::string& evidence) {
  const FileRead v2 = read_bounded("/sys/fs/cgroup/cpu.max", 128);
  if (v2.ok) {
    evidence = "cpu.max = " + trim(v2.data);
    if (v2.data.rfind("max", 0) == 0) return 0;
    // "QUOTA PERIOD" in microseconds; anything else is no quota this case can compare.
    const std::string line = trim(v2.data);
    const std::size_t sp = line.find(' ');
    const std::optional<std::uint64_t> quota =
        policy::parse_number<std::uint64_t>(std::string_view(line).substr(0, sp));
    const std::optional<std::uint64_t> period =
        sp == std::string::npos
            ? std::nullopt
            : policy::parse_number<std::uint64_t>(std::string_view(line).substr(sp + 1));
    if (!quota || !period || *period == 0) return 0;
    return *quota * 1000000000ull / *period;
  }
  for (const char* dir : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
    const FileRead q = read_bounded(std::string(dir) + "/cpu.cfs_quota_us", 64);
    const FileRead p = read_bounded(std::string(dir) + "/cpu.cfs_period_us", 64);
    if (!q.ok || !p.ok) continue;
    evidence = std::string(dir) + " cfs_quota_us = " + trim(q.data) + ", cfs_period_us = " + trim(p.data);
    const long long quota = policy::parse_number<long long>(trim(q.data)).value_or(0);
    const long long period = policy::parse_number<long long>(trim(p.data)).value_or(0);
    if (quota <= 0 || period <= 0) return 0;
    return static_cast<std::uint64_t>(quota) * 1000000000ull / static_cast<std::uint64_t>(period);
  }
  evidence = "no cpu controller file readable";
  return 0;
}

int visible_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

double cpu_seconds(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

struct Spin {
  int spinners = 0;
  double cpu = 0;   // CPU seconds the spinners used
  double wall = 0;  // seconds they ran
  std::string error;
};

// Starts one busy child per visible core (at least two), lets them spin for kSpinMs while
// `during` runs, then kills and reaps them, summing their CPU time.
Spin spin_all_cores(const std::function<void()>& during) {
  Spin s;
  s.spinners = std::min(std::max(visible_cpus(), 2), kMaxSpinners);
  std::vector<pid_t> kids;
  const std::int64_t start = now_ms();
  for (int i = 0; i < s.spinners; ++i) {
    const pid_t p = ::fork();
    if (p < 0) {
      s.error = "fork: " + errno_name(errno);
      break;
    }
    if (p == 0) {
      volatile std::uint64_t x = 0;
      for (;;) x = x + 1;
    }
    kids.push_back(p);
  }
  if (during) during();
  while (now_ms() - start < kSpinMs) ::usleep(20000);
  for (const pid_t p : kids) ::kill(p, SIGKILL);
  s.wall = static_cast<double>(now_ms() - start) / 1000.0;
  for (const pid_t p : kids) {
    int status = 0;
    rusage r{};
    if (::wait4(p, &status, 0, &r) == p) s.cpu += cpu_seconds(r);
  }
  return s;
}

// The positive control of the protocol cases: the space can still make the sockets it needs.
Outcome tcp_udp_control() {
  for (const auto& [family, type, proto] : {std::tuple{AF_INET, SOCK_STREAM, static_cast<int>(IPPROTO_TCP)},
                                            std::tuple{AF_INET6, SOCK_DGRAM, static_cast<int>(IPPROTO_UDP)}}) {
    const int fd = ::socket(family, type | SOCK_CLOEXEC, proto);
    if (fd < 0) {
      return inconclusive("control: socket(" + std::to_string(family) + ", " +
                          std::to_string(type) + ", " + std::to_string(proto) +
                          ") failed: " + errno_name(errno));
    }
    ::close(fd);
  }
  return pass("");
}

// Only the profile's own errno proves the profile refused; any other errno means the call reached
// the kernel (which may already have loaded a module for the protocol).
Outcome profile_refused(const Options& opts, const std::string& what, long rc, int err) {
  if (rc >= 0) return fail(what + " succeeded");
  if (err == opts.seccomp_errno) return pass(what + ": " + errno_name(err) + " (the profile's errno)");
  return fail(what + ": " + errno_name(err) + ", not the profile's " + errno_name(opts.seccomp_errno) +
              ": the kernel saw the call");
}

struct Protocol {
  const char* id;
  int family;
  int type;
  unsigned long protocol;
  const char* why;
};

const Protocol kProtocols[] = {
    {"net.proto-sctp", AF_INET, SOCK_STREAM, 132, "SCTP: autoloads sctp.ko (CVE-2019-8956, CVE-2021-23133)"},
    {"net.proto-sctp-seqpacket", AF_INET6, SOCK_SEQPACKET, 132, "SCTP one-to-many sockets"},
    {"net.proto-l2tp", AF_INET, SOCK_DGRAM, 115, "L2TP/IP: autoloads l2tp_ip (CVE-2016-10200)"},
    {"net.proto-udplite", AF_INET, SOCK_DGRAM, 136, "UDP-Lite: a separate protocol table (CVE-2016-10229 era)"},
    {"net.proto-udplite6", AF_INET6, SOCK_DGRAM, 136, "UDP-Lite over IPv6"},
    {"net.proto-mptcp", AF_INET, SOCK_STREAM, 262, "MPTCP: a large young protocol"},
    {"net.proto-icmp-ping", AF_INET, SOCK_DGRAM, 1, "ICMP ping sockets: tunnels, CVE-2017-2671"},
    {"net.proto-icmpv6-ping", AF_INET6, SOCK_DGRAM, 58, "ICMPv6 ping sockets"},
    {"net.proto-dccp", AF_INET, SOCK_DCCP, 33, "DCCP: autoloads dccp.ko (CVE-2017-6074)"},
    {"net.proto-tcp-in-dgram", AF_INET, SOCK_DGRAM, 6, "a protocol that does not belong to the type"},
    {"net.proto-tcp-high-bits", AF_INET, SOCK_STREAM, (1UL << 32) | 6, "protocol 6 with a high bit the kernel drops"},
    {"net.proto-udp-high-bits", AF_INET6, SOCK_DGRAM, (1UL << 32) | 17, "protocol 17 with a high bit the kernel drops"},
    {"net.proto-zero-high-bits", AF_INET, SOCK_STREAM, 1UL << 32, "protocol 0 with a high bit the kernel drops"},
    {"net.proto-raw-number", AF_INET, SOCK_DGRAM, 255, "IPPROTO_RAW as a datagram protocol"},
    {"net.proto-negative", AF_INET, SOCK_STREAM, 0xFFFFFFFFUL, "protocol -1 as the kernel's int"},
};

struct IoctlCase {
  const char* id;
  unsigned long request;
  const char* why;
};

const IoctlCase kIoctls[] = {
    {"syscall.ioctl-tiocsti", 0x5412, "type commands into a terminal another process reads (CVE-2017-5226)"},
    {"syscall.ioctl-tiocsti-high-bits", (1UL << 32) | 0x5412,
     "TIOCSTI with a high bit set: the kernel reads 32 bits, a 64-bit filter would miss it (CVE-2019-10063)"},
    {"syscall.ioctl-tiocsti-all-high-bits", (0xFFFFFFFFUL << 32) | 0x5412, "TIOCSTI with every high bit set"},
    {"syscall.ioctl-tioclinux", 0x541C, "console selection paste: input injection like TIOCSTI"},
    {"syscall.ioctl-tioclinux-high-bits", (1UL << 32) | 0x541C, "TIOCLINUX with a high bit set"},
};

}  // namespace

void add_hardening_cases(std::vector<Case>& out) {
  for (const Protocol& p : kProtocols) {
    add_case(out, p.id, p.why,
             "socket(" + std::to_string(p.family) + ", " + std::to_string(p.type) + ", " + std::to_string(p.protocol) + ")",
             "the profile's own errno (never the kernel's EPROTONOSUPPORT: that means the call reached the "
             "protocol table and may have loaded a module); control: TCP and UDP sockets by protocol number work",
             [p](Context& ctx) {
               if (const Outcome c = tcp_udp_control(); c.verdict != Verdict::kPass) return c;
               const long fd = ::syscall(SYS_socket, static_cast<unsigned long>(p.family),
                                         static_cast<unsigned long>(p.type | SOCK_CLOEXEC), p.protocol);
               const int err = errno;
               if (fd >= 0) ::close(static_cast<int>(fd));
               return profile_refused(ctx.opts, "socket", fd, err);
             });
  }
  for (const IoctlCase& c : kIoctls) {
    add_case(out, c.id, c.why, "ioctl(-1, request) by raw syscall",
             "the profile's own errno; control: TCGETS on the same bad descriptor reaches the kernel (EBADF)",
             [c](Context& ctx) {
               errno = 0;
               const long control = ::syscall(SYS_ioctl, -1L, static_cast<unsigned long>(TCGETS), 0L);
               if (control != -1 || errno != EBADF) {
                 return inconclusive("control: ioctl(-1, TCGETS) gave " + errno_name(errno) + ", not EBADF");
               }
               const long rc = ::syscall(SYS_ioctl, -1L, c.request, 0L);
               return profile_refused(ctx.opts, "ioctl", rc, errno);
             });
  }

  add_case(out, "res.core-limit-zero", "dump memory through the host's core_pattern helper",
           "getrlimit(RLIMIT_CORE)", "soft and hard limit 0 (--ulimit core=0:0)", [](Context&) {
             rlimit r{};
             if (::getrlimit(RLIMIT_CORE, &r) != 0) return inconclusive("getrlimit: " + errno_name(errno));
             const std::string ev = "RLIMIT_CORE soft " + limit_text(r.rlim_cur) + ", hard " + limit_text(r.rlim_max);
             if (r.rlim_cur == 0 && r.rlim_max == 0) return pass(ev);
             return fail(ev + " (the hard limit lets the space raise it)");
           });
  add_case(out, "res.core-raise-hard-refused", "raise the core limit back before crashing",
           "in a child: setrlimit(RLIMIT_CORE, unlimited/unlimited)",
           "EPERM: raising a hard limit needs CAP_SYS_RESOURCE, which the space lacks", [](Context&) {
             const ChildOutcome c = run_in_child(
                 [] {
                   const rlimit up{RLIM_INFINITY, RLIM_INFINITY};
                   if (::setrlimit(RLIMIT_CORE, &up) == 0) return std::string("raised");
                   return std::to_string(errno);
                 },
                 3000);
             if (!c.exited) return inconclusive("child died (signal " + std::to_string(c.signal) + ")");
             if (c.report == "raised") return fail("setrlimit(RLIMIT_CORE, unlimited) succeeded");
             const std::optional<int> read = policy::parse_number<int>(c.report);
             if (!read) {
               return inconclusive("setrlimit(RLIMIT_CORE, unlimited): unreadable child report: " +
                                   c.report);
             }
             const int err = *read;
             if (err == EPERM) return pass("setrlimit(RLIMIT_CORE, unlimited): EPERM");
             return fail("setrlimit(RLIMIT_CORE, unlimited): " + errno_name(err) + " (expected EPERM)");
           });
  add_case(out, "res.core-raise-soft-refused", "raise only the soft core limit (allowed up to the hard one)",
           "in a child: setrlimit(RLIMIT_CORE, 1 MiB soft, current hard)",
           "EINVAL: the hard limit is 0, so no soft value above 0 exists", [](Context&) {
             const ChildOutcome c = run_in_child(
                 [] {
                   rlimit r{};
                   if (::getrlimit(RLIMIT_CORE, &r) != 0) return std::string("getrlimit ") + std::to_string(errno);
                   r.rlim_cur = 1 << 20;
                   if (::setrlimit(RLIMIT_CORE, &r) == 0) return std::string("raised");
                   return std::to_string(errno);
                 },
                 3000);
             if (!c.exited) return inconclusive("child died (signal " + std::to_string(c.signal) + ")");
             if (c.report == "raised") return fail("soft RLIMIT_CORE raised to 1 MiB: the hard limit is not 0");
             const int err =
                 policy::parse_number<int>(c.report).value_or(0);  // "getrlimit N": not EINVAL
             if (err == EINVAL) return pass("setrlimit(RLIMIT_CORE, 1 MiB soft): EINVAL (hard is 0)");
             return fail("setrlimit(RLIMIT_CORE, 1 MiB soft): " + c.report + " (expected EINVAL)");
           });
  add_case(out, "res.crash-dumps-no-core", "hand a crash to the host's core_pattern helper (root on the host)",
           "a child tries to raise RLIMIT_CORE, makes itself dumpable, moves to /tmp and calls abort()",
           "the child dies of SIGABRT (control: the crash happened) without the core-dumped bit, and no "
           "core file appears", [](Context&) {
             const FileRead pattern = read_bounded("/proc/sys/kernel/core_pattern", 256);
             const std::string pat = pattern.ok ? trim(pattern.data) : "unreadable";
             const pid_t p = ::fork();
             if (p < 0) return inconclusive("fork: " + errno_name(errno));
             if (p == 0) {
               const rlimit up{RLIM_INFINITY, RLIM_INFINITY};
               (void)::setrlimit(RLIMIT_CORE, &up);
               if (::chdir("/tmp") != 0) ::_exit(3);
               ::signal(SIGABRT, SIG_DFL);
               ::abort();
             }
             int status = 0;
             for (int i = 0; i < 500; ++i) {
               const pid_t w = ::waitpid(p, &status, WNOHANG);
               if (w == p) break;
               if (i == 499) {
                 ::kill(p, SIGKILL);
                 ::waitpid(p, &status, 0);
                 return inconclusive("the crashing child did not die within 5 s");
               }
               ::usleep(10000);
             }
             struct stat st{};
             const std::string core_file = "/tmp/core";
             const std::string core_pid = "/tmp/core." + std::to_string(p);
             const bool file = ::stat(core_file.c_str(), &st) == 0 || ::stat(core_pid.c_str(), &st) == 0;
             ::unlink(core_file.c_str());
             ::unlink(core_pid.c_str());
             const std::string ev = "core_pattern '" + pat + "'";
             if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
               return inconclusive(ev + "; the child did not die of SIGABRT (status " + std::to_string(status) + ")");
             }
             if (WCOREDUMP(status)) return fail(ev + "; the kernel dumped core (status has the core bit)");
             if (file) return fail(ev + "; a core file appeared in /tmp");
             return pass(ev + "; SIGABRT without a core dump, no core file");
           });
  add_case(out, "res.cpu-quota-set", "take every core of the host", "read the space's CPU quota from its cgroup",
           "a quota (not max/-1), equal to --cpu-limit when given", [](Context& ctx) {
             std::string ev;
             const std::uint64_t q = cgroup_quota(ev);
             if (q == 0) return fail(ev + " (no CPU quota)");
             if (ctx.opts.cpu_limit != 0) {
               const std::uint64_t diff = q > ctx.opts.cpu_limit ? q - ctx.opts.cpu_limit : ctx.opts.cpu_limit - q;
               if (diff > ctx.opts.cpu_limit / 100) {
                 return fail(ev + " (runner expected --cpu-limit " + std::to_string(ctx.opts.cpu_limit) + ")");
               }
             }
             return pass(ev + " = " + fixed2(static_cast<double>(q) / 1e9) + " CPUs");
           });
  add_case(
      out, "res.cpu-spin-held", "starve the host and the gatekeeper by spinning every core",
      "one busy child per visible core (at least two) for 3 s; their CPU time from wait4",
      "CPU seconds per wall second stay at or below the quota (+15%), while the spinners did run "
      "(control: at least a quarter of the quota)",
      [](Context& ctx) {
        if (const Outcome g = ctx.opts.allow_exhaustion
                                  ? pass("")
                                  : inconclusive("not run: needs --allow-exhaustion");
            g.verdict != Verdict::kPass) {
          return g;
        }
        std::string qev;
        const std::uint64_t q = cgroup_quota(qev);
        if (q == 0) return fail(qev + " (no CPU quota to hold)");
        const double quota = static_cast<double>(q) / 1e9;
        const int cores = visible_cpus();
        if (quota >= static_cast<double>(cores)) {
          return not_applicable(qev + ": the quota (" + fixed2(quota) + ") is not below the " +
                                std::to_string(cores) +
                                " visible cores, so spinning cannot exceed it");
        }
        const Spin s = spin_all_cores(nullptr);
        if (!s.error.empty()) return inconclusive("spinners: " + s.error);
        const double rate = s.wall > 0 ? s.cpu / s.wall : 0;
        const std::string ev = std::to_string(s.spinners) + " spinners used " + fixed2(s.cpu) +
                               " CPU s in " + fixed2(s.wall) + " s = " + fixed2(rate) +
                               " CPUs; quota " + fixed2(quota) + " (" + qev + ")";
        if (rate < quota * 0.25) {
          return inconclusive(ev + ": the spinners barely ran (a busy host?)");
        }
        if (rate > quota * kQuotaSlack + 0.05) return fail(ev + ": above the quota");
        return pass(ev);
      });
  add_case(out, "res.cpu-spin-corridor-answers", "starve the corridor by spinning every core",
           "while one busy child per core spins, CONNECT to --allowed-target through the corridor",
           "the corridor answers within 2 s (its own CPU weight), as it does when idle (control)", [](Context& ctx) {
             if (!ctx.opts.allow_exhaustion) return inconclusive("not run: needs --allow-exhaustion");
             if (ctx.opts.allowed_target.empty()) return inconclusive("the runner passed no --allowed-target");
             const Control& tcp = tcp_control(ctx);
             if (!tcp.works) return inconclusive(tcp.evidence);
             std::int64_t idle_start = now_ms();
             const HttpReply idle = corridor_connect(ctx, ctx.opts.allowed_target);
             const std::int64_t idle_ms = now_ms() - idle_start;
             if (!idle.got) return inconclusive("control: the idle corridor did not answer (" + errno_name(idle.err) + ")");
             HttpReply busy;
             std::int64_t busy_ms = 0;
             const Spin s = spin_all_cores([&] {
               ::usleep(500000);  // let the spinners reach the quota first
               const std::int64_t t = now_ms();
               busy = corridor_connect(ctx, ctx.opts.allowed_target);
               busy_ms = now_ms() - t;
             });
             const std::string ev = "idle: " + std::to_string(idle.status) + " in " + std::to_string(idle_ms) +
                                    " ms; spinning (" + std::to_string(s.spinners) + " children, " + fixed2(s.cpu) +
                                    " CPU s): " + (busy.got ? std::to_string(busy.status) : errno_name(busy.err)) +
                                    " in " + std::to_string(busy_ms) + " ms";
             if (!s.error.empty()) return inconclusive(ev + "; spinners: " + s.error);
             if (!busy.got || busy_ms > 2000) return fail(ev + ": the corridor was starved");
             return pass(ev);
           });
}

}  // namespace escape
