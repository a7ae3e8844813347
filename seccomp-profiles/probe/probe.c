// seccomp probe: runs named system calls inside a container and prints, per name, how each ended:
//   <name> errno=<n>     the call (or, for work_*, every step) returned; 0 means it succeeded
//   <name> signal=<s>    the child running the call died from signal s (isolated mode only)
// Linked -static so the image holds this one file and no libc (seccomp-profiles/README.md).
//
// Usage: probe [--isolate] name...
//   --isolate  run each name in its own forked child, so a call that the profile wrongly allows
//              (unshare, clone with namespace flags) cannot change what later names observe.
//              Without it the calls run in this process, as the gatekeeper profile requires (it
//              allows no fork; a forbidden call kills the whole probe, which is the point).
//
// Deny probes pass arguments that, without seccomp, fail harmlessly or have no lasting effect, so
// a wrongly allowed call reports the kernel's own errno (EFAULT, EBADF, ESRCH...) rather than the
// profile's, and the test fails on the difference.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// Families and options spelled as numbers where older headers may lack the constant.
enum {
  kAfAlg = 38,                  // linux/socket.h AF_ALG
  kAfVsock = 40,                // linux/socket.h AF_VSOCK
  kNetlinkNetfilter = 12,       // linux/netlink.h NETLINK_NETFILTER
  kI386Getpid = 20,             // arch/x86/entry/syscalls/syscall_32.tbl
  kX32SyscallBit = 0x40000000,  // arch/x86/include/uapi/asm/unistd.h __X32_SYSCALL_BIT
};

// Returns 0 when the call succeeded, else its errno.
static int result_of(long rc) { return rc < 0 ? errno : 0; }

// Raw clone with namespace flags, fork-like (no CLONE_VM): the child exits at once.
static int clone_with(unsigned long flags) {
  long rc = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (rc == 0) syscall(SYS_exit, 0);
  if (rc < 0) return errno;
  waitpid((pid_t)rc, NULL, 0);
  return 0;
}

static int i386_getpid(void) {
  long rc = kI386Getpid;
  __asm__ volatile("int $0x80" : "+a"(rc) : : "memory");
  if (rc < 0 && rc > -4096) return (int)-rc;
  return 0;
}

static int work_file(void) {
  static const char kText[] = "probe";
  char buf[sizeof kText];
  int fd = open("/tmp/probe-file", O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  int err = 0;
  if (write(fd, kText, sizeof kText) != (ssize_t)sizeof kText) err = errno ? errno : EIO;
  if (!err && fsync(fd) != 0) err = errno;
  if (!err && lseek(fd, 0, SEEK_SET) != 0) err = errno;
  if (!err && read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) err = errno ? errno : EIO;
  if (!err && memcmp(buf, kText, sizeof kText) != 0) err = EIO;
  close(fd);
  if (!err && unlink("/tmp/probe-file") != 0) err = errno;
  return err;
}

// Read-only start-up file access, as for the CA bundle: open, fstat, read, close.
static int work_read_file(const char* self) {
  int fd = open(self, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st;
  char magic[4];
  int err = 0;
  if (fstat(fd, &st) != 0 || read(fd, magic, sizeof magic) != (ssize_t)sizeof magic) err = errno;
  if (!err && memcmp(magic, "\177ELF", 4) != 0) err = EIO;
  close(fd);
  return err;
}

// TCP over loopback inside --network none: listen on port 0, connect, accept, exchange a byte.
// IPv4 only: Docker disables IPv6 on a --network none loopback (measured: EADDRNOTAVAIL).
static int work_tcp4(void) {
  struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  memcpy(&ss, &sin, sizeof sin);
  socklen_t len = sizeof sin;
  int family = AF_INET;
  int err = 0;
  int client = -1;
  int conn = -1;
  int lsn = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lsn < 0) return errno;
  if (bind(lsn, (struct sockaddr*)&ss, len) != 0 || listen(lsn, 1) != 0 ||
      getsockname(lsn, (struct sockaddr*)&ss, &len) != 0) {
    err = errno;
    goto out;
  }
  client = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0 || connect(client, (struct sockaddr*)&ss, len) != 0) {
    err = errno;
    goto out;
  }
  conn = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
  char c = 'x';
  if (conn < 0 || send(client, &c, 1, 0) != 1 || recv(conn, &c, 1, 0) != 1) err = errno;
out:
  if (conn >= 0) close(conn);
  if (client >= 0) close(client);
  close(lsn);
  return err;
}

static int work_udp(void) {
  struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof sin;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int err = 0;
  char c = 'u';
  if (bind(fd, (struct sockaddr*)&sin, len) != 0 ||
      getsockname(fd, (struct sockaddr*)&sin, &len) != 0 ||
      sendto(fd, &c, 1, 0, (struct sockaddr*)&sin, len) != 1 ||
      recvfrom(fd, &c, 1, 0, NULL, NULL) != 1) {
    err = errno;
  }
  close(fd);
  return err;
}

static int work_unix(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return errno;
  char c = 'p';
  int err = 0;
  if (write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1) err = errno;
  close(sv[0]);
  close(sv[1]);
  return err;
}

// The libuv loop's wake-up path: epoll + eventfd + pipe2.
static int work_loop(void) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return errno;
  int err = 0;
  int pipefd[2] = {-1, -1};
  int ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct epoll_event in = {.events = EPOLLIN};
  struct epoll_event out;
  uint64_t one = 1;
  if (ev < 0 || pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0 ||
      epoll_ctl(ep, EPOLL_CTL_ADD, ev, &in) != 0 || write(ev, &one, sizeof one) != sizeof one ||
      epoll_wait(ep, &out, 1, 1000) != 1) {
    err = errno ? errno : EIO;
  }
  if (pipefd[0] >= 0) close(pipefd[0]);
  if (pipefd[1] >= 0) close(pipefd[1]);
  if (ev >= 0) close(ev);
  close(ep);
  return err;
}

static void* thread_body(void* arg) {
  *(int*)arg = 42;
  return NULL;
}

// Static glibc tries clone3 first and falls back to clone only on ENOSYS.
static int work_thread(void) {
  int value = 0;
  pthread_t t;
  int rc = pthread_create(&t, NULL, thread_body, &value);
  if (rc != 0) return rc;
  rc = pthread_join(t, NULL);
  if (rc != 0) return rc;
  return value == 42 ? 0 : EIO;
}

// A few children, well inside --pids-limit.
static int work_fork(void) {
  enum { kChildren = 4 };
  pid_t pids[kChildren];
  for (int i = 0; i < kChildren; ++i) {
    pids[i] = fork();
    if (pids[i] == 0) _exit(0);
    if (pids[i] < 0) return errno;
  }
  for (int i = 0; i < kChildren; ++i) {
    int status = 0;
    if (waitpid(pids[i], &status, 0) != pids[i]) return errno;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return EIO;
  }
  return 0;
}

static int work_exec(const char* self) {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    char* const argv[] = {(char*)self, (char*)"work_memory", NULL};
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    execv(self, argv);
    _exit(126);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return errno;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : EIO;
}

static int work_memory(void) {
  size_t size = 1 << 20;
  void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno;
  memset(p, 1, size);
  int err = 0;
  if (mprotect(p, size, PROT_READ) != 0 || madvise(p, size, MADV_DONTNEED) != 0) err = errno;
  munmap(p, size);
  return err;
}

static int work_random_and_time(void) {
  unsigned char buf[16];
  struct timespec ts;
  if (syscall(SYS_getrandom, buf, sizeof buf, 0) != (long)sizeof buf) return errno;
  // The raw syscall, not the vDSO, so the profile's clock_gettime entry is what is tested.
  if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0) return errno;
  return 0;
}

static int run(const char* name, const char* self) {
  static const struct {
    const char* name;
    int ns_flag;
  } kCloneFlags[] = {
      {"clone_newns", CLONE_NEWNS},         {"clone_newuts", CLONE_NEWUTS},
      {"clone_newipc", CLONE_NEWIPC},       {"clone_newuser", CLONE_NEWUSER},
      {"clone_newpid", CLONE_NEWPID},       {"clone_newnet", CLONE_NEWNET},
      {"clone_newcgroup", CLONE_NEWCGROUP},
  };
  for (size_t i = 0; i < sizeof kCloneFlags / sizeof kCloneFlags[0]; ++i) {
    if (strcmp(name, kCloneFlags[i].name) == 0)
      return clone_with((unsigned long)kCloneFlags[i].ns_flag);
  }
#define PROBE(n, expr) \
  if (strcmp(name, n) == 0) return result_of(expr)
  // Ordinary work.
  if (strcmp(name, "work_file") == 0) return work_file();
  if (strcmp(name, "work_read_file") == 0) return work_read_file(self);
  if (strcmp(name, "work_tcp4") == 0) return work_tcp4();
  if (strcmp(name, "work_udp") == 0) return work_udp();
  if (strcmp(name, "work_unix") == 0) return work_unix();
  if (strcmp(name, "work_loop") == 0) return work_loop();
  if (strcmp(name, "work_thread") == 0) return work_thread();
  if (strcmp(name, "work_fork") == 0) return work_fork();
  if (strcmp(name, "work_exec") == 0) return work_exec(self);
  if (strcmp(name, "work_memory") == 0) return work_memory();
  if (strcmp(name, "work_random_and_time") == 0) return work_random_and_time();
  PROBE("personality_query", syscall(SYS_personality, 0xffffffffUL));
  PROBE("socket_inet6_dgram", syscall(SYS_socket, AF_INET6, SOCK_DGRAM, 0));
  PROBE("socket_netlink_route", syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0));
  PROBE("socket_inet_tcp_proto", syscall(SYS_socket, AF_INET, SOCK_STREAM, IPPROTO_TCP));
  PROBE("socket_inet6_udp_proto", syscall(SYS_socket, AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_UDP));
  // An allowed ioctl on a bad descriptor reaches the kernel and answers EBADF (9).
  PROBE("ioctl_tcgets_badfd", syscall(SYS_ioctl, -1, TCGETS, NULL));
  // Process inspection.
  PROBE("ptrace", syscall(SYS_ptrace, PTRACE_PEEKDATA, 0x7fffffff, 0, 0));
  PROBE("process_vm_readv", syscall(SYS_process_vm_readv, 0x7fffffff, NULL, 0, NULL, 0, 0));
  PROBE("process_vm_writev", syscall(SYS_process_vm_writev, 0x7fffffff, NULL, 0, NULL, 0, 0));
  PROBE("kcmp", syscall(SYS_kcmp, 0x7fffffff, 0x7fffffff, 0, 0, 0));
  PROBE("pidfd_getfd", syscall(SYS_pidfd_getfd, -1, 0, 0));
  PROBE("process_madvise", syscall(SYS_process_madvise, -1, NULL, 0, 0, 0));
  // Kernel interfaces with a long exploit history.
  PROBE("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));
  PROBE("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
  PROBE("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL, 0));
  PROBE("userfaultfd", syscall(SYS_userfaultfd, -1));
  PROBE("keyctl", syscall(SYS_keyctl, -1, 0, 0, 0, 0));
  PROBE("add_key", syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
  PROBE("request_key", syscall(SYS_request_key, NULL, NULL, NULL, 0));
  PROBE("bpf", syscall(SYS_bpf, -1, NULL, 0));
  PROBE("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
  // Namespaces.
  PROBE("unshare", syscall(SYS_unshare, CLONE_NEWUSER));
  PROBE("setns", syscall(SYS_setns, -1, 0));
  PROBE("clone3", syscall(SYS_clone3, NULL, 0));
  // Mounts.
  PROBE("mount", syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
  PROBE("umount2", syscall(SYS_umount2, "/nonexistent-probe", 0));
  PROBE("pivot_root", syscall(SYS_pivot_root, "/nonexistent-probe", "/nonexistent-probe"));
  PROBE("move_mount", syscall(SYS_move_mount, -1, NULL, -1, NULL, 0));
  PROBE("open_tree", syscall(SYS_open_tree, -1, NULL, 0));
  PROBE("fsopen", syscall(SYS_fsopen, NULL, 0));
  PROBE("fsconfig", syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0));
  PROBE("fsmount", syscall(SYS_fsmount, -1, 0, 0));
  PROBE("fspick", syscall(SYS_fspick, -1, NULL, 0));
  PROBE("mount_setattr", syscall(SYS_mount_setattr, -1, NULL, 0, NULL, 0));
  PROBE("chroot", syscall(SYS_chroot, "/nonexistent-probe"));
  // Kernel code and the host.
  PROBE("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
  PROBE("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0));
  PROBE("init_module", syscall(SYS_init_module, NULL, 0, NULL));
  PROBE("finit_module", syscall(SYS_finit_module, -1, NULL, 0));
  PROBE("delete_module", syscall(SYS_delete_module, NULL, 0));
  PROBE("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
  PROBE("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
  PROBE("name_to_handle_at", syscall(SYS_name_to_handle_at, -1, NULL, NULL, NULL, 0));
  PROBE("syslog", syscall(SYS_syslog, 10, NULL, 0));
  PROBE("personality_addr_no_randomize", syscall(SYS_personality, ADDR_NO_RANDOMIZE));
  // Socket families and types outside the allowlist.
  PROBE("socket_packet", syscall(SYS_socket, AF_PACKET, SOCK_RAW, 0));
  PROBE("socket_inet_raw", syscall(SYS_socket, AF_INET, SOCK_RAW, IPPROTO_ICMP));
  PROBE("socket_alg", syscall(SYS_socket, kAfAlg, SOCK_SEQPACKET, 0));
  PROBE("socket_vsock", syscall(SYS_socket, kAfVsock, SOCK_STREAM, 0));
  PROBE("socket_netlink_netfilter", syscall(SYS_socket, AF_NETLINK, SOCK_RAW, kNetlinkNetfilter));
  // The kernel reads the family as an int; the filter compares all 64 bits.
  PROBE("socket_inet_high_bits", syscall(SYS_socket, (1UL << 32) | AF_INET, SOCK_STREAM, 0));
  // Protocols other than TCP and UDP: each number may autoload a kernel module.
  PROBE("socket_sctp", syscall(SYS_socket, AF_INET, SOCK_STREAM, 132));
  PROBE("socket_mptcp", syscall(SYS_socket, AF_INET, SOCK_STREAM, 262));
  PROBE("socket_l2tp", syscall(SYS_socket, AF_INET, SOCK_DGRAM, 115));
  PROBE("socket_udplite6", syscall(SYS_socket, AF_INET6, SOCK_DGRAM, 136));
  PROBE("socket_icmp_dgram", syscall(SYS_socket, AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
  PROBE("socket_icmpv6_dgram", syscall(SYS_socket, AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6));
  // The kernel reads the protocol as an int: 6 with a high bit would be TCP to it.
  PROBE("socket_tcp_proto_high_bits", syscall(SYS_socket, AF_INET, SOCK_STREAM, (1UL << 32) | IPPROTO_TCP));
  // Terminal input injection; the kernel reads the request as 32 bits (CVE-2019-10063).
  PROBE("ioctl_tiocsti", syscall(SYS_ioctl, -1, TIOCSTI, NULL));
  PROBE("ioctl_tiocsti_high_bits", syscall(SYS_ioctl, -1, (1UL << 32) | TIOCSTI, NULL));
  PROBE("ioctl_tioclinux", syscall(SYS_ioctl, -1, TIOCLINUX, NULL));
  // Other ABIs share the x86_64 kernel but not the profile's syscall numbers.
  if (strcmp(name, "i386_getpid") == 0) return i386_getpid();
  PROBE("x32_getpid", syscall(kX32SyscallBit | SYS_getpid));
#undef PROBE
  return -1;
}

int main(int argc, char** argv) {
  int isolate = 0;
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--isolate") == 0) {
    isolate = 1;
    first = 2;
  }
  int unknown = 0;
  for (int i = first; i < argc; ++i) {
    int err;
    if (!isolate) {
      err = run(argv[i], argv[0]);
    } else {
      pid_t pid = fork();
      if (pid < 0) {
        printf("%s fork-failed errno=%d\n", argv[i], errno);
        fflush(stdout);
        continue;
      }
      if (pid == 0) {
        int r = run(argv[i], argv[0]);
        _exit(r < 0 ? 255 : r);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (WIFSIGNALED(status)) {
        printf("%s signal=%d\n", argv[i], WTERMSIG(status));
        fflush(stdout);
        continue;
      }
      err = WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
    }
    if (err < 0) {
      printf("%s unknown-probe\n", argv[i]);
      unknown = 1;
    } else {
      printf("%s errno=%d\n", argv[i], err);
    }
    fflush(stdout);
  }
  return unknown ? 2 : 0;
}
