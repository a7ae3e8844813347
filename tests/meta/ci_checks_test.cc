// The checks that make a green CI run mean what it says (.ci/check-tests, tests/expected.txt, the
// images fixture). Each is fed a deliberately broken input here and must turn red; each also has
// a positive control, so a check that refuses everything cannot pass either.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policy/json.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = GK_SOURCE_DIR;
const fs::path kBuild = GK_BINARY_DIR;
const std::string kCheck = (kRoot / ".ci" / "check-tests").string();

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  std::ofstream(path, std::ios::binary) << text;
  if (executable) fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs argv with `env` added to (or, for an empty value, removed from) the environment.
Outcome run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {}) {
  Outcome outcome;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return outcome;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    for (const auto& [name, value] : env) {
      if (value.empty()) {
        unsetenv(name.c_str());
      } else {
        setenv(name.c_str(), value.c_str(), 1);
      }
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) outcome.output.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

class CiChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gk-ci-checks-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// What ctest 3.25 writes with --output-junit for one passed and one GTEST_SKIPped test (the skip
// is "notrun" because gtest_discover_tests sets SKIP_REGULAR_EXPRESSION).
const char kJunitHead[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<testsuite name=\"Linux-c++\" tests=\"2\" failures=\"0\" disabled=\"0\" skipped=\"1\" "
    "hostname=\"\" time=\"0\" timestamp=\"2026-01-01T00:00:00\" >\n"
    "\t<testcase name=\"EnvironmentTest.CiMeansExactlyTrue\" classname=\"EnvironmentTest.CiMeansExactlyTrue\" "
    "time=\"0.01\" status=\"run\">\n\t\t<system-out/>\n\t</testcase>\n";
const char kJunitSkipped[] =
    "\t<testcase name=\"NetnsTest.NeedsRoot\" classname=\"NetnsTest.NeedsRoot\" time=\"0.01\" "
    "status=\"notrun\">\n\t\t<skipped message=\"SKIP_REGULAR_EXPRESSION_MATCHED\"/>\n"
    "\t\t<system-out>[  SKIPPED ] NetnsTest.NeedsRoot (0 ms)\n</system-out>\n\t</testcase>\n";
const char kJunitTail[] = "</testsuite>\n";

TEST_F(CiChecksTest, JunitReportWithASkippedTestFails) {
  write_file(dir_ / "skip.xml", std::string(kJunitHead) + kJunitSkipped + kJunitTail);
  const Outcome o = run({kCheck, "junit", (dir_ / "skip.xml").string()});
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("NetnsTest.NeedsRoot"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, JunitReportWithEveryTestRunPasses) {
  write_file(dir_ / "ok.xml", std::string(kJunitHead) + kJunitTail);
  const Outcome o = run({kCheck, "junit", (dir_ / "ok.xml").string()});
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

TEST_F(CiChecksTest, JunitReportWithoutTestsFails) {
  write_file(dir_ / "empty.xml", "<?xml version=\"1.0\"?>\n<testsuite tests=\"0\">\n</testsuite>\n");
  EXPECT_EQ(run({kCheck, "junit", (dir_ / "empty.xml").string()}).exit_code, 1);
  EXPECT_EQ(run({kCheck, "junit", (dir_ / "absent.xml").string()}).exit_code, 1);
}

// The values of one ctest property (a string or an array of strings; a bool as "true"/"false").
std::vector<std::string> property_values(const policy::json::Value& test,
                                         const std::string& wanted) {
  std::vector<std::string> out;
  const policy::json::Value* properties = test.find("properties");
  if (properties == nullptr) return out;
  for (const policy::json::Value& property : properties->items()) {
    const policy::json::Value* key = property.find("name");
    const policy::json::Value* value = property.find("value");
    if (key == nullptr || value == nullptr || key->as_string() != wanted) continue;
    if (value->is_array()) {
      for (const policy::json::Value& v : value->items()) out.push_back(v.as_string());
    } else if (value->is_bool()) {
      out.emplace_back(value->as_bool() ? "true" : "false");
    } else {
      out.push_back(value->as_string());
    }
  }
  return out;
}

bool holds(const std::vector<std::string>& values, const std::string& one) {
  return std::find(values.begin(), values.end(), one) != values.end();
}

// ctest's own description of this build's tests (`--show-only=json-v1`, `extra` arguments before
// it): the document, or a failure of the calling test and nothing.
std::optional<policy::json::Value> ctest_tests(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {"ctest", "--test-dir", kBuild.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("--show-only=json-v1");
  const Outcome o = run(argv);
  EXPECT_EQ(o.exit_code, 0) << o.output.substr(0, 2000);
  const std::size_t start = o.output.find('{');
  EXPECT_NE(start, std::string::npos) << o.output.substr(0, 2000);
  if (o.exit_code != 0 || start == std::string::npos) return std::nullopt;
  policy::json::Limits limits;
  limits.max_bytes = 256u << 20;
  limits.max_elements = 50'000'000;
  auto parsed = policy::json::parse(std::string_view(o.output).substr(start), limits);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  if (!parsed.ok() || parsed->find("tests") == nullptr) {
    ADD_FAILURE() << "no \"tests\" in ctest's description";
    return std::nullopt;
  }
  return std::move(*parsed);
}

// Every test gk_add_gtest registers carries the skip pattern, so a GTEST_SKIP reaches the JUnit
// report as "notrun" instead of "passed" (read from ctest's own description of the tests).
TEST_F(CiChecksTest, EveryGoogleTestCaseReportsASkipAsSkipped) {
  const std::optional<policy::json::Value> described = ctest_tests();
  ASSERT_TRUE(described.has_value());
  std::size_t gtest_cases = 0;
  for (const policy::json::Value& test : described->find("tests")->items()) {
    const policy::json::Value* name = test.find("name");
    ASSERT_TRUE(name != nullptr && test.find("properties") != nullptr);
    const bool is_gtest = !property_values(test, "LABELS").empty();
    // ctest ORs them.
    const std::vector<std::string> skip_patterns = property_values(test, "SKIP_REGULAR_EXPRESSION");
    // Plain add_test() fixtures (image_build_images) print no GoogleTest lines.
    if (name->as_string().find('.') == std::string::npos) continue;
    if (!is_gtest) continue;
    ++gtest_cases;
    bool matches_skip = false;
    bool matches_ok = false;
    for (const std::string& p : skip_patterns) {
      const std::regex pattern(p);
      matches_skip = matches_skip || std::regex_search("[  SKIPPED ] Suite.Name (0 ms)", pattern);
      matches_ok = matches_ok || std::regex_search("[       OK ] Suite.Name (0 ms)", pattern);
    }
    EXPECT_TRUE(matches_skip) << name->as_string() << ": a GTEST_SKIP would count as passed";
    EXPECT_FALSE(matches_ok) << name->as_string();
  }
  EXPECT_GT(gtest_cases, 100u);
}

// CI runs the docker label two at a time (tests/README.md "Docker tests in parallel"). The locks,
// RUN_SERIAL and the images fixture come from a file gk_add_gtest writes next to the discovered
// tests (cmake/Testing.cmake): every docker test must carry them, whatever its name (a test left
// out of the discovered list would run unlocked and before the images exist), and a lock given for
// a name pattern must reach exactly the tests it names.
TEST_F(CiChecksTest, EveryDockerTestWaitsForTheImagesAndCarriesItsLocks) {
  const std::optional<policy::json::Value> described = ctest_tests({"-L", "docker"});
  ASSERT_TRUE(described.has_value());
  std::size_t docker = 0, over_ssh = 0, on_podman = 0, serial = 0;
  for (const policy::json::Value& test : described->find("tests")->items()) {
    const policy::json::Value* name_value = test.find("name");
    ASSERT_NE(name_value, nullptr);
    const std::string name = name_value->as_string();
    if (!holds(property_values(test, "LABELS"), "docker")) continue;
    ++docker;
    const std::vector<std::string> locks = property_values(test, "RESOURCE_LOCK");
    if (name == "image_build_images") {
      EXPECT_TRUE(holds(property_values(test, "FIXTURES_SETUP"), "gk_images"));
      EXPECT_TRUE(holds(locks, "gk_build_tree")) << name;
      continue;
    }
    if (name == "build_debian_package") {  // a build step that uses no engine
      EXPECT_TRUE(holds(locks, "gk_build_tree")) << name;
      continue;
    }
    EXPECT_TRUE(holds(property_values(test, "FIXTURES_REQUIRED"), "gk_images"))
        << name << " does not wait for the images fixture";
    if (name.rfind("EscapeLiveTest.", 0) == 0) {
      EXPECT_TRUE(holds(locks, "gk_pool_default")) << name;
      const bool ssh = name.rfind("EscapeLiveTest.OverSsh", 0) == 0;
      over_ssh += ssh ? 1 : 0;
      EXPECT_EQ(holds(locks, "gk_ssh_probe_port"), ssh) << name;
      // Its place check on Podman adds a probe rule to the host's INPUT chain, which
      // PodmanGuardTest (controller_podman_tests) counts.
      const bool podman = name.rfind("EscapeLiveTest.OnPodman", 0) == 0;
      on_podman += podman ? 1 : 0;
      EXPECT_EQ(holds(locks, "gk_podman_checks"), podman) << name;
    }
    if (name.rfind("EngineRestartDockerTest.", 0) == 0) {
      ++serial;
      EXPECT_TRUE(holds(property_values(test, "RUN_SERIAL"), "true")) << name;
    }
  }
  EXPECT_GT(docker, 50u);
  EXPECT_EQ(over_ssh, 1u);
  EXPECT_EQ(on_podman, 1u);
  EXPECT_EQ(serial, 2u);
}

TEST_F(CiChecksTest, LabelBelowItsMinimumFails) {
  write_file(dir_ / "expected.txt", "min-tests meta 1000000\nfuzz-target name\n");
  const Outcome o = run({kCheck, "counts", kBuild.string(), (dir_ / "expected.txt").string()});
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("label meta has"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, LabelAtItsMinimumPasses) {
  write_file(dir_ / "expected.txt", "min-tests meta 1\n");
  const Outcome o = run({kCheck, "counts", kBuild.string(), (dir_ / "expected.txt").string()});
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

// A fake libFuzzer binary: prints what it is given and exits with the given code.
void fake_fuzzer(const fs::path& path, const std::string& prints, int exit_code) {
  write_file(path, "#!/bin/sh\necho '" + prints + "'\nexit " + std::to_string(exit_code) + "\n", true);
}

// The fuzz build's positive control: prints UBSan's report and dies (fatal) or goes on (recovers).
void fake_canary(const fs::path& bin, bool fatal) {
  fake_fuzzer(bin / "sanitizer_canary", "c.cc:12:29: runtime error: signed integer overflow", fatal ? 1 : 0);
}

// `.ci/check-tests fuzz` over a bin/ of the canary and fake fuzzers (fuzz_<name> -> what it prints
// and its exit code), against an expected.txt of `expected`.
struct FakeFuzzer {
  std::string prints;
  int exit_code = 0;
};
Outcome fuzz_check(const fs::path& dir, bool fatal_canary,
                   const std::map<std::string, FakeFuzzer>& fuzzers, const std::string& expected) {
  fs::create_directories(dir / "bin");
  fake_canary(dir / "bin", fatal_canary);
  for (const auto& [name, fuzzer] : fuzzers) {
    fake_fuzzer(dir / "bin" / ("fuzz_" + name), fuzzer.prints, fuzzer.exit_code);
  }
  write_file(dir / "expected.txt", expected);
  return run({kCheck, "fuzz", (dir / "bin").string(), "1", (dir / "logs").string(),
              (dir / "expected.txt").string()});
}
const FakeFuzzer kDone = {"Done 10 runs in 1 second(s)", 0};

TEST_F(CiChecksTest, FuzzBuildThatRecoversFromSanitizerReportsFails) {
  const Outcome o =
      fuzz_check(dir_, /*fatal_canary=*/false, {{"name", kDone}}, "fuzz-target name\n");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("sanitizer reports are not fatal"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, MissingKnownFuzzTargetFails) {
  const Outcome o = fuzz_check(dir_, /*fatal_canary=*/true, {{"name", kDone}},
                               "fuzz-target name\nfuzz-target answer\n");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("fuzz_answer is not built"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, FuzzLogWithoutDoneLineFails) {
  const Outcome o = fuzz_check(dir_, /*fatal_canary=*/true, {{"name", {"INFO: Seed: 1", 0}}},
                               "fuzz-target name\n");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("no 'Done N runs' line"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, FuzzLogWithASanitizerReportFails) {
  const Outcome o = fuzz_check(
      dir_, /*fatal_canary=*/true,
      {{"name",
        {"x.cc:1:2: runtime error: signed integer overflow\nDone 10 runs in 1 second(s)", 0}}},
      "fuzz-target name\n");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("sanitizer report"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, FuzzerThatFailsFails) {
  const Outcome o =
      fuzz_check(dir_, /*fatal_canary=*/true,
                 {{"name", {"==1==ERROR: libFuzzer: deadly signal", 1}}}, "fuzz-target name\n");
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("fuzz_name found a failure"), std::string::npos) << o.output;
}

TEST_F(CiChecksTest, EveryKnownFuzzTargetWithItsDoneLinePasses) {
  const Outcome o = fuzz_check(dir_, /*fatal_canary=*/true,
                               {{"name", kDone}, {"answer", {"Done 7 runs in 1 second(s)", 0}}},
                               "fuzz-target name\nfuzz-target answer\n");
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

// tests/expected.txt names exactly the fuzz targets tests/fuzz has sources for, and a minimum for
// every label gk_add_gtest accepts.
TEST(CiExpectationsTest, ExpectedFileListsEveryFuzzTargetAndLabel) {
  const std::string expected = read_file(kRoot / "tests" / "expected.txt");
  std::set<std::string> listed;
  std::set<std::string> labels;
  std::istringstream lines(expected);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string kind, name;
    words >> kind >> name;
    if (kind == "fuzz-target") listed.insert(name);
    if (kind == "min-tests") {
      long minimum = 0;
      words >> minimum;
      EXPECT_GT(minimum, 0) << "label " << name << " needs a minimum above 0";
      labels.insert(name);
    }
  }
  std::set<std::string> sources;
  for (const auto& entry : fs::directory_iterator(kRoot / "tests" / "fuzz")) {
    const std::string file = entry.path().filename().string();
    if (file.starts_with("fuzz_") && file.ends_with(".cc")) sources.insert(file.substr(5, file.size() - 8));
  }
  EXPECT_EQ(listed, sources) << "tests/expected.txt fuzz-target lines differ from the fuzz_*.cc sources in tests/fuzz";
  EXPECT_EQ(labels, (std::set<std::string>{"unit", "integration", "docker", "meta"}));
}

// The README's test command is CI by itself: it exports CI=true before it runs any test.
TEST(CiExpectationsTest, CiTestExportsCiTrueBeforeAnyTest) {
  const std::string test = read_file(kRoot / ".ci" / "test");
  const std::size_t exported = test.find("\nexport CI=true\n");
  ASSERT_NE(exported, std::string::npos) << ".ci/test does not export CI=true";
  EXPECT_LT(exported, test.find("ctest ")) << ".ci/test runs ctest before it exports CI=true";
  for (const char* check : {".ci/check-tests fuzz", ".ci/check-tests counts", ".ci/check-tests junit"}) {
    EXPECT_NE(test.find(check), std::string::npos) << ".ci/test does not run " << check;
  }
}

// Without a Docker engine, the images fixture fails under CI=true (and says why), and only says
// so locally. A fake `docker` first in PATH stands in for an engine that does not answer.
TEST_F(CiChecksTest, ImagesFixtureFailsWithoutAnEngineUnderCi) {
  fs::create_directories(dir_ / "bin");
  write_file(dir_ / "bin" / "docker", "#!/bin/sh\nexit 1\n", true);
  const std::string path = (dir_ / "bin").string() + ":" + std::getenv("PATH");
  const std::string script = (kRoot / "image" / "testing" / "build-images.sh").string();
  const Outcome ci = run({"bash", script, "/bin/false", kBuild.string()}, {{"PATH", path}, {"CI", "true"}});
  EXPECT_EQ(ci.exit_code, 1) << ci.output;
  EXPECT_NE(ci.output.find("CI=true needs them"), std::string::npos) << ci.output;
  const Outcome local = run({"bash", script, "/bin/false", kBuild.string()}, {{"PATH", path}, {"CI", ""}});
  EXPECT_EQ(local.exit_code, 0) << local.output;
  // With an engine that answers, the fixture runs the build command it was given.
  write_file(dir_ / "bin" / "docker", "#!/bin/sh\nexit 0\n", true);
  const Outcome engine = run({"bash", script, "/bin/false", kBuild.string()}, {{"PATH", path}, {"CI", "true"}});
  EXPECT_EQ(engine.exit_code, 1) << "the build command (/bin/false) did not run: " << engine.output;
}

}  // namespace
