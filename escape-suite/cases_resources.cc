// Exhaustion: the space's limits hold and only the offender pays. The attacking cases (fork bomb,
// memory, disk, log flood) run only with --allow-exhaustion, which the runner passes inside a
// space; on a developer's machine they report INCONCLUSIVE without doing anything.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "policy/number.h"

namespace escape {
namespace {

inline constexpr std::uint64_t kMiB = 1 << 20;
inline constexpr std::uint64_t kMaxForks = 65536;          // hard stop whatever the limit
inline constexpr std::uint64_t kMaxFillBytes = 16ull << 30;  // hard stop for a disk fill
inline constexpr std::int64_t kMaxFloodMs = 120000;           // a slow log reader cannot wedge us

std::string first_readable(std::initializer_list<const char*> paths, std::string& which) {
  for (const char* p : paths) {
    const FileRead f = read_bounded(p, 256);
    if (f.ok) {
      which = p;
      std::string v = f.data;
      while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
      return v;
    }
  }
  return "";
}

Outcome limit_file(std::initializer_list<const char*> paths, std::uint64_t expected, const char* flag) {
  std::string which;
  const std::string v = first_readable(paths, which);
  if (which.empty()) return fail("no limit file readable");
  const std::string ev = which + " = " + v;
  if (v == "max" || v.empty() || v == "9223372036854771712") return fail(ev + " (unlimited)");
  if (expected != 0 && policy::parse_number<std::uint64_t>(v) != expected) {
    return fail(ev + " (runner expected " + std::string(flag) + " " + std::to_string(expected) + ")");
  }
  return pass(ev);
}

Outcome needs_exhaustion(const Options& opts) {
  if (opts.allow_exhaustion) return pass("");
  return inconclusive("not run: needs --allow-exhaustion (the runner passes it inside a space only)");
}

// Writes 1 MiB chunks to `path` until an error or `cap` bytes; returns "bytes errno".
std::string fill(const std::string& path, std::uint64_t cap) {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return "0 " + std::to_string(errno);
  static char chunk[1 << 20];
  std::memset(chunk, 'x', sizeof chunk);
  std::uint64_t written = 0;
  int err = 0;
  while (written < cap) {
    const ssize_t n = ::write(fd, chunk, sizeof chunk);
    if (n < 0) {
      err = errno;
      break;
    }
    written += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return std::to_string(written) + " " + std::to_string(err);
}

Outcome fill_case(const std::string& path, std::uint64_t cap) {
  const ChildOutcome c = run_in_child([&] { return fill(path, cap); }, 300000);
  ::unlink(path.c_str());
  if (!c.exited) return inconclusive("filler died (signal " + std::to_string(c.signal) + ")");
  const std::optional<ChildNumbers> n = child_numbers(c.report);
  if (!n || n->first < 0) return inconclusive("filler: unreadable report: " + c.report);
  const auto bytes = static_cast<std::uint64_t>(n->first);
  const int err = n->second;
  const std::string ev = path + ": " + std::to_string(bytes / kMiB) + " MiB then " + (err ? errno_name(err) : "no error");
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) return pass(ev + "; deleted");
  return fail(ev + " (no bound before " + std::to_string(cap / kMiB) + " MiB)");
}

// A volume bounded by its own filesystem: that filesystem is no larger than the quota, so its
// ENOSPC is the limit's and never the host disk's. Then the fill.
Outcome bounded_fill_case(const std::string& dir, std::uint64_t quota) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return fail("statvfs " + dir + ": " + errno_name(errno));
  const std::uint64_t total = static_cast<std::uint64_t>(fs.f_blocks) * fs.f_frsize;
  if (total > quota) {
    return fail(dir + " sits on a " + std::to_string(total / kMiB) + " MiB filesystem, larger than the " +
                std::to_string(quota / kMiB) + " MiB quota: filling it fills a shared disk");
  }
  const Outcome o = fill_case(dir + "/openchamber-escape-fill", quota + 64 * kMiB);
  if (o.verdict != Verdict::kPass) return o;
  return pass(o.evidence + " (own filesystem of " + std::to_string(total / kMiB) + " MiB)");
}

}  // namespace

void add_resource_cases(std::vector<Case>& out) {
  add_case(out, "res.pids-limit-set", "exhaust the host's pids", "read pids.max of the space's cgroup",
           "a number (equal to --pids-limit when given), not max", [](Context& ctx) {
             return limit_file({"/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"},
                               ctx.opts.pids_limit, "--pids-limit");
           });
  add_case(out, "res.memory-limit-set", "exhaust the host's memory", "read memory.max",
           "a number (equal to --memory-limit when given), not max", [](Context& ctx) {
             return limit_file({"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
                               ctx.opts.memory_limit, "--memory-limit");
           });
  add_case(out, "res.no-swap", "spill past the memory limit into host swap",
           "read memory.swap.max (v1: memory.memsw.limit_in_bytes)", "0 (v1: equal to the memory limit)", [](Context&) {
             std::string which;
             const std::string v = first_readable({"/sys/fs/cgroup/memory.swap.max"}, which);
             if (!which.empty()) return v == "0" ? pass(which + " = 0") : fail(which + " = " + v);
             // cgroup v1: memory+swap limit equal to the memory limit means no swap.
             std::string w1, w2;
             const std::string memsw = first_readable({"/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"}, w1);
             const std::string mem = first_readable({"/sys/fs/cgroup/memory/memory.limit_in_bytes"}, w2);
             if (w1.empty()) return not_applicable("no swap limit file: swap accounting is off on this kernel");
             const std::string ev = "memsw " + memsw + ", memory " + mem;
             return memsw == mem ? pass(ev) : fail(ev);
           });
  add_case(out, "res.fork-bomb-held", "fork bomb the host",
           "a child in its own process group forks sleepers until fork fails, then kills them all",
           "fork fails with EAGAIN below --pids-limit", [](Context& ctx) {
             if (const Outcome g = needs_exhaustion(ctx.opts); g.verdict != Verdict::kPass) return g;
             if (ctx.opts.pids_limit == 0) return inconclusive("the runner passed no --pids-limit");
             const std::uint64_t cap = std::min<std::uint64_t>(ctx.opts.pids_limit + 64, kMaxForks);
             const ChildOutcome c = run_in_child(
                 [cap] {
                   std::vector<pid_t> kids;
                   kids.reserve(cap);
                   int err = 0;
                   while (kids.size() < cap) {
                     const pid_t p = ::fork();
                     if (p < 0) {
                       err = errno;
                       break;
                     }
                     if (p == 0) {
                       for (;;) ::pause();
                     }
                     kids.push_back(p);
                   }
                   for (const pid_t p : kids) ::kill(p, SIGKILL);
                   for (const pid_t p : kids) ::waitpid(p, nullptr, 0);
                   return std::to_string(kids.size()) + " " + std::to_string(err);
                 },
                 120000, true);
             if (c.report.empty()) return inconclusive("bomb supervisor died (signal " + std::to_string(c.signal) + ")");
             const std::optional<ChildNumbers> counted = child_numbers(c.report);
             if (!counted || counted->first < 0) {
               return inconclusive("bomb supervisor: unreadable report: " + c.report);
             }
             const auto n = static_cast<std::uint64_t>(counted->first);
             const int err = counted->second;
             const std::string ev =
                 std::to_string(n) + " forks, then " + (err ? errno_name(err) : "no error");
             if (err != EAGAIN) return fail(ev + " (not held by the pids limit)");
             if (n >= ctx.opts.pids_limit) return fail(ev + " (at or above --pids-limit " + std::to_string(ctx.opts.pids_limit) + ")");
             return pass(ev + "; all killed");
           });
  add_case(out, "res.memory-kills-only-offender", "OOM the host or the space's other processes",
           "a child allocates and touches 16 MiB blocks until killed", "the child dies by SIGKILL below "
           "twice --memory-limit; this process survives and can still fork", [](Context& ctx) {
             if (const Outcome g = needs_exhaustion(ctx.opts); g.verdict != Verdict::kPass) return g;
             if (ctx.opts.memory_limit == 0) return inconclusive("the runner passed no --memory-limit");
             const std::uint64_t cap = ctx.opts.memory_limit * 2;
             const ChildOutcome c = run_in_child(
                 [cap] {
                   std::uint64_t total = 0;
                   while (total < cap) {
                     void* p = ::mmap(nullptr, 16 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                     if (p == MAP_FAILED) return "mmap failed at " + std::to_string(total / kMiB) + " MiB";
                     std::memset(p, 0x5a, 16 * kMiB);
                     total += 16 * kMiB;
                   }
                   return std::string("allocated ") + std::to_string(total / kMiB) + " MiB unharmed";
                 },
                 180000);
             const ChildOutcome alive = run_in_child([] { return std::string("alive"); }, 5000);
             if (alive.report != "alive") return fail("after the OOM this process cannot fork");
             // Our own timeout kill is SIGKILL too: it proves nothing about the memory limit.
             if (c.timed_out) return fail("offender still allocating after 180 s; the suite killed it, not the limit");
             if (c.signal == SIGKILL) return pass("offender killed by SIGKILL; survivor forks");
             return fail("offender not killed: " + c.report);
           });
  add_case(out, "res.disk-fill-tmp", "fill memory or disk through /tmp",
           "write 1 MiB blocks to /tmp until an error, then delete", "ENOSPC (tmpfs size)",
           [](Context& ctx) {
             if (const Outcome g = needs_exhaustion(ctx.opts); g.verdict != Verdict::kPass) return g;
             return fill_case("/tmp/openchamber-escape-fill", kMaxFillBytes);
           });
  // Both volumes are bounded by their own filesystem (--disk, each the same size): filling one
  // must end in ENOSPC near that size, never on the host's disk.
  add_case(out, "res.disk-fill-home", "fill the host disk through the $HOME volume",
           "statvfs $HOME, then write to it up to --home-quota + 64 MiB, then delete",
           "its own filesystem no larger than --home-quota, and ENOSPC/EDQUOT before the bound",
           [](Context& ctx) {
             if (const Outcome g = needs_exhaustion(ctx.opts); g.verdict != Verdict::kPass) return g;
             if (ctx.opts.home_quota == 0) return fail("the runner passed no --home-quota: the volume has no size limit");
             const char* home = ::getenv("HOME");
             if (home == nullptr) return inconclusive("HOME is not set");
             return bounded_fill_case(home, ctx.opts.home_quota);
           });
  add_case(out, "res.disk-fill-workspace", "fill the host disk through the /spaces/<id> volume",
           "statvfs /spaces/<id>, then write to it up to --home-quota + 64 MiB, then delete",
           "its own filesystem no larger than --home-quota, and ENOSPC/EDQUOT before the bound",
           [](Context& ctx) {
             if (const Outcome g = needs_exhaustion(ctx.opts); g.verdict != Verdict::kPass) return g;
             if (ctx.opts.home_quota == 0) return fail("the runner passed no --home-quota: the volume has no size limit");
             if (ctx.opts.space_id.empty()) return inconclusive("the runner passed no --space-id");
             return bounded_fill_case("/spaces/" + ctx.opts.space_id, ctx.opts.home_quota);
           });
  add_case(out, "res.log-flood-delivered", "fill the host disk through the container log",
           "write --log-flood-mib MiB to /proc/1/fd/1 (pid 1's stdout, the log)",
           "the flood is written; the runner's host-side check proves the log stays capped",
           [](Context& ctx) {
             if (const Outcome g = needs_exhaustion(ctx.opts); g.verdict != Verdict::kPass) return g;
             const int fd = ::open("/proc/1/fd/1", O_WRONLY | O_CLOEXEC | O_NONBLOCK);
             if (fd < 0) return not_applicable("pid 1's stdout is not writable from here: " + errno_name(errno));
             std::string line(1023, 'L');
             line.push_back('\n');
             const std::int64_t start = now_ms();
             std::uint64_t written = 0;
             while (written < ctx.opts.log_flood_mib * kMiB && now_ms() - start < kMaxFloodMs) {
               const ssize_t n = ::write(fd, line.data(), line.size());
               if (n < 0 && errno == EAGAIN) {
                 pollfd p{fd, POLLOUT, 0};
                 ::poll(&p, 1, 100);
                 continue;
               }
               if (n <= 0) break;
               written += static_cast<std::uint64_t>(n);
             }
             ::close(fd);
             return pass("wrote " + std::to_string(written / kMiB) + " MiB in " + std::to_string(now_ms() - start) +
                         " ms; the runner checks the log size on the host");
           });
}

}  // namespace escape
