// The loaded images, as the controller will use them: by the IDs in <build>/bin/*.id, through a
// real Docker engine, with --network none (no traffic at all). The ctest fixture
// image_build_images runs the `images` target first.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "image/testing/archive.h"
#include "image/testing/run.h"
#include "policy/number.h"
#include "tests/support/environment.h"

namespace {

namespace fs = std::filesystem;
using image_testing::describe;
using image_testing::read_file;
using image_testing::run;
using image_testing::RunOutcome;

const std::string kSourceDir = GK_SOURCE_DIR;
const std::string kBinaryDir = GK_BINARY_DIR;
constexpr std::chrono::seconds kDockerTimeout{90};
// The appliance image targets at most 5 MB (decimal), as Docker counts it.
constexpr std::uint64_t kMaxGatekeeperImageBytes = 5'000'000;
constexpr std::string_view kBenchmarkingAddress = "198.18.0.1";  // RFC 2544 range, 198.18.0.0/15

class ImageDockerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers `docker info`");
    std::string pattern = (fs::temp_directory_path() / "gk-image-docker-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
    temp_ = pattern;
  }
  void TearDown() override {
    if (temp_.empty()) return;
    std::error_code ignored;
    fs::remove_all(temp_, ignored);
  }

  // The pinned ID of one image, without its newline; fails the test when the file is malformed.
  static std::string pinned_id(const std::string& id_file) {
    const std::string text = read_file(kBinaryDir + "/bin/" + id_file);
    const bool well_formed = text.size() == 7 + 64 + 1 && text.starts_with("sha256:") &&
                             text.back() == '\n' &&
                             text.find_first_not_of("0123456789abcdef", 7) == 7 + 64;
    EXPECT_TRUE(well_formed) << kBinaryDir << "/bin/" << id_file << " holds '" << text << "'";
    return well_formed ? text.substr(0, text.size() - 1) : std::string();
  }

  RunOutcome docker(std::vector<std::string> args) {
    args.insert(args.begin(), "docker");
    RunOutcome outcome = run(args, kDockerTimeout);
    last_command_ = describe(args, outcome);
    return outcome;
  }

  std::string inspect(const std::string& image, const std::string& format) {
    RunOutcome outcome = docker({"image", "inspect", "--format", format, image});
    EXPECT_EQ(outcome.exit_code, 0) << last_command_;
    while (!outcome.out.empty() && outcome.out.back() == '\n') outcome.out.pop_back();
    return outcome.out;
  }

  RunOutcome explain_in(const std::string& image) {
    return docker({"run", "--rm", "--network", "none", image, "explain", "--mode", "open",
                   "--answer", std::string(kBenchmarkingAddress), "example.com:443"});
  }

  // What `docker save` returns for the loaded image: the engine's copy, not our archive.
  image_testing::ImageArchive saved(const std::string& image) {
    const std::string path = temp_ + "/saved.tar";
    const RunOutcome outcome = docker({"save", "--output", path, image});
    EXPECT_EQ(outcome.exit_code, 0) << last_command_;
    saved_bytes_ = read_file(path);
    return image_testing::read_image_archive(saved_bytes_);
  }

  std::string temp_;
  std::string last_command_;
  std::string saved_bytes_;
};

TEST_F(ImageDockerTest, EngineHoldsEachPinnedIdUnderItsTag) {
  const std::string version = GK_PROJECT_VERSION;
  const std::vector<std::pair<std::string, std::string>> images = {
      {"gatekeeper-image.id", "gatekeeper-spaces/gatekeeper:" + version},
      {"gatekeeper-test-image.id", "gatekeeper-spaces/gatekeeper-test:" + version + "-TEST-ONLY"},
      {"space-image.id", "gatekeeper-spaces/space-default:" + version}};
  for (const auto& [id_file, tag] : images) {
    const std::string id = pinned_id(id_file);
    ASSERT_FALSE(id.empty());
    EXPECT_EQ(inspect(id, "{{.Id}}"), id) << id_file;
    EXPECT_EQ(inspect(tag, "{{.Id}}"), id) << tag << " does not name the pinned image";
  }
}

// The controller pins the ID the build wrote; a fresh build of the same commit must give it back.
TEST_F(ImageDockerTest, RebuildingGivesThePinnedGatekeeperId) {
  const std::string id = pinned_id("gatekeeper-image.id");
  const std::vector<std::string> argv = {
      "bash", kSourceDir + "/image/build-image.sh", "--args-file",
      kBinaryDir + "/image/gatekeeper.args", "--out", temp_ + "/rebuild", "--no-load"};
  const RunOutcome outcome = run(argv, kDockerTimeout);
  ASSERT_EQ(outcome.exit_code, 0) << describe(argv, outcome);
  EXPECT_EQ(read_file(temp_ + "/rebuild/gatekeeper.id"), id + "\n");
}

TEST_F(ImageDockerTest, GatekeeperImageHoldsExactlyItsManifest) {
  const auto image = saved(pinned_id("gatekeeper-image.id"));
  ASSERT_TRUE(image.error.empty()) << image.error;
  ASSERT_EQ(image.layers, 1u);
  EXPECT_EQ(image.layer_listing,
            image_testing::manifest_entries(read_file(kSourceDir + "/image/gatekeeper.manifest")));
}

TEST_F(ImageDockerTest, TestOnlyImageHoldsExactlyTheGatekeeperManifest) {
  const auto image = saved(pinned_id("gatekeeper-test-image.id"));
  ASSERT_TRUE(image.error.empty()) << image.error;
  ASSERT_EQ(image.layers, 1u);
  EXPECT_EQ(image.layer_listing,
            image_testing::manifest_entries(read_file(kSourceDir + "/image/gatekeeper.manifest")));
}

TEST_F(ImageDockerTest, SpaceImageHoldsExactlyItsManifest) {
  const auto image = saved(pinned_id("space-image.id"));
  ASSERT_TRUE(image.error.empty()) << image.error;
  ASSERT_EQ(image.layers, 1u);
  EXPECT_EQ(image.layer_listing, image_testing::manifest_entries(
                                     read_file(kSourceDir + "/image/space-default.manifest")));
}

TEST_F(ImageDockerTest, GatekeeperImageIsAtMostFiveMegabytes) {
  const std::string size_text = inspect(pinned_id("gatekeeper-image.id"), "{{.Size}}");
  ASSERT_FALSE(size_text.empty());
  const std::optional<std::uint64_t> parsed = policy::parse_number<std::uint64_t>(size_text);
  ASSERT_TRUE(parsed.has_value()) << size_text;
  const std::uint64_t size = *parsed;
  std::cout << "gatekeeper image size: " << size << " bytes\n";
  RecordProperty("gatekeeper_image_bytes", std::to_string(size));
  EXPECT_LE(size, kMaxGatekeeperImageBytes);
  EXPECT_GT(size, 0u);
}

// The release binary, as shipped, denies the benchmarking range...
TEST_F(ImageDockerTest, ReleaseImageAnswersDenyBlockedAddressForBenchmarkingRange) {
  const RunOutcome outcome = explain_in(pinned_id("gatekeeper-image.id"));
  EXPECT_EQ(outcome.exit_code, 0) << last_command_;
  EXPECT_EQ(outcome.out, "deny:blocked-address\n") << last_command_;
}

// ...and allows a public answer, so the denial above is the policy speaking, not a broken image.
TEST_F(ImageDockerTest, ReleaseImageAllowsAPublicAnswer) {
  const RunOutcome outcome =
      docker({"run", "--rm", "--network", "none", pinned_id("gatekeeper-image.id"), "explain",
              "--mode", "open", "--answer", "93.184.215.14", "example.com:443"});
  EXPECT_EQ(outcome.exit_code, 0) << last_command_;
  EXPECT_EQ(outcome.out, "allow\n") << last_command_;
}

// Only the TEST-ONLY build treats 198.18.0.0/15 as public; it says so on stderr.
TEST_F(ImageDockerTest, TestOnlyImageTreatsBenchmarkingRangeAsPublic) {
  const RunOutcome outcome = explain_in(pinned_id("gatekeeper-test-image.id"));
  EXPECT_EQ(outcome.exit_code, 0) << last_command_;
  EXPECT_EQ(outcome.out, "allow\n") << last_command_;
  EXPECT_NE(outcome.err.find("unsafe test build"), std::string::npos) << outcome.err;
}

TEST_F(ImageDockerTest, GatekeeperImageRunsAs65532WithTheBinaryAsEntrypoint) {
  const std::string id = pinned_id("gatekeeper-image.id");
  EXPECT_EQ(inspect(id, "{{.Config.User}}"), "65532:65532");
  EXPECT_EQ(inspect(id, "{{json .Config.Entrypoint}}"), "[\"/gatekeeper\"]");
  EXPECT_EQ(inspect(id, "{{json .Config.Cmd}}"), "null");
}

TEST_F(ImageDockerTest, GatekeeperImageHasNoShell) {
  const RunOutcome outcome = docker({"run", "--rm", "--network", "none", "--entrypoint",
                                     "/bin/sh", pinned_id("gatekeeper-image.id"), "-c", "true"});
  // 127: the runtime found no /bin/sh to execute (126 would mean one exists but cannot run).
  EXPECT_EQ(outcome.exit_code, 127) << last_command_;
  EXPECT_NE(outcome.err.find("/bin/sh"), std::string::npos) << last_command_;
}

TEST_F(ImageDockerTest, GatekeeperImageCarriesOciLabels) {
  const std::string id = pinned_id("gatekeeper-image.id");
  const std::string prefix = "{{index .Config.Labels \"org.opencontainers.image.";
  EXPECT_EQ(inspect(id, prefix + "title\"}}"), "gatekeeper");
  EXPECT_EQ(inspect(id, prefix + "version\"}}"), GK_PROJECT_VERSION);
  EXPECT_FALSE(inspect(id, prefix + "source\"}}").empty());
  const std::string revision = inspect(id, prefix + "revision\"}}");
  EXPECT_TRUE(revision == "unknown" || revision.size() == 40) << revision;
  const std::string created = inspect(id, prefix + "created\"}}");
  EXPECT_EQ(created, inspect(id, "{{.Created}}").substr(0, 19) + "Z")
      << "the created label and the config's created time come from the same epoch";
  EXPECT_EQ(inspect(id, "{{index .Config.Labels \"gatekeeper-spaces.test-only\"}}"), "");
  EXPECT_EQ(inspect(pinned_id("gatekeeper-test-image.id"),
                    "{{index .Config.Labels \"gatekeeper-spaces.test-only\"}}"),
            "true");
}

TEST_F(ImageDockerTest, SpaceImageRunsItsShellAsTheSpaceUser) {
  const RunOutcome outcome =
      docker({"run", "--rm", "--network", "none", pinned_id("space-image.id"), "sh", "-c",
              "id -un; id -u; id -g; echo \"$HOME\"; touch /tmp/t /home/space/t /spaces/t && "
              "echo writable"});
  EXPECT_EQ(outcome.exit_code, 0) << last_command_;
  EXPECT_EQ(outcome.out, "space\n70000\n70000\n/home/space\nwritable\n") << last_command_;
}

// Code in needs git (at least 2.28) and an inner `timeout -s KILL` in the space; the space's user
// must be able to make a repository and a commit on a read-only root with a writable /tmp.
TEST_F(ImageDockerTest, SpaceImageHasAWorkingGitAndTimeout) {
  const RunOutcome outcome = docker(
      {"run", "--rm", "--network", "none", "--read-only", "--tmpfs", "/tmp:rw,exec", "--cap-drop", "ALL",
       pinned_id("space-image.id"), "sh", "-c",
       "git --version && cd /tmp && git init -q --initial-branch=main r && cd r && echo a > a && git add a && "
       "git -c user.name=n -c user.email=e@x commit -qm one && git rev-list --count HEAD && "
       "timeout -s KILL 1 sleep 5; echo timeout=$?"});
  EXPECT_EQ(outcome.exit_code, 0) << last_command_ << outcome.err;
  EXPECT_EQ(outcome.out.rfind("git version 2.", 0), 0u) << outcome.out;
  EXPECT_NE(outcome.out.find("\n1\ntimeout=137\n"), std::string::npos) << outcome.out;
}

// glibc's NSS modules are in the image: the static busybox resolves a name from /etc/hosts
// (it reports the address it tried), and the CA bundle is where TLS clients look for it.
TEST_F(ImageDockerTest, SpaceImageResolvesNamesAndCarriesTheCaBundle) {
  const RunOutcome outcome = docker({"run", "--rm", "--network", "none", pinned_id("space-image.id"), "sh", "-c",
                                     "nc -w 1 localhost 1; head -c 27 /etc/ssl/certs/ca-certificates.crt"});
  EXPECT_NE(outcome.err.find("127.0.0.1"), std::string::npos) << outcome.err;
  EXPECT_EQ(outcome.err.find("bad address"), std::string::npos) << outcome.err;
  EXPECT_EQ(outcome.out, "-----BEGIN CERTIFICATE-----") << outcome.out;
}

TEST_F(ImageDockerTest, SpaceImageDefaultsToAShellWithNoEntrypoint) {
  const std::string id = pinned_id("space-image.id");
  EXPECT_EQ(inspect(id, "{{.Config.User}}"), "70000:70000");
  EXPECT_EQ(inspect(id, "{{json .Config.Cmd}}"), "[\"/bin/sh\"]");
  EXPECT_EQ(inspect(id, "{{json .Config.Entrypoint}}"), "null");
}

}  // namespace
