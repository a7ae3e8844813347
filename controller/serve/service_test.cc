// The systemd units of `spacectl serve` (controller/systemd/) and its socket activation:
// `systemd-analyze verify` accepts each unit without a warning, the system unit's exposure stays
// at "OK" in `systemd-analyze security`, every hardening option carries its reason, and the real
// spacectl serve answers on a socket handed over by `systemd-socket-activate` (the sd_listen_fds
// protocol), refusing one that others may connect to. systemd is not PID 1 in the CI container, so
// serve running under the manager itself is not tested here (controller/systemd/README.md).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "controller/process.h"
#include "controller/serve/activation.h"
#include "controller/serve/testing/serve_client.h"
#include "tests/support/environment.h"

namespace controller::serve {
namespace {

namespace fs = std::filesystem;

const std::string kUnits = std::string(GK_SOURCE_DIR) + "/controller/systemd";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool have(const std::string& program) {
  ProcessRequest r;
  r.argv = {program, "--version"};
  r.timeout = std::chrono::milliseconds(20000);
  return run_process(r).succeeded();
}

class ServiceUnitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-units-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  // A copy of a unit whose bare `spacectl` (resolved by systemd in its search path, where the
  // package installs it) is this build's binary, so verify can check the command exists.
  std::string copy_unit(const std::string& from, const std::string& to_dir) {
    fs::create_directories(to_dir);
    std::string text = read_text(from);
    text = std::regex_replace(text, std::regex("\nExecStart=spacectl "),
                              "\nExecStart=" + std::string(SPACECTL) + " ");
    const std::string to = to_dir + "/" + fs::path(from).filename().string();
    std::ofstream(to) << text;
    return to;
  }
  ProcessOutcome analyze(std::vector<std::string> args) {
    ProcessRequest r;
    r.argv = {"env", "XDG_RUNTIME_DIR=" + dir_, "SYSTEMD_LOG_COLOR=0", "systemd-analyze"};
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    r.timeout = std::chrono::milliseconds(60000);
    return run_process(r);
  }
  std::string dir_;
};

TEST_F(ServiceUnitTest, SystemAndUserUnitsVerifyWithoutAWarning) {
  GK_REQUIRE(have("systemd-analyze"), "systemd-analyze is not installed (Debian package systemd)");
  const std::string sys = dir_ + "/system", user = dir_ + "/user";
  const std::string service = copy_unit(kUnits + "/spacectl.service", sys),
                    socket = copy_unit(kUnits + "/spacectl.socket", sys);
  ProcessOutcome o = analyze({"verify", "--man=no", socket, service});
  EXPECT_TRUE(o.succeeded()) << o.describe();
  EXPECT_EQ(o.err, "") << "systemd-analyze warned about the system units";
  const std::string user_service = copy_unit(kUnits + "/user/spacectl.service", user);
  const std::string user_socket = copy_unit(kUnits + "/user/spacectl.socket", user);
  o = analyze({"--user", "verify", "--man=no", user_socket, user_service});
  EXPECT_TRUE(o.succeeded()) << o.describe();
  EXPECT_EQ(o.err, "") << "systemd-analyze warned about the user units";
  // Control: a misspelt option is a warning verify prints (so the empty output above means
  // something).
  std::ofstream(sys + "/spacectl.service", std::ios::app) << "NoNewPrivilegs=yes\n";
  o = analyze({"verify", "--man=no", socket, sys + "/spacectl.service"});
  EXPECT_NE(o.err.find("NoNewPrivilegs"), std::string::npos) << o.describe();
}

TEST_F(ServiceUnitTest, TheSystemUnitsExposureStaysOk) {
  GK_REQUIRE(have("systemd-analyze"), "systemd-analyze is not installed (Debian package systemd)");
  const std::string service = copy_unit(kUnits + "/spacectl.service", dir_ + "/system");
  // --threshold is tenths of the exposure score: at most 4.0 ("OK" starts below 5).
  ProcessOutcome o = analyze({"security", "--offline=true", "--threshold=40", service});
  EXPECT_TRUE(o.succeeded()) << o.out << o.err;
}

TEST(ServiceUnitText, EveryHardeningOptionCarriesItsReason) {
  const std::regex hardening(
      "^(NoNewPrivileges|Protect[A-Za-z]+|Private[A-Za-z]+|Restrict[A-Za-z]+|Device[A-Za-z]+|"
      "CapabilityBoundingSet|SystemCall[A-Za-z]+|LockPersonality|MemoryDenyWriteExecute|UMask|"
      "KillMode)=");
  for (const char* unit : {"spacectl.service", "user/spacectl.service"}) {
    std::istringstream in(read_text(kUnits + "/" + unit));
    std::string line;
    bool commented = false;  // the block of options this line belongs to has a comment above it
    int options = 0;
    while (std::getline(in, line)) {
      if (line.rfind("#", 0) == 0) {
        commented = true;
        continue;
      }
      if (line.empty() || line[0] == '[') {
        commented = false;
        continue;
      }
      if (std::regex_search(line, hardening)) {
        ++options;
        EXPECT_TRUE(commented) << unit << ": " << line << " has no reason above it";
      }
    }
    EXPECT_GE(options, 8) << unit;
  }
}

TEST(ActivationTest, ListenVariablesAreReadForThisProcessOnly) {
  EXPECT_EQ(listen_fds_count(nullptr, "1", 42).value(), 0);
  EXPECT_EQ(listen_fds_count("42", nullptr, 42).value(), 0);
  EXPECT_EQ(listen_fds_count("41", "1", 42).value(),
            0);  // inherited from the process started before
  EXPECT_EQ(listen_fds_count("42", "1", 42).value(), 1);
  EXPECT_EQ(listen_fds_count("42", "2", 42).value(), 2);
  for (const char* bad : {"", "-1", "01", "1x", "65", "99999999999"})
    EXPECT_FALSE(listen_fds_count("42", bad, 42)) << bad;
  EXPECT_FALSE(listen_fds_count("4x", "1", 42));
}

// serve started by systemd-socket-activate (the manager's protocol, from the systemd package):
// the first connection starts it, it answers on the socket it was handed, and one that others
// may connect to is refused (systemd-socket-activate makes it 0644 itself; the test widens it).
class ActivatedServeTest : public ServiceUnitTest {
 protected:
  // others_may_connect: the socket file is made 0666 before the first connection.
  pid_t start(bool others_may_connect, const std::string& err_path) {
    const std::string sock = dir_ + "/serve.sock", state = dir_ + "/state";
    const pid_t pid = fork();
    if (pid == 0) {
      const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(err, 2);
      dup2(err, 1);
      execlp("systemd-socket-activate", "systemd-socket-activate", "-l", sock.c_str(), SPACECTL,
             "--owner", "testowner", "--state-dir", state.c_str(), "serve", "--no-sweep",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 200 && read_text(err_path).find("Listening on") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (others_may_connect) {
      EXPECT_EQ(chmod(sock.c_str(), 0666), 0);
    }
    return pid;
  }
  static void stop(pid_t pid) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
};

TEST_F(ActivatedServeTest, ServeAnswersOnTheSocketTheManagerHandsIt) {
  GK_REQUIRE(have("systemd-socket-activate"),
             "systemd-socket-activate is not installed (Debian package systemd)");
  const std::string err = dir_ + "/serve.err";
  const pid_t pid = start(false, err);
  const int fd = testing::connect_unix(dir_ + "/serve.sock");
  ASSERT_GE(fd, 0) << read_text(err);
  const testing::Answer a =
      testing::http_exchange(fd, testing::request_text("GET", "/v1/health", "", ""));
  EXPECT_EQ(a.status, 200) << a.body << read_text(err);
  EXPECT_NE(read_text(err).find("(socket activation)"), std::string::npos) << read_text(err);
  stop(pid);
}

TEST_F(ActivatedServeTest, ASocketOthersCouldOpenIsRefused) {
  GK_REQUIRE(have("systemd-socket-activate"),
             "systemd-socket-activate is not installed (Debian package systemd)");
  const std::string err = dir_ + "/serve.err";
  const pid_t pid = start(true, err);
  const int fd = testing::connect_unix(dir_ + "/serve.sock");
  ASSERT_GE(fd, 0) << read_text(err);
  const testing::Answer a =
      testing::http_exchange(fd, testing::request_text("GET", "/v1/health", "", ""));
  EXPECT_EQ(a.status, 0) << "serve answered on a socket anyone may open";
  int status = 0;
  for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(read_text(err).find("no one else may connect to"), std::string::npos) << read_text(err);
  stop(pid);
}

}  // namespace
}  // namespace controller::serve
