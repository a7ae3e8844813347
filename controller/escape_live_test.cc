// The escape suite against real spaces on the local engine (LABEL docker): skips
// with a reason without an engine, fails under CI=true. Traffic goes only to loopback, the host's
// own addresses and networks/containers these tests (and the runner) create. Each test has its own
// owner and ends by proving nothing labelled with it is left.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/loop_disk.h"
#include "controller/process.h"
#include "controller/spec.h"
#include "controller/testing/live_space.h"
#include "controller/testing/not_applicable.h"
#include "controller/testing/podman_pins.h"
#include "controller/testing/ssh_engine.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

using nlohmann::json;

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";

using testing::readable;

ProcessOutcome docker(const std::vector<std::string>& args) {
  ProcessRequest r;
  r.argv = {"docker"};
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.timeout = std::chrono::minutes(3);
  return run_process(r);
}

class EscapeLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    owner_ = "esctest" + random_hex(6);
    char tmpl[] = "/tmp/spacectl-escape-live-XXXXXX";
    state_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    if (!id_.empty()) (void)spacectl({"space", "remove", id_});
    if (engine_ == "podman" || gk_test::docker_engine_answers()) {
      testing::expect_nothing_left(owner_, {engine_});
    }
    std::error_code ignored;
    std::filesystem::remove_all(state_, ignored);
  }
  ProcessOutcome spacectl(const std::vector<std::string>& args, std::chrono::milliseconds timeout = std::chrono::minutes(5)) {
    ProcessRequest r;
    // SPACECTL_UNDER_TEST: the same test against another build (the binary from before a fix).
    const char* other = std::getenv("SPACECTL_UNDER_TEST");
    r.argv = {other != nullptr && other[0] != '\0' ? std::string(other) : std::string(SPACECTL),
              "--owner",
              owner_,
              "--state-dir",
              state_,
              "--gatekeeper-image-file",
              pins_ + "/gatekeeper-image.id",
              "--space-image-file",
              pins_ + "/space-image.id",
              "--seccomp-space",
              kBin + "/seccomp/space.json",
              "--seccomp-gatekeeper",
              kBin + "/seccomp/gatekeeper.json"};
    r.argv.insert(r.argv.end(), place_args_.begin(), place_args_.end());
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    if (!args.empty() && args[0] == "escape-test") {
      r.argv.insert(r.argv.end(),
                    {"--test-gatekeeper-image-file", pins_ + "/gatekeeper-test-image.id"});
    }
    r.timeout = timeout;
    return run_process(r);
  }
  // The pins come from the images target (image/CMakeLists.txt); CI builds it here if missing.
  bool ready() {
    if (!readable(kBin + "/gatekeeper-test-image.id") || !readable(kBin + "/space-image.id")) {
      ProcessRequest r;
      r.argv = {"cmake", "--build", GK_BINARY_DIR, "--target", "images"};
      r.timeout = std::chrono::minutes(15);
      (void)run_process(r);
    }
    return readable(kBin + "/gatekeeper-image.id") && readable(kBin + "/gatekeeper-test-image.id") &&
           readable(kBin + "/space-image.id") && readable(kBin + "/escape-suite") && readable(kBin + "/seccomp/space.json");
  }
  // Creates a space; the id is kept for TearDown.
  void create() {
    // A small disk: res.disk-fill-* write each volume full.
    ProcessOutcome o = spacectl({"--json", "space", "create", "--name", "escape", "--memory", "512m", "--disk", "256m"});
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    id_ = json::parse(o.out, nullptr, false).value("id", "");
    ASSERT_TRUE(is_space_id(id_)) << o.out;
  }
  json escape_test(const std::vector<std::string>& extra, int& exit_code) {
    std::vector<std::string> args = {"escape-test", id_, "--format", "json", "--output", state_ + "/escape.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessOutcome o = spacectl(args, std::chrono::minutes(40));
    exit_code = o.exited ? o.exit_code : -1;
    ProcessRequest cat;
    cat.argv = {"cat", state_ + "/escape.json"};
    const json doc = json::parse(run_process(cat).out, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << o.err;
    return doc;
  }

  // The whole suite once, on the place `place` (not-applicable.txt is read for that place): every
  // case PASS or N/A with its listed reason, 0 failed and 0 inconclusive.
  void every_case_passes(const std::string& place);

  std::string owner_, state_, id_;
  std::string engine_ = "docker";        // the CLI whose labels TearDown checks
  std::string pins_ = kBin;              // where the pins (and for Podman their archives) are
  std::vector<std::string> place_args_;  // --place and --host
};

void EscapeLiveTest::every_case_passes(const std::string& place) {
  create();
  if (id_.empty()) return;
  // A grant whose secret comes from the host's environment, so host.env-grants-hidden has a value
  // to look for (inherited by escape-test from this process). The upstream is an address literal
  // of 198.18.0.0/15 that nothing calls.
  const std::string env_key = "sk-escape-env-" + random_hex(12);
  setenv("SPACECTL_ESCAPE_ENV_KEY", env_key.c_str(), 1);
  const ProcessOutcome granted =
      spacectl({"grant", "add", id_, "envkey", "--upstream", "https://198.18.0.1/v1", "--header",
                "x-api-key", "--secret-env", "SPACECTL_ESCAPE_ENV_KEY"});
  ASSERT_EQ(granted.exit_code, 0) << granted.out << granted.err;
  int code = -1;
  const json doc = escape_test({}, code);
  unsetenv("SPACECTL_ESCAPE_ENV_KEY");
  ASSERT_TRUE(doc.contains("cases"));
  // N/A passes only for the cases listed for this place and image, with their reason.
  std::ifstream list(std::string(GK_SOURCE_DIR) + "/escape-suite/not-applicable.txt");
  std::string list_error;
  const auto allowed = testing::parse_not_applicable(
      std::string(std::istreambuf_iterator<char>(list), std::istreambuf_iterator<char>()), &list_error);
  ASSERT_EQ(list_error, "");
  std::string bad;
  std::vector<testing::ReportedCase> reported;
  for (const json& c : doc["cases"]) {
    const std::string v = c.value("verdict", "");
    reported.push_back({c.value("id", ""), v, c.value("evidence", "")});
    if (v == "PASS" || v == "N/A") continue;
    bad += v + " " + c.value("id", "") + ": " + c.value("evidence", "") + "\n";
  }
  for (const std::string& problem :
       testing::not_applicable_problems(allowed, place, "space-default", reported)) {
    bad += problem + "\n";
  }
  // The figures in the log of every run (CI keeps it), failed or not.
  std::printf("escape run on %s: %s\n", place.c_str(), doc["summary"].dump().c_str());
  EXPECT_EQ(bad, "") << doc["summary"].dump();
  EXPECT_GE(doc["summary"].value("total", 0), 316);
  EXPECT_EQ(code, bad.empty() ? 0 : 1);
  // The host facts the run stood on, with the limits as applied.
  ASSERT_TRUE(doc.contains("host_facts") && doc["host_facts"].is_object()) << doc.dump().substr(0, 400);
  for (const char* key : {"engine", "runc", "kernel", "cgroup", "ptrace_scope", "space.cpus",
                          "space.ulimits", "space.io-weight", "space.disk-home", "space.disk-work",
                          "residual.allowed-names", "place"}) {
    EXPECT_TRUE(doc["host_facts"].contains(key)) << key;
  }
  EXPECT_NE(doc["host_facts"].value("space.ulimits", "").find("\"core\""), std::string::npos) << doc["host_facts"].dump();
  EXPECT_EQ(doc["host_facts"].value("place", "").rfind(place, 0), 0u) << doc["host_facts"].dump();
  // Each volume as the engine mounts it: 256 MiB of ext4 on a loop device, nosuid,nodev.
  for (const char* key : {"space.disk-home", "space.disk-work"}) {
    const std::string disk = doc["host_facts"].value(key, "");
    EXPECT_EQ(disk.rfind("268435456 bytes", 0), 0u) << key << ": " << disk;
    EXPECT_NE(disk.find("nosuid,nodev"), std::string::npos) << key << ": " << disk;
    EXPECT_NE(disk.find("/dev/loop"), std::string::npos) << key << ": " << disk;
  }
}

TEST_F(EscapeLiveTest, EveryCasePassesOrIsListedAsNotApplicableHere) {
  GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers");
  GK_REQUIRE(ready(), "build spacectl escape-suite images first (bin/*.id, bin/escape-suite)");
  every_case_passes("docker");
}

// The same run on rootful Podman: the place loads the pinned archives into Podman's store itself.
// The space has no DNS server there and names its gatekeeper in /etc/hosts (spec.h), so the
// runner tells the suite `--resolver none --engine podman`; the case list is the Docker run's.
TEST_F(EscapeLiveTest, OnPodmanEveryCasePassesOrIsListedAsNotApplicableHere) {
  GK_REQUIRE(testing::podman_answers(),
             "no rootful Podman answers (podman --runtime runc info; .ci/setup installs it)");
  GK_REQUIRE(ready(), "build spacectl escape-suite images first (bin/*.id, bin/escape-suite)");
  pins_ = testing::staged_pins(GK_BINARY_DIR);
  GK_REQUIRE(!pins_.empty(), "bin/*-image.tar missing: cmake --build <dir> --target images");
  engine_ = "podman";
  place_args_ = {"--place", "podman"};
  every_case_passes("podman");
}

// Docker over SSH: sshd on loopback with keys made for this test (testing/ssh_engine.h); every
// docker call of the run carries --host. The engine at the other end is this machine's.
TEST_F(EscapeLiveTest, OverSshEveryCasePassesOrIsListedAsNotApplicableHere) {
  GK_REQUIRE(gk_test::docker_engine_answers(),
             "no Docker engine answers (the engine at the SSH end)");
  GK_REQUIRE(ready(), "build spacectl escape-suite images first (bin/*.id, bin/escape-suite)");
  testing::SshEngine ssh;
  const std::string why = ssh.start();
  GK_REQUIRE(why.empty(), why);
  ssh.put_first_in_path();
  place_args_ = {"--place", "docker-ssh", "--host", ssh.host()};
  every_case_passes("docker-ssh");
  if (id_.empty()) return;
  // Code in over the same channel: git's pack protocol through the place's exec argv, which
  // carries --host like every other call.
  const std::string repo = state_ + "/project";
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{"git", "init", "-q", "-b", "main", repo},
        {"git", "-C", repo, "add", "hello.txt"},
        {"git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit",
         "-q", "-m", "one"}}) {
    ProcessRequest r;
    r.argv = step;
    ASSERT_TRUE(run_process(r).succeeded()) << step[0] << " " << step[1];
    if (step[1] == "init") std::ofstream(repo + "/hello.txt") << "over ssh\n";
  }
  const ProcessOutcome in = spacectl({"code", "in", id_, "--repo", repo, "--mode", "clean"});
  EXPECT_EQ(in.exit_code, 0) << in.out << in.err;
  const ProcessOutcome cat =
      spacectl({"space", "exec", id_, "--", "cat", "/spaces/" + id_ + "/project/hello.txt"});
  EXPECT_EQ(cat.out, "over ssh\n") << cat.err;
  // Removed while sshd still runs (not by TearDown). The disk images were made on the engine's
  // host (this machine here) by the helper, and remove takes them away there.
  const ProcessOutcome removed = spacectl({"space", "remove", id_});
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  id_.clear();
  std::error_code ignored;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(kDefaultDiskDir), ignored)) {
    EXPECT_NE(entry.path().filename().string().rfind(owner_ + "-", 0), 0u)
        << "left on the engine's host: " << entry.path();
  }
}

// "A deliberately weakened space (a flag removed in a test-only spec) turns the matching cases to
// FAIL": the space container is recreated from the same spec without --read-only (a knob the CLI
// cannot reach), and the root-filesystem cases must say FAIL, proving they can.
TEST_F(EscapeLiveTest, ASpaceWithoutReadOnlyFailsTheReadOnlyCases) {
  GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers");
  GK_REQUIRE(ready(), "build spacectl escape-suite images first (bin/*.id, bin/escape-suite)");
  create();
  const Names n = names_for(id_);
  const json before = json::parse(docker({"container", "inspect", n.space}).out, nullptr, false);
  ASSERT_TRUE(before.is_array() && before.size() == 1);
  const json& labels = before[0]["Config"]["Labels"];
  SpaceSpec spec;
  spec.id = id_;
  spec.owner = owner_;
  spec.name = labels.value(std::string(kLabelName), "escape");
  spec.created = labels.value(std::string(kLabelCreated), "");
  spec.space_image = before[0]["Image"].get<std::string>();
  spec.seccomp_space = kBin + "/seccomp/space.json";
  spec.memory_bytes = before[0]["HostConfig"]["Memory"].get<std::int64_t>();
  const std::string window_prefix = std::string(kWindowEnv) + "=" + std::string(kWindowBase);
  for (const json& e : before[0]["Config"]["Env"]) {
    if (e.get<std::string>().rfind(window_prefix, 0) == 0) spec.window_key = e.get<std::string>().substr(window_prefix.size());
  }
  for (const json& c : before[0]["Config"]["Cmd"]) spec.command.push_back(c.get<std::string>());
  std::vector<std::string> argv = space_create_argv(spec);
  const auto ro = std::find(argv.begin(), argv.end(), "--read-only");
  ASSERT_NE(ro, argv.end());
  argv.erase(ro);  // the weakening
  ASSERT_TRUE(docker({"rm", "--force", n.space}).succeeded());
  ASSERT_TRUE(docker(argv).succeeded());
  ASSERT_TRUE(docker({"start", n.space}).succeeded());

  int code = -1;
  const json doc = escape_test({"--only", "fs.readonly-*", "--only", "fs.root-mount-ro", "--only", "fs.writable-tmp",
                                "--only", "host.verify", "--no-exhaustion"}, code);
  ASSERT_TRUE(doc.contains("cases"));
  std::map<std::string, std::string> verdicts;
  for (const json& c : doc["cases"]) verdicts[c.value("id", "")] = c.value("verdict", "");
  EXPECT_EQ(verdicts["fs.writable-tmp"], "PASS") << "the control still works";
  EXPECT_EQ(verdicts["fs.root-mount-ro"], "FAIL") << doc.dump();
  EXPECT_EQ(verdicts["fs.readonly-chmod"], "FAIL") << doc.dump();
  EXPECT_EQ(verdicts["fs.readonly-truncate"], "FAIL") << doc.dump();
  EXPECT_EQ(verdicts["host.verify"], "FAIL") << doc.dump();
  EXPECT_EQ(code, 1);
}

// The review's forgery: a loop in the space replaced the copied binary with a script printing
// "2 cases: 2 passed", and escape-test exited 0. Now the binary sits where the space user cannot
// replace it, the report must name exactly the ids the host lists, the loop is named as another
// process acting in the space, and host.forged-report-refused proves the refusals from inside.
TEST_F(EscapeLiveTest, ALoopReplacingTheBinaryInsideCannotForgeTheReport) {
  GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers");
  GK_REQUIRE(ready(), "build spacectl escape-suite images first (bin/*.id, bin/escape-suite)");
  create();
  const Names n = names_for(id_);
  const std::string forged = "#!/bin/sh\necho '{\"suite\":\"escape-suite\",\"version\":1,\"cases\":["
                             "{\"id\":\"fs.readonly-chmod\",\"verdict\":\"PASS\",\"evidence\":\"forged\"},"
                             "{\"id\":\"fs.forged\",\"verdict\":\"PASS\",\"evidence\":\"forged\"}]}'\n";
  ProcessRequest put;
  put.argv = {"docker", "exec", "-i", "--user", std::string(kSpaceUser), "--", n.space, "sh", "-c", "cat > /tmp/forged && chmod 755 /tmp/forged"};
  put.stdin_bytes = forged;
  ASSERT_TRUE(run_process(put).succeeded());
  // Replace every suite binary that appears in /tmp, as fast as it can.
  ASSERT_TRUE(docker({"exec", "--detach", "--user", std::string(kSpaceUser), "--", n.space, "sh", "-c",
                      "while :; do for f in /tmp/escape-suite-*; do cp -f /tmp/forged \"$f\" 2>/dev/null; "
                      "cp -f /tmp/forged \"$f/escape-suite\" 2>/dev/null; done; sleep 0.05; done"}).succeeded());
  int code = -1;
  const json doc = escape_test({"--only", "fs.readonly-*", "--only", "host.suite-report", "--only", "host.space-quiet",
                                "--only", "host.forged-report-refused", "--no-exhaustion"}, code);
  ASSERT_TRUE(doc.contains("cases")) << doc.dump();
  std::map<std::string, std::string> verdicts, evidence;
  for (const json& c : doc["cases"]) {
    verdicts[c.value("id", "")] = c.value("verdict", "");
    evidence[c.value("id", "")] = c.value("evidence", "");
  }
  EXPECT_EQ(verdicts["host.suite-report"], "PASS") << evidence["host.suite-report"];
  EXPECT_NE(evidence["host.suite-report"].find("exactly the ids the host listed"), std::string::npos);
  EXPECT_EQ(verdicts.count("fs.forged"), 0u);
  EXPECT_EQ(verdicts["host.forged-report-refused"], "PASS") << evidence["host.forged-report-refused"];
  EXPECT_EQ(verdicts["host.space-quiet"], "INCONCLUSIVE") << evidence["host.space-quiet"];
  EXPECT_NE(evidence["host.space-quiet"].find("while :"), std::string::npos) << evidence["host.space-quiet"];
  EXPECT_EQ(code, 1) << "another process acted in the space: not a clean verdict";
}

// The review formats of a real run: the HTML page draws this space's boundary (its id, its
// gatekeeper, both networks, the corridor mode) and lists the host facts; the SARIF run carries the
// same boundary and facts as properties.
TEST_F(EscapeLiveTest, HtmlAndSarifReportsDrawTheSpacesOwnBoundary) {
  GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers");
  GK_REQUIRE(ready(), "build spacectl escape-suite images first (bin/*.id, bin/escape-suite)");
  create();
  const Names n = names_for(id_);
  const std::vector<std::string> only = {"--only", "identity.*", "--only", "host.verify", "--no-exhaustion"};
  auto run_format = [&](const std::string& format) {
    std::vector<std::string> args = {"escape-test", id_, "--format", format, "--output", state_ + "/report." + format};
    args.insert(args.end(), only.begin(), only.end());
    const ProcessOutcome o = spacectl(args, std::chrono::minutes(10));
    EXPECT_TRUE(o.exited) << o.err;
    ProcessRequest cat;
    cat.argv = {"cat", state_ + "/report." + format};
    return run_process(cat).out;
  };
  const std::string html = run_format("html");
  const std::size_t svg = html.find("<svg");
  ASSERT_NE(svg, std::string::npos) << html.substr(0, 2000);
  const std::string picture = html.substr(svg, html.find("</svg>") - svg);
  for (const std::string& part :
       {id_, n.gatekeeper, n.inner, n.outer, std::string("mode allowlist")}) {
    EXPECT_NE(picture.find(part), std::string::npos) << part;
  }
  EXPECT_NE(html.find("<section id=\"host-facts\">"), std::string::npos);
  EXPECT_NE(html.find(">engine<"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"residuals\">"), std::string::npos);
  EXPECT_NE(html.find("id=\"case-host.verify\""), std::string::npos);

  const json sarif = json::parse(run_format("sarif"), nullptr, false);
  ASSERT_TRUE(sarif.is_object());
  const json& props = sarif["runs"][0]["properties"];
  EXPECT_EQ(props["boundary"].value("space", ""), id_);
  EXPECT_EQ(props["boundary"].value("innerNetwork", ""), n.inner);
  EXPECT_TRUE(props["hostFacts"].contains("kernel"));
  EXPECT_GE(sarif["runs"][0]["tool"]["driver"]["rules"].size(), 2u);
}

}  // namespace
}  // namespace controller
