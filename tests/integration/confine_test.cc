// Self-confinement of `gatekeeper serve`, observed from outside: /proc of the
// running process, a forbidden call ending it with SIGSYS, a tunnel and the control channel still
// working under the filter, the uid 0 refusal, and --print-seccomp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;

const std::string kTestBinary = GK_BINARY_DIR "/bin/gatekeeper-test";
const std::string kReleaseBinary = GK_BINARY_DIR "/bin/gatekeeper";

#define GK_NEEDS_ROOT() \
  GK_REQUIRE(gk_test::running_as_root(), "root, to start the gatekeeper as uid 65532 with capabilities")

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "Name:\tvalue" lines of /proc/<pid>/status.
std::map<std::string, std::string> status_fields(const std::string& path) {
  std::map<std::string, std::string> out;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto value = line.find_first_not_of(" \t", colon + 1);
    out[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return out;
}

struct Outcome {
  int exit_code = -1;  // -1: ended by a signal
  std::string out, err;
};

// Runs a command line (tests only) and captures both streams.
Outcome run(const std::string& command) {
  const std::string base = "/tmp/gk-confine-" + std::to_string(getpid());
  const int status = std::system((command + " >" + base + ".out 2>" + base + ".err").c_str());
  Outcome r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  unlink((base + ".out").c_str());
  unlink((base + ".err").c_str());
  return r;
}

TEST(ConfineTest, EveryThreadShowsTheFilterNoNewPrivsAndNoCapabilities) {
  GK_NEEDS_ROOT();
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready()) << gk.ready_line << gk.stderr_text();
  const std::string task_dir = "/proc/" + std::to_string(gk.pid()) + "/task";
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator(task_dir)) {
    ++threads;
    auto status = status_fields(task.path().string() + "/status");
    EXPECT_EQ(status["Seccomp"], "2") << task.path();
    EXPECT_EQ(status["NoNewPrivs"], "1") << task.path();
    EXPECT_EQ(status["CapEff"], "0000000000000000") << task.path();
    EXPECT_EQ(status["CapPrm"], "0000000000000000") << task.path();
    EXPECT_EQ(status["CapInh"], "0000000000000000") << task.path();
    EXPECT_EQ(status["CapAmb"], "0000000000000000") << task.path();
    // The harness started it with CAP_SETPCAP, so emptying the bounding set was possible.
    EXPECT_EQ(status["CapBnd"], "0000000000000000") << task.path();
    EXPECT_EQ(status["Uid"].substr(0, 5), std::to_string(gk_it::kGatekeeperUid)) << status["Uid"];
  }
  EXPECT_GE(threads, 1);
}

TEST(ConfineTest, NoCoreFilesNoNewProcessesAndNotDumpable) {
  GK_NEEDS_ROOT();
  Gatekeeper gk({});
  ASSERT_TRUE(gk.ready()) << gk.ready_line << gk.stderr_text();
  const std::string proc = "/proc/" + std::to_string(gk.pid());
  const std::string limits = read_file(proc + "/limits");
  EXPECT_NE(limits.find("Max core file size        0                    0 "), std::string::npos) << limits;
  EXPECT_NE(limits.find("Max processes             0                    0 "), std::string::npos) << limits;
  // Default caps: 128 + 64 + 8 accepted + 3 over-cap + 64 tunnels + 4 × 64 relay pipe ends + 64
  // window upstreams + 16 DNS + 64 fixed + 3 listener reserves (the EMFILE refusal).
  EXPECT_NE(limits.find("Max open files            670                  670 "), std::string::npos)
      << limits;
  // proc(5): the files of a non-dumpable process belong to root, whatever its uid.
  struct stat st {};
  ASSERT_EQ(stat((proc + "/status").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(status_fields(proc + "/status")["Uid"].substr(0, 5), std::to_string(gk_it::kGatekeeperUid));
}

TEST(ConfineTest, ForbiddenSyscallAfterReadyKillsTheProcessWithSigsys) {
  GK_NEEDS_ROOT();
  Gatekeeper gk({"--test-forbidden-syscall-after-ready"});
  ASSERT_TRUE(gk.ready()) << gk.ready_line << gk.stderr_text();
  EXPECT_EQ(gk.wait_for_signal(5000), SIGSYS) << gk.stderr_text();
  EXPECT_EQ(gk.stderr_text().find("ptrace(2) returned"), std::string::npos);
}

TEST(ConfineTest, ConfinedGatekeeperCarriesATunnelAndAnswersControl) {
  GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
             "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
  gk_it::TestNet net;
  ASSERT_TRUE(net.ok()) << net.error;
  Gatekeeper gk({"--dns-server", net.dns()});
  ASSERT_TRUE(gk.ready()) << gk.ready_line << gk.stderr_text();
  EXPECT_EQ(status_fields("/proc/" + std::to_string(gk.pid()) + "/status")["Seccomp"], "2");
  // Past the one-second cache: the decision re-reads the own addresses (getifaddrs, netlink)
  // under the filter.
  usleep(1100000);
  gk.allow({"public.test"});
  auto t = gk_it::open_tunnel(gk.corridor, "public.test:443", "ECHO\nthrough the filter");
  ASSERT_EQ(t.head, gk_it::k200) << gk.stderr_text();
  shutdown(t.fd, SHUT_WR);
  EXPECT_EQ(gk_it::read_until_close(t.fd, 5000), "through the filter");
  close(t.fd);
  EXPECT_EQ(gk_it::open_tunnel(gk.corridor, "loop.test:443").head.substr(0, 12), "HTTP/1.1 403");
  const auto health = gk.request("GET", "/health");
  EXPECT_EQ(health.status, 200);
  ASSERT_FALSE(gk.journal().empty());
  EXPECT_EQ(gk.journal().front().decision, "allow");
  EXPECT_TRUE(gk.alive());
  EXPECT_EQ(gk.terminate(), 0) << gk.stderr_text();
}

TEST(ConfineTest, RefusesUidZeroWithOneLineAndExitTwo) {
  GK_NEEDS_ROOT();
  const Outcome r = run("timeout 10 " + kTestBinary +
                    " serve --bind 127.0.0.1 --corridor-port 0 --window-port 0 --control-port 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "") << "the ready line must not appear";
  std::istringstream lines(r.err);
  std::string line;
  std::vector<std::string> problems;
  while (std::getline(lines, line)) {
    if (line.find("unsafe test build") == std::string::npos) problems.push_back(line);
  }
  ASSERT_EQ(problems.size(), 1u) << r.err;
  EXPECT_NE(problems[0].find("refusing to run as uid 0"), std::string::npos) << problems[0];
}

// Both binaries print the same table; every row has a name, an action, checks and a reason.
TEST(ConfineTest, PrintSeccompListsEveryEntryWithAReason) {
  for (const std::string& binary : {kReleaseBinary, kTestBinary}) {
    const Outcome r = run(binary + " serve --print-seccomp");
    ASSERT_EQ(r.exit_code, 0) << binary << r.err;
    std::istringstream lines(r.out);
    std::string line;
    std::map<std::string, std::string> actions;
    int rows = 0;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      ++rows;
      std::vector<std::string> fields;
      std::istringstream f(line);
      std::string field;
      while (std::getline(f, field, '\t')) fields.push_back(field);
      ASSERT_EQ(fields.size(), 4u) << line;
      EXPECT_FALSE(fields[0].empty()) << line;
      EXPECT_GE(fields[3].size(), 10u) << "a reason, not a placeholder: " << line;
      actions[fields[0]] = fields[1];
    }
    EXPECT_GE(rows, 30) << binary;
    EXPECT_EQ(actions["io_uring_setup"], "errno:ENOSYS");
    EXPECT_EQ(actions["openat"], "errno:EACCES");
    EXPECT_EQ(actions["accept4"], "allow");
    for (const char* forbidden : {"execve", "execveat", "fork", "vfork", "clone", "clone3", "ptrace",
                                  "mount", "umount2", "unshare", "setns", "listen", "socketpair",
                                  "process_vm_readv", "process_vm_writev", "prctl", "seccomp", "mprotect"}) {
      EXPECT_EQ(actions.count(forbidden), 0u) << forbidden << " must not be in the table";
    }
    EXPECT_NE(r.out.find("anything else: kill-process"), std::string::npos);
  }
}

}  // namespace
