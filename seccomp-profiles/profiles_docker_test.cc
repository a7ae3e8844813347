// Runs the static probe (probe/probe.c) in a container under each profile and checks, call by call,
// that refusals carry the profile's answer and ordinary work still succeeds. The image holds only
// the probe and an empty /tmp; it is imported from a local tar because no registry is reachable.
// Every container runs with --network none: the probe's sockets stay on the container loopback.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/environment.h"

namespace {

constexpr auto kDockerTimeout = std::chrono::seconds(60);
constexpr int kSigsysExit = 128 + SIGSYS;  // docker run's status for a KILL_PROCESS death
constexpr const char* kLabel = "gk.test=seccomp-profiles";

struct Outcome {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// fork/execvp with an argv (never a shell), output captured, killed at the deadline.
Outcome run(const std::vector<std::string>& args, std::chrono::seconds timeout = kDockerTimeout) {
  Outcome out;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return out;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  out.started = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got <= 0) break;
    out.output.append(buf, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

std::string tail(const std::string& s) { return s.size() > 2000 ? s.substr(s.size() - 2000) : s; }

// "name errno=95" lines into {name: "errno=95"}.
std::map<std::string, std::string> results(const std::string& output) {
  std::map<std::string, std::string> out;
  std::istringstream in(output);
  std::string name;
  std::string value;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (fields >> name >> value) out[name] = value;
  }
  return out;
}

std::string profile(const char* file) {
  return std::string(GK_SOURCE_DIR) + "/seccomp-profiles/" + file;
}

class ProfileDockerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers `docker info`");
    if (IsSkipped() || HasFailure()) return;
    ASSERT_TRUE(import_probe_image());
  }

  void TearDown() override {
    for (const std::string& name : containers_) run({"docker", "rm", "-f", name});
    if (!image_.empty()) run({"docker", "rmi", "-f", image_});
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  // A one-file root filesystem: /probe (static) and a sticky /tmp for the file-I/O probe.
  bool import_probe_image() {
    char tmpl[] = "/tmp/gk-seccomp-probe-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      ADD_FAILURE() << "mkdtemp(" << tmpl << "): " << std::strerror(errno);
      return false;
    }
    dir_ = tmpl;
    const std::filesystem::path root = dir_ / "root";
    std::error_code ec;
    std::filesystem::create_directories(root / "tmp", ec);
    std::filesystem::copy_file(GK_SECCOMP_PROBE, root / "probe", ec);
    if (ec || chmod((root / "tmp").c_str(), 01777) != 0 ||
        chmod((root / "probe").c_str(), 0755) != 0) {
      ADD_FAILURE() << "preparing " << root << ": " << ec.message();
      return false;
    }
    const std::string tar = (dir_ / "rootfs.tar").string();
    Outcome t = run(
        {"tar", "--owner=0", "--group=0", "--numeric-owner", "-C", root.string(), "-cf", tar, "."});
    if (t.exit_code != 0) {
      ADD_FAILURE() << "tar " << tar << ": exit " << t.exit_code << ": " << tail(t.output);
      return false;
    }
    std::string tag = "gk-seccomp-probe:" + std::to_string(getpid());
    Outcome imp = run({"docker", "import", "--change", std::string("LABEL ") + kLabel, tar, tag});
    if (imp.exit_code != 0) {
      ADD_FAILURE() << "docker import " << tag << ": exit " << imp.exit_code << ": "
                    << tail(imp.output);
      return false;
    }
    image_ = tag;
    return true;
  }

  // docker run under a profile, with the flags the controller uses for both containers.
  Outcome probe(const char* profile_file, const std::vector<std::string>& probe_args,
                const std::vector<std::string>& extra_flags = {}) {
    std::string name =
        "gk-seccomp-" + std::to_string(getpid()) + "-" + std::to_string(containers_.size());
    containers_.push_back(name);
    std::vector<std::string> args = {"docker",
                                     "run",
                                     "--rm",
                                     "--name",
                                     name,
                                     "--label",
                                     kLabel,
                                     "--user",
                                     "65532:65532",
                                     "--cap-drop",
                                     "ALL",
                                     "--security-opt",
                                     "no-new-privileges",
                                     "--pids-limit",
                                     "64",
                                     "--network",
                                     "none"};
    if (profile_file != nullptr) {
      args.push_back("--security-opt");
      args.push_back("seccomp=" + profile(profile_file));
    }
    args.insert(args.end(), extra_flags.begin(), extra_flags.end());
    args.push_back(image_);
    args.push_back("/probe");
    args.insert(args.end(), probe_args.begin(), probe_args.end());
    Outcome o = run(args);
    EXPECT_FALSE(o.timed_out) << "docker run " << name << ": timed out: " << tail(o.output);
    return o;
  }

  std::filesystem::path dir_;
  std::string image_;
  std::vector<std::string> containers_;
};

const std::vector<std::string> kSpaceWork = {"work_file",
                                             "work_read_file",
                                             "work_tcp4",
                                             "work_udp",
                                             "work_unix",
                                             "work_loop",
                                             "work_thread",
                                             "work_fork",
                                             "work_exec",
                                             "work_memory",
                                             "work_random_and_time",
                                             "personality_query",
                                             "socket_inet6_dgram",
                                             "socket_netlink_route",
                                             "socket_inet_tcp_proto",
                                             "socket_inet6_udp_proto"};

const std::vector<std::string> kSpaceRefused = {"ptrace",
                                                "process_vm_readv",
                                                "process_vm_writev",
                                                "kcmp",
                                                "pidfd_getfd",
                                                "process_madvise",
                                                "io_uring_setup",
                                                "io_uring_enter",
                                                "io_uring_register",
                                                "userfaultfd",
                                                "keyctl",
                                                "add_key",
                                                "request_key",
                                                "bpf",
                                                "perf_event_open",
                                                "unshare",
                                                "setns",
                                                "clone_newns",
                                                "clone_newuts",
                                                "clone_newipc",
                                                "clone_newuser",
                                                "clone_newpid",
                                                "clone_newnet",
                                                "clone_newcgroup",
                                                "mount",
                                                "umount2",
                                                "pivot_root",
                                                "move_mount",
                                                "open_tree",
                                                "fsopen",
                                                "fsconfig",
                                                "fsmount",
                                                "fspick",
                                                "mount_setattr",
                                                "chroot",
                                                "kexec_load",
                                                "kexec_file_load",
                                                "init_module",
                                                "finit_module",
                                                "delete_module",
                                                "reboot",
                                                "open_by_handle_at",
                                                "name_to_handle_at",
                                                "syslog",
                                                "personality_addr_no_randomize"};

const std::vector<std::string> kSpaceRefusedSockets = {
    "socket_packet", "socket_inet_raw",          "socket_alg",
    "socket_vsock",  "socket_netlink_netfilter", "socket_inet_high_bits",
    "socket_sctp",   "socket_mptcp",             "socket_l2tp",
    "socket_udplite6", "socket_icmp_dgram",      "socket_icmpv6_dgram",
    "socket_tcp_proto_high_bits", "ioctl_tiocsti", "ioctl_tiocsti_high_bits", "ioctl_tioclinux"};

std::vector<std::string> isolated(std::vector<std::string> names) {
  names.insert(names.begin(), "--isolate");
  return names;
}

TEST_F(ProfileDockerTest, SpaceProfileLetsOrdinaryWorkSucceed) {
  Outcome o = probe("space.json", isolated(kSpaceWork));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  for (const std::string& name : kSpaceWork) EXPECT_EQ(r[name], "errno=0") << name;
}

TEST_F(ProfileDockerTest, SpaceProfileRefusesEachDangerousCallWithEopnotsupp) {
  Outcome o = probe("space.json", isolated(kSpaceRefused));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  for (const std::string& name : kSpaceRefused) EXPECT_EQ(r[name], "errno=95") << name;
}

TEST_F(ProfileDockerTest, SpaceProfileRefusesSocketsOutsideTheAllowlistWithEopnotsupp) {
  Outcome o = probe("space.json", isolated(kSpaceRefusedSockets));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  for (const std::string& name : kSpaceRefusedSockets) EXPECT_EQ(r[name], "errno=95") << name;
}

// The control for the ioctl refusals: an allowed request on a bad descriptor reaches the kernel.
TEST_F(ProfileDockerTest, SpaceProfileLetsOtherIoctlsReachTheKernel) {
  Outcome o = probe("space.json", isolated({"ioctl_tcgets_badfd", "ioctl_tiocsti"}));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  EXPECT_EQ(r["ioctl_tcgets_badfd"], "errno=9");
  EXPECT_EQ(r["ioctl_tiocsti"], "errno=95");
}

// glibc falls back to clone() only on ENOSYS; work_thread proves the fallback path works.
TEST_F(ProfileDockerTest, SpaceProfileAnswersClone3WithEnosysAndThreadsStillStart) {
  Outcome o = probe("space.json", isolated({"clone3", "work_thread"}));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  EXPECT_EQ(r["clone3"], "errno=38");
  EXPECT_EQ(r["work_thread"], "errno=0");
}

TEST_F(ProfileDockerTest, SpaceProfileRefusesTheI386AndX32SyscallAbis) {
  Outcome o = probe("space.json", isolated({"i386_getpid", "x32_getpid"}));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  for (const char* name : {"i386_getpid", "x32_getpid"}) {
    EXPECT_FALSE(r[name].empty()) << name;
    EXPECT_NE(r[name], "errno=0") << name << " ran under an x86_64-only profile";
  }
}

// The distinctive errno is the profile's doing: under the engine's default profile the same calls
// end with the kernel's or the capability check's own answer.
TEST_F(ProfileDockerTest, EngineDefaultProfileGivesOtherAnswersThanTheSpaceProfile) {
  std::vector<std::string> names = kSpaceRefused;
  names.insert(names.end(), kSpaceRefusedSockets.begin(), kSpaceRefusedSockets.end());
  Outcome o = probe(nullptr, isolated(names));
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  for (const std::string& name : names) {
    EXPECT_FALSE(r[name].empty()) << name;
    EXPECT_NE(r[name], "errno=95") << name;
  }
}

const std::vector<std::string> kGatekeeperWork = {
    "work_read_file", "work_tcp4",           "work_udp", "work_loop", "work_thread",
    "work_memory",    "work_random_and_time"};

TEST_F(ProfileDockerTest, GatekeeperProfileLetsTheEventLoopWorkSucceed) {
  Outcome o = probe("gatekeeper.json", kGatekeeperWork);
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  for (const std::string& name : kGatekeeperWork) EXPECT_EQ(r[name], "errno=0") << name;
}

// libuv probes io_uring_setup at loop start; a kill there would take the gatekeeper down.
TEST_F(ProfileDockerTest, GatekeeperProfileAnswersIoUringWithEnosysAndKeepsRunning) {
  Outcome o = probe("gatekeeper.json", {"io_uring_setup", "io_uring_enter", "clone3", "work_loop"});
  ASSERT_EQ(o.exit_code, 0) << tail(o.output);
  auto r = results(o.output);
  EXPECT_EQ(r["io_uring_setup"], "errno=38");
  EXPECT_EQ(r["io_uring_enter"], "errno=38");
  EXPECT_EQ(r["clone3"], "errno=38");
  EXPECT_EQ(r["work_loop"], "errno=0");
}

class ProfileDockerKillTest : public ProfileDockerTest,
                              public ::testing::WithParamInterface<const char*> {};

// Each forbidden call ends the whole process with SIGSYS before it can report anything.
TEST_P(ProfileDockerKillTest, GatekeeperProfileKillsTheProcess) {
  const std::string call = GetParam();
  Outcome o = probe("gatekeeper.json", {"work_loop", call});
  EXPECT_EQ(o.exit_code, kSigsysExit) << tail(o.output);
  auto r = results(o.output);
  EXPECT_EQ(r["work_loop"], "errno=0") << "the container must have started: " << tail(o.output);
  EXPECT_EQ(r.count(call), 0u) << call << " returned instead of killing: " << r[call];
}

INSTANTIATE_TEST_SUITE_P(ForbiddenCalls, ProfileDockerKillTest,
                         ::testing::Values("ptrace", "socket_packet", "socket_inet_raw",
                                           "work_fork", "unshare", "clone_newuser", "mount", "bpf",
                                           "keyctl", "userfaultfd", "work_unix"));

}  // namespace
