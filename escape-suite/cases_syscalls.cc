// System calls the space profile (seccomp-profiles/space.json) refuses. Arguments are chosen so an
// allowed call fails harmlessly with the kernel's own errno (EBADF, EFAULT, EINVAL: bubblewrap's
// try-syscall method), which is then a FAIL: nothing filtered the call. Calls that would change
// this process if they wrongly succeeded run in a throw-away child.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "policy/number.h"

namespace escape {
namespace {

struct Call {
  const char* id;
  const char* what;
  const char* why;
  long (*call)();
};

// Every entry runs in a child (cheap, and a wrongly allowed call cannot disturb later cases).
const Call kCalls[] = {
    {"syscall.bpf", "bpf(BPF_MAP_CREATE, zeroed attr)", "load eBPF: verifier bugs are kernel LPEs", [] {
       char attr[128] = {};
       return ::syscall(SYS_bpf, 0, attr, sizeof attr);
     }},
    {"syscall.userfaultfd", "userfaultfd(UFFD_USER_MODE_ONLY)", "pause kernel page faults to win races", [] {
       return ::syscall(SYS_userfaultfd, O_CLOEXEC | 1);
     }},
    {"syscall.io-uring-setup", "io_uring_setup(1)", "io_uring: operations bypass seccomp, LPE record", [] {
       char params[120] = {};
       return ::syscall(SYS_io_uring_setup, 1, params);
     }},
    {"syscall.io-uring-enter", "io_uring_enter(-1)", "io_uring", [] {
       return ::syscall(SYS_io_uring_enter, -1, 0, 0, 0, nullptr, 0);
     }},
    {"syscall.io-uring-register", "io_uring_register(-1)", "io_uring", [] {
       return ::syscall(SYS_io_uring_register, -1, 0, nullptr, 0);
     }},
    {"syscall.perf-event-open", "perf_event_open(sw cpu-clock, self)", "perf: kernel pointer leaks, LPEs", [] {
       perf_event_attr attr{};
       attr.size = sizeof attr;
       attr.type = PERF_TYPE_SOFTWARE;
       attr.config = PERF_COUNT_SW_CPU_CLOCK;
       attr.exclude_kernel = 1;
       return ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
     }},
    {"syscall.keyctl", "keyctl(GET_KEYRING_ID, session)", "keyrings are not namespaced (BOtB key extraction)", [] {
       return ::syscall(SYS_keyctl, 0, -3, 0);
     }},
    {"syscall.add-key", "add_key(user, process keyring)", "store/read keys in host keyrings", [] {
       return ::syscall(SYS_add_key, "user", "openchamber-escape", "x", 1, -2);
     }},
    {"syscall.request-key", "request_key(user, absent key)", "ask the host's key upcall", [] {
       return ::syscall(SYS_request_key, "user", "openchamber-escape-none", nullptr, 0);
     }},
    {"syscall.unshare-user", "unshare(CLONE_NEWUSER)", "become root in a user namespace (CVE-2022-0185)", [] {
       return long{::unshare(CLONE_NEWUSER)};
     }},
    {"syscall.unshare-mount", "unshare(CLONE_NEWNS)", "private mounts to hide or reshape the view", [] {
       return long{::unshare(CLONE_NEWNS)};
     }},
    {"syscall.unshare-pid", "unshare(CLONE_NEWPID)", "own pid namespace", [] {
       return long{::unshare(CLONE_NEWPID)};
     }},
    {"syscall.unshare-net", "unshare(CLONE_NEWNET)", "own network namespace (netfilter LPE surface)", [] {
       return long{::unshare(CLONE_NEWNET)};
     }},
    {"syscall.unshare-uts", "unshare(CLONE_NEWUTS)", "own uts namespace", [] {
       return long{::unshare(CLONE_NEWUTS)};
     }},
    {"syscall.unshare-ipc", "unshare(CLONE_NEWIPC)", "own ipc namespace", [] {
       return long{::unshare(CLONE_NEWIPC)};
     }},
    {"syscall.unshare-cgroup", "unshare(CLONE_NEWCGROUP)", "new cgroup namespace (CVE-2022-0492 step)", [] {
       return long{::unshare(CLONE_NEWCGROUP)};
     }},
    {"syscall.unshare-time", "unshare(CLONE_NEWTIME)", "own time namespace", [] {
       return long{::unshare(0x00000080)};  // CLONE_NEWTIME
     }},
    {"syscall.clone-newuser", "clone(CLONE_NEWUSER|SIGCHLD)", "user namespace through clone flags", [] {
       const long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
       if (pid == 0) ::_exit(0);
       if (pid > 0) ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
       return pid;
     }},
    {"syscall.clone3", "clone3(CLONE_NEWUSER)", "namespace flags hidden from BPF in clone3's struct", [] {
       std::uint64_t args[11] = {};
       args[0] = CLONE_NEWUSER;
       args[4] = SIGCHLD;  // exit_signal
       const long pid = ::syscall(SYS_clone3, args, sizeof args);
       if (pid == 0) ::_exit(0);
       if (pid > 0) ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
       return pid;
     }},
    {"syscall.setns-pid1-net", "setns(/proc/1/ns/net)", "join another namespace", [] {
       const int fd = ::open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
       if (fd < 0) return -1L;
       const long rc = ::setns(fd, CLONE_NEWNET);
       const int err = errno;
       ::close(fd);
       errno = err;
       return rc;
     }},
    {"syscall.mount-tmpfs", "mount(none, <fresh dir in /tmp>, tmpfs)", "mount over paths, new superblocks", [] {
       const std::string dir = "/tmp/openchamber-escape-mnt-" + std::to_string(::getpid());
       ::mkdir(dir.c_str(), 0700);
       const long rc = ::mount("none", dir.c_str(), "tmpfs", 0, nullptr);
       const int err = errno;
       if (rc == 0) ::umount2(dir.c_str(), MNT_DETACH);
       ::rmdir(dir.c_str());
       errno = err;
       return rc;
     }},
    {"syscall.remount-root-rw", "mount(/, MS_REMOUNT) read-write", "undo --read-only", [] {
       return long{::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND, nullptr)};
     }},
    {"syscall.umount-masked-path", "umount2(/proc/kcore, MNT_DETACH)", "remove the runtime's masks", [] {
       return long{::umount2("/proc/kcore", MNT_DETACH)};
     }},
    {"syscall.fsopen", "fsopen(tmpfs)", "new mount API (CVE-2022-0185 was fsconfig)", [] {
       return ::syscall(SYS_fsopen, "tmpfs", 0);
     }},
    {"syscall.fspick", "fspick(/)", "reconfigure a mounted superblock", [] {
       return ::syscall(SYS_fspick, AT_FDCWD, "/", 0);
     }},
    {"syscall.open-tree", "open_tree(/, OPEN_TREE_CLONE)", "detached mount copies", [] {
       return ::syscall(SYS_open_tree, AT_FDCWD, "/", 1);
     }},
    {"syscall.move-mount", "move_mount(-1)", "attach mounts", [] {
       return ::syscall(SYS_move_mount, -1, "", -1, "", 0);
     }},
    {"syscall.mount-setattr", "mount_setattr(-1)", "change mount flags (ro -> rw)", [] {
       return ::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0);
     }},
    {"syscall.pivot-root", "pivot_root(/tmp, /tmp)", "change the root", [] {
       return ::syscall(SYS_pivot_root, "/tmp", "/tmp");
     }},
    {"syscall.chroot", "chroot(/tmp)", "classic chroot games", [] { return long{::chroot("/tmp")}; }},
    {"syscall.kexec-load", "kexec_load(0 segments)", "replace the host kernel", [] {
       return ::syscall(SYS_kexec_load, 0, 0, nullptr, 0);
     }},
    {"syscall.kexec-file-load", "kexec_file_load(-1, -1)", "replace the host kernel", [] {
       return ::syscall(SYS_kexec_file_load, -1, -1, 0, "", 0);
     }},
    {"syscall.init-module", "init_module(NULL, 0)", "load kernel code", [] {
       return ::syscall(SYS_init_module, nullptr, 0, "");
     }},
    {"syscall.finit-module", "finit_module(-1)", "load kernel code", [] {
       return ::syscall(SYS_finit_module, -1, "", 0);
     }},
    {"syscall.delete-module", "delete_module(absent)", "unload security modules", [] {
       return ::syscall(SYS_delete_module, "openchamber_escape_none", O_NONBLOCK);
     }},
    {"syscall.reboot", "reboot(magic, invalid cmd)", "reboot the host", [] {
       return ::syscall(SYS_reboot, 0xfee1dead, 672274793, 0x0badc0de, nullptr);
     }},
    {"syscall.swapon", "swapon(/tmp/absent)", "host swap configuration", [] {
       return ::syscall(SYS_swapon, "/tmp/openchamber-escape-absent", 0);
     }},
    {"syscall.acct", "acct(/tmp/absent)", "host process accounting", [] {
       return ::syscall(SYS_acct, "/tmp/openchamber-escape-absent");
     }},
    {"syscall.clock-settime", "clock_settime(invalid clock)", "set the host clock (TLS, token expiry)", [] {
       return ::syscall(SYS_clock_settime, -1, nullptr);
     }},
    {"syscall.sethostname", "sethostname(overlong)", "change uts identity", [] {
       static const char name[100] = {};
       return ::syscall(SYS_sethostname, name, sizeof name);
     }},
    {"syscall.open-by-handle-at", "open_by_handle_at(zero handle)", "'shocker': open host files by handle", [] {
       unsigned char handle[8 + 16] = {};
       return ::syscall(SYS_open_by_handle_at, AT_FDCWD, handle, O_RDONLY);
     }},
    {"syscall.name-to-handle-at", "name_to_handle_at(/)", "learn inode handles for shocker-style reads", [] {
       unsigned char handle[8 + 128] = {};
       handle[0] = 128;  // handle_bytes
       int mount_id = 0;
       return ::syscall(SYS_name_to_handle_at, AT_FDCWD, "/", handle, &mount_id, 0);
     }},
    {"syscall.personality-no-aslr", "personality(ADDR_NO_RANDOMIZE)", "switch off ASLR for exploits", [] {
       return long{::personality(ADDR_NO_RANDOMIZE)};
     }},
    {"syscall.personality-read-implies-exec", "personality(READ_IMPLIES_EXEC)", "executable data", [] {
       return long{::personality(READ_IMPLIES_EXEC)};
     }},
    {"syscall.iopl", "iopl(3)", "raw I/O port access", [] { return ::syscall(SYS_iopl, 3); }},
    {"syscall.ioperm", "ioperm(0x80, 1, 1)", "raw I/O port access", [] {
       return ::syscall(SYS_ioperm, 0x80, 1, 1);
     }},
    {"syscall.modify-ldt", "modify_ldt(read)", "LDT attack surface", [] {
       char buf[16];
       return ::syscall(SYS_modify_ldt, 0, buf, sizeof buf);
     }},
    {"syscall.fanotify-init", "fanotify_init(0, O_RDONLY)", "watch the whole filesystem", [] {
       return ::syscall(SYS_fanotify_init, 0, O_RDONLY);
     }},
    {"syscall.vhangup", "vhangup()", "hang up terminals", [] { return ::syscall(SYS_vhangup); }},
    {"syscall.kcmp", "kcmp(self, self, KCMP_FILE)", "compare other processes' kernel objects", [] {
       return ::syscall(SYS_kcmp, ::getpid(), ::getpid(), 0, 0, 0);
     }},
    {"syscall.x32-abi", "getpid through the x32 ABI (nr | 0x40000000)", "x32 calls bypass x86_64 rules", [] {
       return ::syscall(0x40000000 | SYS_getpid);
     }},
    {"syscall.ia32-abi", "getpid through int 0x80", "the i386 ABI: socketcall hides the family from BPF", [] {
       long rc = 20;  // __NR_getpid on i386
       asm volatile("int $0x80" : "+a"(rc) : : "memory");
       if (rc < 0 && rc > -4096) {
         errno = static_cast<int>(-rc);
         return -1L;
       }
       return rc;
     }},
};

// Forks a target that waits, then tries `attack(target)` from a second child: the attacker is not
// the target's parent, so this is "another process", not a debugger attaching to its own child.
Outcome against_sibling(const Options& opts, std::string_view what, long (*attack)(pid_t)) {
  const pid_t target = ::fork();
  if (target < 0) return inconclusive("fork: " + errno_name(errno));
  if (target == 0) {
    for (;;) ::pause();
  }
  const Outcome o = syscall_in_child_expect(opts, what, [&] { return attack(target); }, opts.seccomp_errno);
  ::kill(target, SIGKILL);
  ::waitpid(target, nullptr, 0);
  return o;
}

}  // namespace

void add_syscall_cases(std::vector<Case>& out) {
  for (const Call& c : kCalls) {
    add_case(out, c.id, c.why, std::string(c.what) + " in a child",
             "refused with the profile's own errno (ENOSYS for clone3, whose flags BPF cannot read); "
             "EPERM/EACCES FAIL: the profile let the call reach the kernel. The x32 and i386 ABIs may also "
             "end by SIGSYS, ENOSYS or (i386) SIGSEGV where the kernel has no entry point",
             [c](Context& ctx) {
               const bool ia32 = std::strcmp(c.id, "syscall.ia32-abi") == 0;
               const bool x32 = std::strcmp(c.id, "syscall.x32-abi") == 0;
               if (ia32 || x32) return syscall_in_child(ctx.opts, c.what, c.call, 3000, ia32);
               const int expected = std::strcmp(c.id, "syscall.clone3") == 0 ? ENOSYS : ctx.opts.seccomp_errno;
               return syscall_in_child_expect(ctx.opts, c.what, c.call, expected);
             });
  }
  add_case(out, "syscall.ptrace-sibling", "read or steer another process's memory and registers",
           "PTRACE_ATTACH to a sibling process", "refused", [](Context& ctx) {
             return against_sibling(ctx.opts, "ptrace(ATTACH, sibling)", [](pid_t t) {
               const long rc = ::ptrace(PTRACE_ATTACH, t, nullptr, nullptr);
               if (rc == 0) ::ptrace(PTRACE_DETACH, t, nullptr, nullptr);
               return rc;
             });
           });
  add_case(out, "syscall.process-vm-readv-sibling", "read another process's memory without ptrace",
           "process_vm_readv of a sibling's stack page", "refused", [](Context& ctx) {
             return against_sibling(ctx.opts, "process_vm_readv(sibling)", [](pid_t t) {
               char buf[8];
               static char remote_probe[8];  // same address in the forked sibling
               iovec local{buf, sizeof buf};
               iovec remote{remote_probe, sizeof remote_probe};
               return long{::process_vm_readv(t, &local, 1, &remote, 1, 0)};
             });
           });
  add_case(out, "syscall.process-vm-writev-sibling", "write another process's memory",
           "process_vm_writev to a sibling", "refused", [](Context& ctx) {
             return against_sibling(ctx.opts, "process_vm_writev(sibling)", [](pid_t t) {
               static char probe[8] = "escape";
               iovec local{probe, sizeof probe};
               iovec remote{probe, sizeof probe};
               return long{::process_vm_writev(t, &local, 1, &remote, 1, 0)};
             });
           });
  add_case(out, "syscall.pidfd-getfd-sibling", "steal a descriptor from another process",
           "pidfd_open(sibling) then pidfd_getfd(fd 0)", "pidfd_getfd refused", [](Context& ctx) {
             return against_sibling(ctx.opts, "pidfd_getfd(sibling, 0)", [](pid_t t) {
               const long pidfd = ::syscall(SYS_pidfd_open, t, 0);
               if (pidfd < 0) return pidfd;
               const long fd = ::syscall(SYS_pidfd_getfd, pidfd, 0, 0);
               const int err = errno;
               ::close(static_cast<int>(pidfd));
               errno = err;
               return fd;
             });
           });
  add_case(out, "syscall.ptrace-pid1", "trace the space's init", "PTRACE_ATTACH to pid 1",
           "refused with the profile's own errno", [](Context& ctx) {
             return syscall_in_child_expect(ctx.opts, "ptrace(ATTACH, 1)", [] {
               const long rc = ::ptrace(PTRACE_ATTACH, 1, nullptr, nullptr);
               if (rc == 0) ::ptrace(PTRACE_DETACH, 1, nullptr, nullptr);
               return rc;
             }, ctx.opts.seccomp_errno);
           });
  add_case(out, "syscall.profile-errno-observed", "run without the space's seccomp profile",
           "unshare(CLONE_NEWUSER) in a child and compare the errno with --seccomp-errno",
           "the errno is the profile's own (space.json: EOPNOTSUPP), so the profile is loaded",
           [](Context& ctx) {
             const ChildOutcome c = run_in_child(
                 [] {
                   const int rc = ::unshare(CLONE_NEWUSER);
                   return std::to_string(rc) + " " + std::to_string(errno);
                 },
                 3000);
             if (c.report.rfind("0 ", 0) == 0) return fail("unshare(CLONE_NEWUSER) succeeded");
             const std::optional<ChildNumbers> n = child_numbers(c.report);
             if (!n) {
               return inconclusive("unshare(CLONE_NEWUSER): unreadable child report: " + c.report);
             }
             const int err = n->second;
             if (err == ctx.opts.seccomp_errno) {
               return pass("refused with " + errno_name(err) + " (the profile's)");
             }
             return fail("refused with " + errno_name(err) + ", not the profile's " +
                         errno_name(ctx.opts.seccomp_errno) + ": another profile is loaded");
           });
}

}  // namespace escape
