// spacectl end to end against the recording fake `docker` (testing/fake_docker.cc): records under
// a lock, state directory and secret rules, input checks before anything is created, error codes
// from the right source, stop signals that roll back. Each test pins one finding of a review.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/testing/fake_docker_fixture.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

using nlohmann::json;

bool any_call(const std::vector<Call>& calls, const std::vector<std::string>& prefix) {
  for (const Call& c : calls) {
    if (c.argv.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), c.argv.begin())) return true;
  }
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string error_code(const ProcessOutcome& o) {
  const json doc = json::parse(o.out, nullptr, false);
  return doc.is_object() && doc.contains("error") ? doc["error"].value("code", "") : "";
}

// Two `network set` at once: the first holds its gatekeeper answer back, the second comes while
// it does. Without one lock over read, gatekeeper call and write, the record ended "open" while the
// gatekeeper held "allowlist" (and `space start` re-sent "open"). The second is turned away at
// once with space_busy (exit 7), never left waiting silently.
TEST_F(FakeDockerTest, ASecondActionOnABusySpaceIsRefusedAtOnceAndTheRecordSaysWhatTheGatekeeperHolds) {
  const std::string state = dir_ + "/gk-state";
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  ProcessOutcome first, second;
  std::chrono::steady_clock::duration second_took{};
  std::thread a([&] {
    first = spacectl({"network", "set", "0123456789ab", "--mode", "open"}, {},
                     {"env", "FAKE_DOCKER_STATE=" + state, "FAKE_DOCKER_EXEC_DELAY_BEFORE_MS=0", "FAKE_DOCKER_EXEC_DELAY_AFTER_MS=2500"});
  });
  usleep(600000);  // the first one is inside its gatekeeper call
  std::thread b([&] {
    const auto t0 = std::chrono::steady_clock::now();
    second = spacectl({"network", "set", "0123456789ab", "--mode", "allowlist", "--domain", "example.com"}, {},
                      {"env", "FAKE_DOCKER_STATE=" + state, "FAKE_DOCKER_EXEC_DELAY_BEFORE_MS=0", "FAKE_DOCKER_EXEC_DELAY_AFTER_MS=0"});
    second_took = std::chrono::steady_clock::now() - t0;
  });
  a.join();
  b.join();
  ASSERT_TRUE(first.succeeded()) << first.out << first.err;
  EXPECT_EQ(error_code(second), "space_busy") << second.out << second.err;
  EXPECT_EQ(second.exit_code, 7);
  EXPECT_LT(second_took, std::chrono::milliseconds(1500)) << "the second action waited for the first";
  const std::string held = read_file(state + "/network");
  const std::string last = held.substr(held.rfind('{', held.size() - 2));
  const json gatekeeper = json::parse(last);
  const json record = json::parse(read_file(dir_ + "/state/spaces/0123456789ab.json"));
  EXPECT_EQ(record["mode"], gatekeeper["mode"]) << "gatekeeper holds " << last << ", record says " << record.dump();
  EXPECT_EQ(record["mode"], "open");
  // The lock went with the first process: the next action runs.
  EXPECT_TRUE(spacectl({"network", "set", "0123456789ab", "--mode", "allowlist"}).succeeded());
}

// `spacectl sweep`: a creation whose process died before the place made anything (a `preparing`
// record nobody holds the lock of) goes with its record; a space with a plain record stays.
TEST_F(FakeDockerTest, SweepRemovesARecordOfACreationWhoseProcessDied) {
  ASSERT_TRUE(spacectl({"network", "set", "0123456789ab", "--mode", "open"}).succeeded());  // a plain record
  const std::string dead = dir_ + "/state/spaces/00000000abcd.json";
  std::ofstream(dead) << R"({"version":1,"mode":"allowlist","domains":[],"grants":[],)"
                      << R"("creation":{"state":"preparing","step":"creating_space","started":"2001-01-01T00:00:00Z",)"
                      << R"("failure_code":"","failure_message":""}})";
  chmod(dead.c_str(), 0600);
  ProcessOutcome listed = spacectl({"space", "list"});
  ASSERT_TRUE(listed.succeeded()) << listed.out << listed.err;
  const json list = json::parse(listed.out);
  ASSERT_EQ(list["spaces"].size(), 1u) << listed.out;
  EXPECT_EQ(list["spaces"][0]["state"], "failed");
  EXPECT_EQ(list["spaces"][0]["failure"]["code"], "space_creation_interrupted");
  const ProcessOutcome swept = spacectl({"sweep", "--grace", "0"});
  ASSERT_TRUE(swept.succeeded()) << swept.out << swept.err;
  EXPECT_EQ(json::parse(swept.out)["records_removed"], json::array({"00000000abcd"})) << swept.out;
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/state/spaces/0123456789ab.json"));
}

TEST_F(FakeDockerTest, ARecordWithAWrongTypeIsUnreadableNotDefaultsOrInternal) {
  ASSERT_TRUE(spacectl({"network", "set", "0123456789ab", "--mode", "open"}).succeeded());
  const std::string path = dir_ + "/state/spaces/0123456789ab.json";
  std::ofstream(path, std::ios::trunc) << R"({"version":1,"mode":7,"domains":[],"grants":[]})";
  ProcessOutcome o = spacectl({"network", "set", "0123456789ab", "--mode", "open"});
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out << o.err;
  std::ofstream(path, std::ios::trunc) << R"({"version":1,"mode":"open","domains":[],"grants":[],"secret":"x"})";
  o = spacectl({"grant", "add", "0123456789ab", "g", "--upstream", "https://api.example.com/v1"});
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out << o.err;
  EXPECT_FALSE(any_call(calls(), {"exec", "--interactive", "--user", "65532:65532"}) && read_file(path).find("\"g\"") != std::string::npos);
}

TEST_F(FakeDockerTest, RecordsAreWrittenThroughAFreshFileAndNoTemporaryIsLeft) {
  ASSERT_TRUE(spacectl({"network", "set", "0123456789ab", "--mode", "open"}).succeeded());
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/state/spaces")) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "0123456789ab.json");
  }
  EXPECT_EQ(entries, 1u);
}

// ---- state directory and secrets on the host ----

TEST_F(FakeDockerTest, WithoutHomeThereIsNoStateDirectoryAndNothingInTmp) {
  // The old fallback was /tmp/.local/state/spacectl; whatever is there must stay as it was.
  const std::string fallback = "/tmp/.local/state/spacectl/owner";
  struct stat before{}, after{};
  const bool existed = lstat(fallback.c_str(), &before) == 0;
  ProcessRequest r;
  r.argv = {"env", "-u", "HOME", "-u", "XDG_STATE_HOME", spacectl_path(), "--json", "space", "list"};
  const ProcessOutcome o = run_process(r);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out;
  const bool exists = lstat(fallback.c_str(), &after) == 0;
  EXPECT_EQ(existed, exists) << "spacectl fell back to /tmp";
  if (existed && exists) {
    EXPECT_EQ(before.st_ino, after.st_ino) << "spacectl rewrote the owner in /tmp";
  }
}

TEST_F(FakeDockerTest, AStateDirectoryOthersCanWriteOrASymlinkIsRefused) {
  const std::string state = dir_ + "/state";
  ASSERT_EQ(mkdir(state.c_str(), 0777), 0);
  ASSERT_EQ(chmod(state.c_str(), 0777), 0);
  ProcessRequest r;
  r.argv = {spacectl_path(), "--json", "--state-dir", state, "space", "list"};
  ProcessOutcome o = run_process(r);
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out;
  EXPECT_NE(o.out.find("writable by group or others"), std::string::npos) << o.out;
  const std::string link = dir_ + "/link";
  ASSERT_EQ(chmod(state.c_str(), 0700), 0);
  ASSERT_EQ(symlink(state.c_str(), link.c_str()), 0);
  r.argv = {spacectl_path(), "--json", "--state-dir", link, "space", "list"};
  o = run_process(r);
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out;
  // A record that is a symlink is not followed.
  ASSERT_EQ(mkdir((state + "/spaces").c_str(), 0700), 0);
  std::ofstream(dir_ + "/elsewhere.json") << R"({"version":1,"mode":"open","domains":[],"grants":[]})";
  ASSERT_EQ(symlink((dir_ + "/elsewhere.json").c_str(), (state + "/spaces/0123456789ab.json").c_str()), 0);
  o = spacectl({"network", "set", "0123456789ab", "--mode", "open"});
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out;
}

TEST_F(FakeDockerTest, AnOwnerFileThatCannotBeReadIsAnErrorNotANewOwner) {
  const std::string state = dir_ + "/owned";
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  // A dangling symlink: opening it fails with something other than "missing" (ELOOP), and a new
  // owner id written over it would hide every space the real one made.
  ASSERT_EQ(symlink((dir_ + "/gone").c_str(), (state + "/owner").c_str()), 0);
  ProcessRequest r;
  r.argv = {spacectl_path(), "--json", "--state-dir", state, "space", "list"};
  ProcessOutcome o = run_process(r);
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out;
  struct stat st{};
  ASSERT_EQ(lstat((state + "/owner").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the owner file was replaced";
  ASSERT_EQ(unlink((state + "/owner").c_str()), 0);
  ASSERT_EQ(mkdir((state + "/owner").c_str(), 0700), 0);  // read() gives EISDIR
  o = run_process(r);
  EXPECT_EQ(error_code(o), "record_unreadable") << o.out;
  EXPECT_TRUE(std::filesystem::is_directory(state + "/owner"));
}

TEST_F(FakeDockerTest, APipedSecretWithoutHeaderIsRefusedAndNothingIsSent) {
  ProcessOutcome o = spacectl({"grant", "add", "0123456789ab", "g", "--upstream", "https://api.example.com/v1"}, "sk-live-secret\n");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(error_code(o), "usage");
  for (const Call& c : calls()) EXPECT_EQ(c.stdin_bytes.find("sk-live-secret"), std::string::npos);
  EXPECT_FALSE(any_call(calls(), {"exec"}));
}

TEST_F(FakeDockerTest, ASecretAtTheCapPassesAndOneByteMoreIsRefused) {
  const std::vector<std::string> args = {"grant", "add", "0123456789ab", "g", "--upstream", "https://api.example.com/v1", "--header", "x-api-key"};
  EXPECT_TRUE(spacectl(args, std::string(8192, 'k')).succeeded());
  const ProcessOutcome o = spacectl(args, std::string(8193, 'k'));
  EXPECT_EQ(error_code(o), "invalid_argument") << o.out;
}

TEST_F(FakeDockerTest, TheWindowKeyReachesCreateThroughAPrivateEnvFileNeverArgv) {
  GK_REQUIRE(gk_test::running_as_root(), "create attaches each volume's disk image to a loop device (root)");
  (void)spacectl({"space", "create", "--name", "t", "--memory", "512m"});
  bool created = false;
  for (const Call& c : calls()) {
    for (const std::string& a : c.argv) EXPECT_EQ(a.find("GATEKEEPER_WINDOW="), std::string::npos) << "window key in argv";
    if (c.argv.empty() || c.argv[0] != "create" || std::find(c.argv.begin(), c.argv.end(), "--init") == c.argv.end()) continue;
    created = true;
    auto it = std::find(c.argv.begin(), c.argv.end(), "--env-file");
    ASSERT_NE(it, c.argv.end());
    struct stat st{};
    EXPECT_NE(stat((it + 1)->c_str(), &st), 0) << "the env file outlived create";
  }
  EXPECT_TRUE(created);
}

// ---- inputs ----

TEST_F(FakeDockerTest, AnImageThatLooksLikeAFlagIsRefusedBeforeAnythingIsCreated) {
  const ProcessOutcome o = spacectl({"space", "create", "--image=--help", "--memory", "512m"});
  EXPECT_EQ(error_code(o), "invalid_argument") << o.out << o.err;
  EXPECT_FALSE(any_call(calls(), {"network", "create"}));
  EXPECT_FALSE(any_call(calls(), {"volume", "create"}));
}

TEST_F(FakeDockerTest, TheSpaceRunsTheResolvedImageId) {
  (void)spacectl({"space", "create", "--image", "busybox:latest", "--memory", "512m"});
  bool seen = false;
  for (const Call& c : calls()) {
    if (!c.argv.empty() && c.argv[0] == "create" && std::find(c.argv.begin(), c.argv.end(), "--init") != c.argv.end()) {
      seen = true;
      EXPECT_EQ(std::find(c.argv.begin(), c.argv.end(), "busybox:latest"), c.argv.end());
      EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "sha256:" + std::string(64, '0')), c.argv.end());
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(FakeDockerTest, ANameThatIsNotUtf8IsRefusedBeforeAnythingIsCreated) {
  for (const std::string& name : {std::string("\xff"), std::string("a\x1b[2Jb"), std::string("x\xc2\x9b" "31m")}) {
    const ProcessOutcome o = spacectl({"space", "create", "--name", name, "--memory", "512m"});
    EXPECT_EQ(error_code(o), "invalid_argument") << o.out << o.err;
    EXPECT_TRUE(json::parse(o.out, nullptr, false).is_object()) << o.out;
  }
  EXPECT_FALSE(any_call(calls(), {"network", "create"}));
}

TEST_F(FakeDockerTest, EveryPositionalArgumentToDockerFollowsDoubleDash) {
  (void)spacectl({"space", "create", "--name", "t", "--memory", "512m"});
  for (const Call& c : calls()) {
    if (c.argv.empty()) continue;
    const std::string& verb = c.argv[0];
    if (verb == "create" || verb == "start" || verb == "rm" || verb == "exec" ||
        (c.argv.size() > 1 && (c.argv[1] == "create" || c.argv[1] == "inspect" || c.argv[1] == "connect" || c.argv[1] == "rm"))) {
      EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "--"), c.argv.end()) << verb << " " << (c.argv.size() > 1 ? c.argv[1] : "");
    }
  }
}

TEST_F(FakeDockerTest, RemovingAnIdNothingCarriesIsSpaceNotFound) {
  const ProcessOutcome o = spacectl({"space", "remove", "0123456789ab"});
  EXPECT_EQ(o.exit_code, 4) << o.out << o.err;
  EXPECT_EQ(error_code(o), "space_not_found");
}

TEST_F(FakeDockerTest, AFailedVolumeListDuringRemoveIsReported) {
  const ProcessOutcome o = spacectl({"space", "remove", "0123456789ab"}, {}, {"env", "FAKE_DOCKER_FAIL=volume ls"});
  EXPECT_NE(o.exit_code, 0) << o.out;
  EXPECT_EQ(o.out.find("\"removed\":true"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("volume ls"), std::string::npos) << o.out;
}

TEST_F(FakeDockerTest, AMalformedIdNeverBecomesAPath) {
  const ProcessOutcome o = spacectl({"network", "set", "../../../etc", "--mode", "open"});
  EXPECT_EQ(error_code(o), "invalid_argument") << o.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/etc.json"));
}

// ---- error codes from the right source ----

TEST_F(FakeDockerTest, WordsPrintedInsideASpaceNeverMakeThePlaceUnreachable) {
  const ProcessOutcome o = spacectl({"journal", "0123456789ab"}, {},
                                    {"env", "FAKE_DOCKER_EXEC_EXIT=1", "FAKE_DOCKER_EXEC_STDERR=dial unix /var/run/docker.sock: connection refused"});
  EXPECT_NE(error_code(o), "place_unreachable") << o.out;
  EXPECT_EQ(error_code(o), "gatekeeper_unreachable") << o.out;
}

// The gatekeeper runs beside the space: its journal and policy answers are read strictly and
// printed as the typed documents, and an answer that is not one is refused by name, never printed.
TEST_F(FakeDockerTest, JournalAndPolicyPrintTheGatekeepersDocumentsAsRead) {
  ProcessOutcome o = spacectl({"journal", "0123456789ab"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out,
            "{\"dropped\":0,\"records\":[{\"at\":\"2026-11-30T12:00:00.000Z\",\"decision\":"
            "\"allow\",\"host\":\"example.com\",\"listener\":\"corridor\",\"port\":443}],"
            "\"since\":\"2026-11-30T11:00:00.000Z\"}\n");
  o = spacectl({"policy", "0123456789ab"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  // The record holds no grant: none beside the gatekeeper's ids.
  EXPECT_EQ(o.out, "{\"domains\":[],\"grant_sources\":[],\"grants\":[],\"mode\":\"allowlist\"}\n");
}

TEST_F(FakeDockerTest, AGarbledJournalOrPolicyIsRefusedByNameNeverPassedOn) {
  const std::string answer = dir_ + "/answer";
  for (const std::string& hostile :
       {std::string(R"({"records":[],"dropped":0,"since":"2026-11-30T11:00:00.000Z","x":"OBEY"})"),
        std::string(R"({"mode":"open","domains":["OBEY.example"],"grants":[]})"),
        std::string(R"({"ok":true,"OBEY":[]})"), std::string("OBEY")}) {
    std::ofstream(answer, std::ios::trunc) << hostile;
    for (const char* command : {"journal", "policy"}) {
      const ProcessOutcome o =
          spacectl({command, "0123456789ab"}, {}, {"env", "FAKE_DOCKER_EXEC_OUT=" + answer});
      EXPECT_EQ(o.exit_code, 6) << command << ": " << hostile << ": " << o.out;
      EXPECT_EQ(error_code(o), "gatekeeper_refused") << o.out;
      EXPECT_NE(o.out.find(std::string(command) + " 0123456789ab: the gatekeeper's answer is "
                                                  "refused"),
                std::string::npos)
          << o.out;
      EXPECT_EQ(o.out.find("OBEY"), std::string::npos) << "passed on: " << o.out;
    }
  }
}

// ---- process handling ----

TEST_F(FakeDockerTest, AnIgnoredSigchldDoesNotTurnAnExitStatusIntoZero) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGCHLD, SIG_IGN);  // inherited across exec, as from a careless parent
    const std::string state = dir_ + "/state", gk = dir_ + "/gk.id", sp = dir_ + "/space.id";
    setenv("FAKE_DOCKER_EXEC_EXIT", "7", 1);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    const std::string self = spacectl_path();
    execl(self.c_str(), self.c_str(), "--owner", "testowner", "--state-dir", state.c_str(), "--gatekeeper-image-file", gk.c_str(),
          "--space-image-file", sp.c_str(), "space", "exec", "0123456789ab", "--", "sh", "-c", "exit 7", static_cast<char*>(nullptr));
    _exit(99);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST_F(FakeDockerTest, ASigtermDuringCreateRollsBackWhatWasMade) {
  ProcessRequest r;
  r.argv = {"env", "FAKE_DOCKER_SLEEP_ON=create", spacectl_path(), "--json", "--owner", "testowner", "--state-dir", dir_ + "/state",
            "--gatekeeper-image-file", dir_ + "/gk.id", "--space-image-file", dir_ + "/space.id",
            "--seccomp-space", std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
            "--seccomp-gatekeeper", std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
            "space", "create", "--memory", "512m"};
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execvp("env", [&] {
      static std::vector<char*> v;
      for (std::string& a : r.argv) v.push_back(a.data());
      v.push_back(nullptr);
      return v.data();
    }());
    _exit(99);
  }
  // Wait until the first `docker create` hangs, then stop spacectl as a user or a supervisor would.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!any_call(calls(), {"create"}) && std::chrono::steady_clock::now() < deadline) usleep(20000);
  ASSERT_TRUE(any_call(calls(), {"create"}));
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(8)) << "the hanging step was not ended";
  ASSERT_TRUE(WIFEXITED(status)) << "spacectl died of the signal without rolling back";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(any_call(calls(), {"network", "rm", "--"})) << "the networks made before the signal were not removed";
  EXPECT_TRUE(any_call(calls(), {"volume", "rm", "--force", "--"}));
}

// Users type global options after the subcommand (`spacectl space list --json`); that was refused
// with "The following argument was not expected: --json".
TEST_F(FakeDockerTest, GlobalOptionsAreAcceptedAfterTheSubcommand) {
  ProcessRequest r;
  r.argv = {spacectl_path(), "space", "list", "--json", "--owner", "testowner", "--state-dir", dir_ + "/state",
            "--gatekeeper-image-file", dir_ + "/gk.id", "--space-image-file", dir_ + "/space.id"};
  r.timeout = std::chrono::milliseconds(20000);
  const ProcessOutcome after = run_process(r);
  ASSERT_EQ(after.exit_code, 0) << after.out << after.err;
  const json doc = json::parse(after.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << after.out;
  EXPECT_TRUE(doc.contains("spaces")) << after.out;
  // An option nobody knows is still refused, by the parent, with CLI11's usage error (exit 2 or
  // its own code, never 0).
  r.argv = {spacectl_path(), "space", "list", "--no-such-option"};
  const ProcessOutcome unknown = run_process(r);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE((unknown.out + unknown.err).find("--no-such-option"), std::string::npos) << unknown.out << unknown.err;
}

}  // namespace
}  // namespace controller

namespace controller {
namespace {

// An engine whose inspect answers have the wrong shape (a compromised engine, a proxy in front of
// it): `space list` answered with an uncaught exception or read past a missing member before;
// it must answer, list nothing it cannot read, and never crash.
TEST_F(FakeDockerTest, AnInspectAnswerOfTheWrongShapeIsReadAsNothingNotACrash) {
  const std::string answers = dir_ + "/hostile";
  std::filesystem::create_directories(answers);
  for (const char* doc :
       {R"([1])", R"([{}])", R"([{"Config": 7}])", R"([{"Config": {"Labels": "x"}}])"}) {
    SCOPED_TRACE(doc);
    std::ofstream(answers + "/container-inspect.json", std::ios::trunc) << doc;
    const ProcessOutcome o =
        spacectl({"space", "list"}, {},
                 {"env", "FAKE_DOCKER_PS=0123456789abcdef", "FAKE_DOCKER_ANSWERS=" + answers});
    EXPECT_TRUE(o.exited) << o.describe();
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    const json listed = json::parse(o.out, nullptr, false);
    ASSERT_TRUE(listed.is_object()) << o.out << o.err;
    EXPECT_EQ(listed["spaces"], json::array());
  }
  // A gatekeeper container whose answer is not an object: a named error, not a crash.
  std::ofstream(answers + "/container-inspect.json", std::ios::trunc) << R"([1])";
  const ProcessOutcome o =
      spacectl({"space", "verify", "0123456789ab"}, {}, {"env", "FAKE_DOCKER_ANSWERS=" + answers});
  EXPECT_TRUE(o.exited) << o.describe();
  EXPECT_EQ(error_code(o), "command_failed") << o.out << o.err;
  EXPECT_NE(o.out.find("gk-0123456789ab-space: the answer is not an object"), std::string::npos)
      << o.out;
}

// A record edited by hand into something no spacectl writes: refused with the record and the
// member named, nothing sent to the gatekeeper, the file left byte for byte.
TEST_F(FakeDockerTest, AHandEditedRecordIsRefusedByMemberAndLeftAsItWas) {
  ASSERT_TRUE(spacectl({"network", "set", "0123456789ab", "--mode", "open"}).succeeded());
  const std::string path = dir_ + "/state/spaces/0123456789ab.json";
  const std::vector<std::string> edits = {
      R"({"version":1,"mode":"allowlist","domains":["*.example.com"],"grants":[]})",
      R"({"version":1,"mode":"open","mode":"allowlist","domains":[],"grants":[]})",
      R"({"version":1,"mode":"open","domains":[],"grants":[{"id":"g","upstream":"https://a.example/","header":"","secret":true}]})",
      R"({"version":1,"mode":"open","domains":[],"grants":[],"code":{"repository":"relative","space_path":"","project_path":"","base":"","history":"sent"}})"};
  for (const std::string& text : edits) {
    SCOPED_TRACE(text);
    std::ofstream(path, std::ios::trunc) << text;
    std::filesystem::remove(dir_ + "/log");
    const ProcessOutcome o = spacectl({"network", "set", "0123456789ab", "--mode", "open"});
    EXPECT_EQ(error_code(o), "record_unreadable") << o.out << o.err;
    EXPECT_NE(o.out.find("record " + path + ": "), std::string::npos) << o.out;
    EXPECT_FALSE(any_call(calls(), {"exec"})) << "the gatekeeper was told something";
    EXPECT_EQ(read_file(path), text);
  }
}

}  // namespace
}  // namespace controller
