// The engine unreachable for every command (the real docker CLI, DOCKER_HOST at a socket nobody
// serves: the path missing, or a socket file whose daemon is gone): each command that needs the
// place answers place_unreachable (exit 3), never an empty list and never another code; a create
// leaves no record behind, and no command changes the state directory's records.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/process.h"
#include "controller/records.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

using nlohmann::json;

bool docker_cli_present() {
  ProcessRequest r;
  r.argv = {"docker", "--version"};
  r.timeout = std::chrono::seconds(30);
  const ProcessOutcome o = run_process(r);
  return o.exited && o.exit_code == 0;
}

std::map<std::string, std::string> records_of(const std::string& state) {
  std::map<std::string, std::string> out;
  if (!std::filesystem::exists(state + "/spaces")) return out;
  for (const auto& e : std::filesystem::directory_iterator(state + "/spaces")) {
    std::ifstream in(e.path(), std::ios::binary);
    out[e.path().filename()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

class UnreachableEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-unreachable-XXXXXX";
    dir_ = mkdtemp(tmpl);
    state_ = dir_ + "/state";
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ProcessOutcome spacectl(const std::string& docker_host, const std::vector<std::string>& args) {
    ProcessRequest r;
    r.argv = {"env",         "DOCKER_HOST=" + docker_host,
              SPACECTL,      "--json",
              "--owner",     "unreachable",
              "--state-dir", state_};
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    r.timeout = std::chrono::seconds(90);
    return run_process(r);
  }
  // A socket file whose server is gone (a stopped daemon leaves its socket behind): ECONNREFUSED.
  std::string stale_socket() {
    const std::string path = dir_ + "/docker.sock";
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    close(fd);
    return "unix://" + path;
  }
  std::string dir_, state_;
};

TEST_F(UnreachableEngineTest, EveryCommandThatNeedsThePlaceSaysPlaceUnreachable) {
  GK_REQUIRE(docker_cli_present(), "needs the docker CLI (no engine is used)");
  const std::string id = "0123456789ab";
  // A recorded space with code in (its start ref in a real repository), so code out goes as far
  // as the place; code in goes to another id, one without code.
  const std::string repo = dir_ + "/repo";
  std::filesystem::create_directories(repo);
  for (const std::vector<std::string>& g :
       {std::vector<std::string>{"init", "-q"},
        {"-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty",
         "-m", "one"},
        {"update-ref", "refs/openchamber/spaces/" + id + "/start", "HEAD"}}) {
    ProcessRequest r;
    r.argv = {"git", "-C", repo};
    r.argv.insert(r.argv.end(), g.begin(), g.end());
    r.timeout = std::chrono::seconds(60);
    ASSERT_TRUE(run_process(r).succeeded()) << g[0];
  }
  SpaceRecord record;
  record.mode = "open";
  record.code = {repo, "/spaces/" + id + "/repo", "/spaces/" + id + "/repo", std::string(40, 'a'),
                 "sent"};
  ASSERT_TRUE(write_record(state_, id, record));
  const std::vector<std::vector<std::string>> commands = {
      {"space", "list"},
      {"space", "show", id},
      {"space", "create", "--name", "unreachable"},
      {"space", "start", id},
      {"space", "stop", id},
      {"space", "remove", id},
      {"space", "verify", id},
      {"space", "exec", id, "--", "true"},
      {"network", "set", id, "--mode", "allowlist"},
      {"grant", "add", id, "g", "--upstream", "https://api.example.com/"},
      {"window-key", id},
      {"journal", id},
      {"policy", id},
      {"code", "in", "0123456789ac", "--repo", repo},
      {"code", "out", id},
      {"sweep"},
      {"place", "check"}};
  for (const std::string& host : {"unix://" + dir_ + "/missing.sock", stale_socket()}) {
    for (const std::vector<std::string>& args : commands) {
      std::string shown = host;
      for (const std::string& a : args) shown += " " + a;
      SCOPED_TRACE(shown);
      const std::map<std::string, std::string> before = records_of(state_);
      const ProcessOutcome o = spacectl(host, args);
      ASSERT_TRUE(o.exited) << o.describe();
      EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
      const json doc = json::parse(o.out, nullptr, false);
      ASSERT_TRUE(doc.is_object()) << o.out << o.err;
      EXPECT_FALSE(doc.contains("spaces")) << "an unreachable place listed as a list: " << o.out;
      ASSERT_TRUE(doc.contains("error")) << o.out;
      EXPECT_EQ(doc["error"].value("code", ""), "place_unreachable") << o.out;
      EXPECT_NE(doc["error"].value("message", "").find("does not answer"), std::string::npos)
          << o.out;
      EXPECT_EQ(records_of(state_), before) << "the records changed";
    }
  }
}

}  // namespace
}  // namespace controller
