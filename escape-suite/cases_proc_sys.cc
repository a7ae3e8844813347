// The /proc, /sys and cgroup write battery. Each path is a known host-takeover lever when writable:
// core_pattern and modprobe/uevent_helper make the host kernel run a program of our choice as root,
// binfmt_misc/register adds an interpreter for every exec on the host, sysrq-trigger reboots or
// crashes it, release_agent runs as root on the host when a cgroup empties (CVE-2022-0492).
// Files are only opened for writing, never written: an open that succeeds is already a FAIL.
#include <fcntl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {
namespace {

struct WriteTarget {
  const char* id;
  const char* path;
  const char* why;
};

constexpr WriteTarget kWriteBattery[] = {
    {"proc.core-pattern", "/proc/sys/kernel/core_pattern",
     "a |program core_pattern runs as root on the host at the next crash"},
    {"proc.sysrq-trigger", "/proc/sysrq-trigger", "crash, reboot or sync the host kernel"},
    {"proc.binfmt-misc-register", "/proc/sys/fs/binfmt_misc/register",
     "register an interpreter the host runs for matching binaries"},
    {"proc.modprobe", "/proc/sys/kernel/modprobe",
     "the kernel runs this path as root to load a module"},
    {"proc.hotplug", "/proc/sys/kernel/hotplug", "the kernel runs this helper on device events"},
    {"proc.kernel-hostname", "/proc/sys/kernel/hostname", "change host-wide or uts identity"},
    {"proc.kernel-domainname", "/proc/sys/kernel/domainname", "change uts identity"},
    {"proc.panic-on-oom", "/proc/sys/vm/panic_on_oom", "turn an OOM in the space into a host panic"},
    {"proc.kernel-panic", "/proc/sys/kernel/panic", "change host panic behaviour"},
    {"proc.drop-caches", "/proc/sys/vm/drop_caches", "degrade the whole host"},
    {"proc.randomize-va-space", "/proc/sys/kernel/randomize_va_space", "switch off ASLR host-wide"},
    {"proc.ip-forward", "/proc/sys/net/ipv4/ip_forward", "route traffic through the space"},
    {"proc.route-localnet", "/proc/sys/net/ipv4/conf/all/route_localnet",
     "reach 127.0.0.0/8 services across interfaces (CVE-2020-8558)"},
    {"proc.ping-group-range", "/proc/sys/net/ipv4/ping_group_range", "widen who may send ICMP"},
    {"proc.max-user-namespaces", "/proc/sys/user/max_user_namespaces",
     "re-enable user namespaces (CVE-2022-0185 path)"},
    {"proc.unprivileged-bpf", "/proc/sys/kernel/unprivileged_bpf_disabled", "re-enable unprivileged eBPF"},
    {"proc.kptr-restrict", "/proc/sys/kernel/kptr_restrict", "expose kernel pointers"},
    {"sys.uevent-helper", "/sys/kernel/uevent_helper", "the kernel runs this path as root on uevents"},
    {"sys.power-state", "/sys/power/state", "suspend the host"},
    {"sys.thp-enabled", "/sys/kernel/mm/transparent_hugepage/enabled", "change host memory policy"},
    {"cgroup.release-agent", "/sys/fs/cgroup/release_agent",
     "runs as root on the host when a cgroup empties (CVE-2022-0492)"},
    {"cgroup.release-agent-v1-memory", "/sys/fs/cgroup/memory/release_agent", "same, cgroup v1 layout"},
    {"cgroup.notify-on-release", "/sys/fs/cgroup/notify_on_release", "arms release_agent (v1)"},
    {"cgroup.devices-allow", "/sys/fs/cgroup/devices/devices.allow",
     "allow block devices of the host disk (cgroup v1 devices controller)"},
    {"cgroup.procs-root", "/sys/fs/cgroup/cgroup.procs", "move out of the space's limits"},
    {"cgroup.subtree-control", "/sys/fs/cgroup/cgroup.subtree_control", "change controllers"},
    {"cgroup.pids-max", "/sys/fs/cgroup/pids.max", "raise the space's own pids limit"},
    {"cgroup.memory-max", "/sys/fs/cgroup/memory.max", "raise the space's own memory limit"},
    {"cgroup.memory-swap-max", "/sys/fs/cgroup/memory.swap.max", "give the space swap"},
    {"cgroup.cpu-max", "/sys/fs/cgroup/cpu.max", "raise the space's CPU quota"},
};

struct ReadTarget {
  const char* id;
  const char* path;
  const char* why;
};

// Docker's masked paths: readable content here leaks host state useful to an exploit.
constexpr ReadTarget kMasked[] = {
    {"proc.kcore-masked", "/proc/kcore", "physical memory image of the host"},
    {"proc.keys-masked", "/proc/keys", "keyring descriptions of the host (not namespaced)"},
    {"proc.timer-list-masked", "/proc/timer_list", "host timers and kernel pointers"},
    {"proc.sched-debug-masked", "/proc/sched_debug", "every host process name and pid"},
    {"proc.latency-stats-masked", "/proc/latency_stats", "host kernel call sites"},
    {"sys.firmware-masked", "/sys/firmware/efi/efivars", "host firmware variables"},
};

}  // namespace

void add_proc_sys_cases(std::vector<Case>& out) {
  for (const WriteTarget& t : kWriteBattery) {
    add_case(out, t.id, t.why, std::string("open(") + t.path + ", O_WRONLY); nothing is written",
             "the open fails (EROFS, EACCES, EPERM) or the file does not exist", [t](Context& ctx) {
               const int fd = ::open(t.path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
               const int err = errno;
               if (fd >= 0) {
                 ::close(fd);
                 return fail(std::string("opened ") + t.path + " for writing");
               }
               if (err == EROFS) return pass(std::string(t.path) + ": EROFS");
               return judge_open_or_absent(ctx.opts, t.path, -1, err, {ENOENT, ENOTDIR});
             });
  }
  add_case(out, "proc.oom-score-adj-lower", "make the space's processes the last OOM victims",
           "write -1000 to /proc/self/oom_score_adj in a child", "EACCES (needs CAP_SYS_RESOURCE)",
           [](Context& ctx) {
             return syscall_in_child(ctx.opts, "write /proc/self/oom_score_adj -1000", [] {
               const int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
               if (fd < 0) return -1L;
               const long n = ::write(fd, "-1000", 5);
               const int err = errno;
               ::close(fd);
               errno = err;
               return n;
             });
           });
  for (const ReadTarget& t : kMasked) {
    add_case(out, t.id, t.why, std::string("read ") + t.path,
             "nothing to read: the path is masked (empty, /dev/null, EACCES or absent)", [t](Context&) {
               const FileRead f = read_bounded(t.path, 4096);
               if (!f.ok) return pass(std::string(t.path) + ": " + errno_name(f.err));
               if (f.data.empty()) return pass(std::string(t.path) + ": empty (masked)");
               return fail(std::string(t.path) + ": " + std::to_string(f.data.size()) + "+ bytes readable");
             });
  }
  add_case(out, "proc.kallsyms-no-addresses", "learn kernel addresses to defeat KASLR",
           "read /proc/kallsyms", "every address is zero (kptr_restrict) or the file is unreadable",
           [](Context&) {
             const FileRead f = read_bounded("/proc/kallsyms", 64 * 1024);
             if (!f.ok) return pass("/proc/kallsyms: " + errno_name(f.err));
             for (const std::string& line : split_lines(f.data, 2000)) {
               const std::string addr = line.substr(0, line.find(' '));
               if (addr.find_first_not_of('0') != std::string::npos) {
                 return fail("kernel address visible: " + line.substr(0, 60));
               }
             }
             return pass("addresses are zeroed");
           });
  add_case(out, "proc.syslog-refused", "read the host kernel log (addresses, other tenants)",
           "klogctl(SYSLOG_ACTION_READ_ALL)", "refused", [](Context& ctx) {
             char buf[256];
             const int rc = ::klogctl(3, buf, sizeof buf);
             return judge_syscall(ctx.opts, "klogctl(READ_ALL)", rc, errno);
           });
  add_case(out, "cgroup.mount-cgroupfs-refused", "mount a fresh cgroup v1 hierarchy to set release_agent",
           "mount(cgroup, <fresh dir in /tmp>, cgroup, 0, rdma) in a child", "refused (CVE-2022-0492)", [](Context& ctx) {
             return syscall_in_child(ctx.opts, "mount(cgroup rdma)", [] {
               const std::string dir = "/tmp/openchamber-escape-cg-" + std::to_string(::getpid());
               ::mkdir(dir.c_str(), 0700);
               const long rc = ::mount("cgroup", dir.c_str(), "cgroup", 0, "rdma");
               const int err = errno;
               if (rc == 0) ::umount2(dir.c_str(), MNT_DETACH);
               ::rmdir(dir.c_str());
               errno = err;
               return rc;
             });
           });
}

void add_device_cases(std::vector<Case>& out) {
  struct Node {
    const char* id;
    const char* path;
    int flags;
    const char* why;
  };
  static constexpr Node kNodes[] = {
      {"dev.mem", "/dev/mem", O_RDONLY, "read host physical memory"},
      {"dev.kmem", "/dev/kmem", O_RDONLY, "read kernel memory"},
      {"dev.port", "/dev/port", O_RDONLY, "raw I/O ports"},
      {"dev.kmsg", "/dev/kmsg", O_RDONLY, "read or forge the host kernel log"},
      {"dev.kmsg-write", "/dev/kmsg", O_WRONLY, "forge host kernel log lines"},
      {"dev.sda", "/dev/sda", O_RDONLY, "read the host disk"},
      {"dev.vda", "/dev/vda", O_RDONLY, "read the VM disk"},
      {"dev.nvme0n1", "/dev/nvme0n1", O_RDONLY, "read the host disk"},
      {"dev.kvm", "/dev/kvm", O_RDWR, "run a VM with host kernel help"},
      {"dev.net-tun", "/dev/net/tun", O_RDWR, "create an interface and route around the corridor"},
      {"dev.fuse", "/dev/fuse", O_RDWR, "mount a filesystem"},
      {"dev.loop-control", "/dev/loop-control", O_RDWR, "attach images as block devices"},
  };
  for (const Node& n : kNodes) {
    add_case(out, n.id, n.why, std::string("open(") + n.path + ")",
             "absent (ENOENT) or refused", [n](Context& ctx) {
               const int fd = ::open(n.path, n.flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
               const int err = errno;
               if (fd >= 0) ::close(fd);
               return judge_open_or_absent(ctx.opts, std::string("open ") + n.path, fd, err, {ENOENT, ENXIO, ENODEV});
             });
  }
  add_case(out, "dev.only-standard-nodes", "find a host device node in /dev",
           "list /dev and stat every character and block device",
           "only null, zero, full, random, urandom, tty, console, ptmx and pts/*", [](Context&) {
             std::string bad;
             for (const std::string& name : list_dir("/dev")) {
               struct stat st {};
               const std::string path = "/dev/" + name;
               if (::lstat(path.c_str(), &st) != 0) continue;
               if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) continue;
               bool ok = false;
               for (const char* std_name : {"null", "zero", "full", "random", "urandom", "tty",
                                            "console", "ptmx"}) {
                 ok = ok || name == std_name;
               }
               if (!ok) bad += path + " ";
             }
             return bad.empty() ? pass("only the standard nodes") : fail("extra device nodes: " + bad);
           });
  struct Mknod {
    const char* id;
    mode_t mode;
    dev_t dev;
    const char* what;
  };
  static const Mknod kMknods[] = {
      {"dev.mknod-char-mem", S_IFCHR | 0600, makedev(1, 1), "mknod c 1 1 (/dev/mem)"},
      {"dev.mknod-block-disk", S_IFBLK | 0600, makedev(8, 0), "mknod b 8 0 (/dev/sda)"},
  };
  for (const Mknod& m : kMknods) {
    add_case(out, m.id, "create a device node that reaches host hardware",
             std::string(m.what) + " in /tmp (control: mkfifo in /tmp works)",
             "EPERM (no CAP_MKNOD) while a FIFO can be made", [m](Context& ctx) {
               const std::string fifo = "/tmp/openchamber-escape-fifo-" + std::to_string(::getpid());
               if (::mknod(fifo.c_str(), S_IFIFO | 0600, 0) != 0) {
                 return inconclusive("control mkfifo " + fifo + ": " + errno_name(errno));
               }
               ::unlink(fifo.c_str());
               const std::string path = "/tmp/openchamber-escape-node-" + std::to_string(::getpid());
               const int rc = ::mknod(path.c_str(), m.mode, m.dev);
               const int err = errno;
               if (rc == 0) ::unlink(path.c_str());
               return judge_syscall(ctx.opts, m.what, rc, err);
             });
  }
}

}  // namespace escape
