// The engine restarted (label docker; root; skip without dockerd, fail under CI=true). Restarting
// the machine's own engine would stop every other user's containers, so each test runs a dockerd
// of its own (its own --data-root, --exec-root, --pidfile and unix socket under /tmp, no default
// bridge, no iptables) and restarts that one; spacectl reaches it through DOCKER_HOST. The images
// load into it from the archives next to the pins, as on a fresh host.
//   - with a space running: the space comes back stopped, `space start` restores it, verify passes;
//   - in the middle of a create: the create fails with an error naming the engine, and a sweep
//     leaves nothing of it.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "tests/support/environment.h"

extern char** environ;

namespace controller {
namespace {

using nlohmann::json;

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";

bool exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

bool dockerd_present() {
  ProcessRequest r;
  r.argv = {"dockerd", "--version"};
  r.timeout = std::chrono::seconds(30);
  const ProcessOutcome o = run_process(r);
  return o.exited && o.exit_code == 0;
}

// stdout to out_path; stderr to stderr_fd, or with stdout when stderr_fd < 0.
pid_t spawn(std::vector<std::string> argv, const std::vector<std::string>& env_extra, int stderr_fd,
            const std::string& out_path) {
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("DOCKER_HOST=", 0) != 0) env_text.emplace_back(*e);
  }
  env_text.insert(env_text.end(), env_extra.begin(), env_extra.end());
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (stderr_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, stderr_fd, 2);
  } else {
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0].c_str(), &fa, nullptr, cargv.data(), env.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

class EngineRestartDockerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gk-engine-XXXXXX";
    dir_ = mkdtemp(tmpl);
    host_ = "unix://" + dir_ + "/docker.sock";
    owner_ = "engine" + random_hex(6);
  }
  void TearDown() override {
    if (engine_ > 0) {
      // Everything of this owner goes with the engine's data root; the loop disks are ours to free.
      if (!id_.empty()) (void)spacectl({"space", "remove", id_});
      (void)spacectl({"sweep", "--grace", "0"});
      stop_engine();
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  bool ready() {
    return gk_test::running_as_root() && dockerd_present() &&
           exists(kBin + "/gatekeeper-image.id") && exists(kBin + "/gatekeeper-image.tar") &&
           exists(kBin + "/space-image.id") && exists(kBin + "/space-image.tar") &&
           exists(kBin + "/seccomp/space.json");
  }
  ProcessOutcome docker(const std::vector<std::string>& args) {
    ProcessRequest r;
    r.argv = {"docker", "-H", host_};
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    r.timeout = std::chrono::minutes(2);
    return run_process(r);
  }
  bool start_engine() {
    engine_ = spawn({"dockerd", "--data-root", dir_ + "/data", "--exec-root", dir_ + "/exec",
                     "--pidfile", dir_ + "/dockerd.pid", "-H", host_, "--bridge=none",
                     "--iptables=false", "--ip6tables=false", "--storage-driver=overlay2"},
                    {}, -1, dir_ + "/dockerd.log");
    if (engine_ < 0) return false;
    for (int i = 0; i < 240; ++i) {
      if (docker({"version", "--format", "{{.Server.Version}}"}).succeeded()) return true;
      usleep(250000);
    }
    return false;
  }
  void stop_engine() {
    if (engine_ <= 0) return;
    kill(engine_, SIGTERM);
    for (int i = 0; i < 240; ++i) {
      if (waitpid(engine_, nullptr, WNOHANG) == engine_) {
        engine_ = -1;
        return;
      }
      usleep(250000);
    }
    kill(engine_, SIGKILL);
    waitpid(engine_, nullptr, 0);
    engine_ = -1;
  }
  std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> a = {SPACECTL,      "--json",        "--owner",    owner_,
                                  "--state-dir", dir_ + "/state", "--disk-dir", dir_ + "/disks"};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }
  ProcessOutcome spacectl(const std::vector<std::string>& args) {
    ProcessRequest r;
    r.argv = {"env", "DOCKER_HOST=" + host_};
    const std::vector<std::string> a = argv(args);
    r.argv.insert(r.argv.end(), a.begin(), a.end());
    r.timeout = std::chrono::minutes(5);
    return run_process(r);
  }
  std::string labelled() { return testing::labelled(owner_, {"docker", "-H", host_}); }

  std::string dir_, host_, owner_, id_;
  pid_t engine_ = -1;
};

TEST_F(EngineRestartDockerTest, ASpaceComesBackStoppedAndStartRestoresIt) {
  GK_REQUIRE(ready(),
             "needs root, dockerd and the pinned images with their archives (cmake --build <dir> "
             "--target images)");
  ASSERT_TRUE(start_engine()) << "a dockerd of our own did not answer on " << host_;
  ProcessOutcome o = spacectl({"space", "create", "--name", "engine", "--memory", "256m"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  id_ = json::parse(o.out)["id"];
  o = spacectl({"network", "set", id_, "--mode", "allowlist", "--domain", "example.com"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;

  stop_engine();
  o = spacectl({"space", "list"});
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_EQ(json::parse(o.out, nullptr, false)["error"]["code"], "place_unreachable") << o.out;
  ASSERT_TRUE(start_engine());

  o = spacectl({"space", "list"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json listed = json::parse(o.out)["spaces"];
  ASSERT_EQ(listed.size(), 1u) << o.out;
  EXPECT_EQ(listed[0]["state"], "stopped") << listed[0];
  o = spacectl({"space", "start", id_});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(json::parse(o.out)["network_restored"], true) << o.out;
  o = spacectl({"policy", id_});
  EXPECT_EQ(json::parse(o.out, nullptr, false)["domains"], json::array({"example.com"})) << o.out;
  o = spacectl({"space", "verify", id_});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  o = spacectl({"space", "remove", id_});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  id_.clear();
  EXPECT_EQ(labelled(), "");
}

TEST_F(EngineRestartDockerTest, ACreateInterruptedByARestartFailsClearlyAndSweepLeavesNothing) {
  GK_REQUIRE(ready(),
             "needs root, dockerd and the pinned images with their archives (cmake --build <dir> "
             "--target images)");
  ASSERT_TRUE(start_engine()) << "a dockerd of our own did not answer on " << host_;
  int err[2];
  ASSERT_EQ(pipe2(err, O_CLOEXEC), 0);
  std::vector<std::string> a =
      argv({"space", "create", "--name", "interrupted", "--memory", "256m"});
  const pid_t create = spawn(a, {"DOCKER_HOST=" + host_}, err[1], dir_ + "/create.json");
  close(err[1]);
  ASSERT_GT(create, 0);
  std::string seen;
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(err[0], chunk, sizeof chunk);
    if (n <= 0) break;
    seen.append(chunk, static_cast<std::size_t>(n));
    if (seen.find(": creating_gatekeeper\n") != std::string::npos) break;
  }
  close(err[0]);
  ASSERT_NE(seen.find("creating_gatekeeper"), std::string::npos) << seen;
  stop_engine();
  int status = 0;
  waitpid(create, &status, 0);
  ASSERT_TRUE(start_engine());
  // The create did not succeed, and said why: the engine, by name of what it was doing.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "status " << status;
  std::ifstream in(dir_ + "/create.json");
  const std::string answer((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const json failed = json::parse(answer, nullptr, false);
  ASSERT_TRUE(failed.is_object() && failed.contains("error")) << answer;
  const std::string code = failed["error"].value("code", "");
  EXPECT_TRUE(code == "place_unreachable" || code == "command_failed" || code == "interrupted")
      << answer;
  EXPECT_NE(failed["error"].value("message", "").find("docker"), std::string::npos) << answer;
  ProcessOutcome o = spacectl({"sweep", "--grace", "0"});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(labelled(), "") << "left in the engine after the sweep";
  o = spacectl({"space", "list"});
  EXPECT_EQ(json::parse(o.out, nullptr, false)["spaces"], json::array()) << o.out;
}

}  // namespace
}  // namespace controller
