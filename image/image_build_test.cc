// The image writer without a Docker engine: the recipes CMake generated (build/<preset>/image/
// *.args) are rebuilt with --no-load into temporary directories and the archives are read back.
// Reproducibility, exact contents and the config are properties of these bytes; Docker only
// stores them (image_docker_tests proves it keeps them).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "image/testing/archive.h"
#include "image/testing/run.h"

namespace {

namespace fs = std::filesystem;
using image_testing::describe;
using image_testing::read_file;
using image_testing::run;
using image_testing::RunOutcome;

const std::string kSourceDir = GK_SOURCE_DIR;
const std::string kBinaryDir = GK_BINARY_DIR;
const std::string kScript = kSourceDir + "/image/build-image.sh";
constexpr std::chrono::seconds kBuildTimeout{120};

class ImageBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "gk-image-build-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
    temp_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(temp_, ignored);
  }

  // Rebuilds image `name` from its generated recipe into <temp>/<out>; extra arguments follow.
  RunOutcome build(const std::string& name, const std::string& out,
                   std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {"env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"bash", kScript, "--args-file", kBinaryDir + "/image/" + name + ".args",
                             "--out", temp_ + "/" + out, "--no-load"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunOutcome outcome = run(argv, kBuildTimeout);
    last_command_ = describe(argv, outcome);
    return outcome;
  }

  void expect_two_builds_identical(const std::string& name) {
    ASSERT_EQ(build(name, "first").exit_code, 0) << last_command_;
    ASSERT_EQ(build(name, "second").exit_code, 0) << last_command_;
    const std::string first_id = read_file(temp_ + "/first/" + name + ".id");
    const std::string second_id = read_file(temp_ + "/second/" + name + ".id");
    EXPECT_TRUE(is_image_id_line(first_id)) << "'" << first_id << "'";
    EXPECT_EQ(first_id, second_id);
    const std::string first_tar = read_file(temp_ + "/first/" + name + ".tar");
    const std::string second_tar = read_file(temp_ + "/second/" + name + ".tar");
    ASSERT_FALSE(first_tar.empty());
    EXPECT_TRUE(first_tar == second_tar) << name << ".tar differs between two builds";
  }

  static bool is_image_id_line(const std::string& text) {
    if (text.size() != 7 + 64 + 1 || !text.starts_with("sha256:") || text.back() != '\n') {
      return false;
    }
    return text.find_first_not_of("0123456789abcdef", 7) == 7 + 64;
  }

  image_testing::ImageArchive built_archive(const std::string& name) {
    bytes_ = read_file(temp_ + "/first/" + name + ".tar");
    return image_testing::read_image_archive(bytes_);
  }

  std::string temp_;
  std::string last_command_;
  std::string bytes_;
};

TEST_F(ImageBuildTest, TwoBuildsOfTheGatekeeperImageAreByteIdentical) {
  expect_two_builds_identical("gatekeeper");
}

TEST_F(ImageBuildTest, TwoBuildsOfTheTestOnlyImageAreByteIdentical) {
  expect_two_builds_identical("gatekeeper-test");
}

TEST_F(ImageBuildTest, TwoBuildsOfTheSpaceImageAreByteIdentical) {
  expect_two_builds_identical("space-default");
}

TEST_F(ImageBuildTest, GatekeeperArchiveHoldsExactlyItsManifest) {
  ASSERT_EQ(build("gatekeeper", "first").exit_code, 0) << last_command_;
  const auto image = built_archive("gatekeeper");
  ASSERT_TRUE(image.error.empty()) << image.error;
  ASSERT_EQ(image.layers, 1u);
  EXPECT_EQ(image.layer_listing,
            image_testing::manifest_entries(read_file(kSourceDir + "/image/gatekeeper.manifest")));
}

TEST_F(ImageBuildTest, SpaceArchiveHoldsExactlyItsManifest) {
  ASSERT_EQ(build("space-default", "first").exit_code, 0) << last_command_;
  const auto image = built_archive("space-default");
  ASSERT_TRUE(image.error.empty()) << image.error;
  ASSERT_EQ(image.layers, 1u);
  EXPECT_EQ(image.layer_listing, image_testing::manifest_entries(
                                     read_file(kSourceDir + "/image/space-default.manifest")));
}

TEST_F(ImageBuildTest, GatekeeperConfigRunsTheBinaryAs65532WithOciLabels) {
  ASSERT_EQ(build("gatekeeper", "first").exit_code, 0) << last_command_;
  const auto image = built_archive("gatekeeper");
  ASSERT_TRUE(image.error.empty()) << image.error;
  const std::string& config = image.config_json;
  EXPECT_EQ(image_testing::json_string_value(config, "User"), "65532:65532");
  EXPECT_NE(config.find("\"Entrypoint\":[\"/gatekeeper\"]"), std::string::npos) << config;
  EXPECT_EQ(config.find("\"Cmd\""), std::string::npos) << "the controller gives the arguments";
  EXPECT_EQ(image_testing::json_string_value(config, "org.opencontainers.image.title"),
            "gatekeeper");
  EXPECT_EQ(image_testing::json_string_value(config, "org.opencontainers.image.version"),
            GK_PROJECT_VERSION);
  EXPECT_FALSE(image_testing::json_string_value(config, "org.opencontainers.image.source").empty());
  EXPECT_FALSE(
      image_testing::json_string_value(config, "org.opencontainers.image.revision").empty());
  EXPECT_EQ(config.find("gatekeeper-spaces.test-only"), std::string::npos)
      << "the release image must not carry the test-only label";
}

TEST_F(ImageBuildTest, TestOnlyImageSaysSoInItsLabel) {
  ASSERT_EQ(build("gatekeeper-test", "first").exit_code, 0) << last_command_;
  const auto image = built_archive("gatekeeper-test");
  ASSERT_TRUE(image.error.empty()) << image.error;
  EXPECT_EQ(image_testing::json_string_value(image.config_json, "gatekeeper-spaces.test-only"),
            "true");
}

TEST_F(ImageBuildTest, CreatedLabelAndIdFollowSourceDateEpoch) {
  ASSERT_EQ(build("gatekeeper", "first", {}, {"SOURCE_DATE_EPOCH=86400"}).exit_code, 0)
      << last_command_;
  ASSERT_EQ(build("gatekeeper", "second", {}, {"SOURCE_DATE_EPOCH=86401"}).exit_code, 0)
      << last_command_;
  const auto image = built_archive("gatekeeper");
  ASSERT_TRUE(image.error.empty()) << image.error;
  EXPECT_EQ(image_testing::json_string_value(image.config_json, "org.opencontainers.image.created"),
            "1970-01-02T00:00:00Z");
  EXPECT_EQ(image_testing::json_string_value(image.config_json, "created"),
            "1970-01-02T00:00:00Z");
  EXPECT_NE(read_file(temp_ + "/first/gatekeeper.id"), read_file(temp_ + "/second/gatekeeper.id"))
      << "a different epoch must give a different image";
}

// A FROM-scratch image has no loader and no libc: a dynamic binary must be refused, not shipped.
TEST_F(ImageBuildTest, WriterRefusesADynamicallyLinkedBinary) {
  const std::vector<std::string> argv = {
      "bash", kScript, "--out", temp_ + "/dynamic", "--name", "dynamic", "--no-load",
      "--file", "/tool:0555:0:0:" + kBinaryDir + "/bin/image_build_tests"};
  const RunOutcome outcome = run(argv, kBuildTimeout);
  EXPECT_NE(outcome.exit_code, 0) << describe(argv, outcome);
  EXPECT_NE(outcome.err.find("dynamically linked"), std::string::npos) << outcome.err;
  EXPECT_FALSE(fs::exists(temp_ + "/dynamic/dynamic.tar"));
}

// Control: the same binary is accepted once the image declares the loader it names (the default
// space image ships Debian's git this way).
TEST_F(ImageBuildTest, WriterAcceptsADynamicBinaryWhoseLoaderIsAnEntry) {
  const std::vector<std::string> argv = {
      "bash", kScript, "--out", temp_ + "/dynamic", "--name", "dynamic", "--no-load",
      "--file", "/tool:0555:0:0:" + kBinaryDir + "/bin/image_build_tests",
      "--dir", "/lib64:0755:0:0", "--symlink", "/lib64/ld-linux-x86-64.so.2:/lib/ld.so"};
  const RunOutcome outcome = run(argv, kBuildTimeout);
  EXPECT_EQ(outcome.exit_code, 0) << describe(argv, outcome);
  EXPECT_TRUE(fs::exists(temp_ + "/dynamic/dynamic.tar"));
}

// Every entry is declared, parents too: nothing enters the image that the manifest does not list.
TEST_F(ImageBuildTest, WriterRefusesAnEntryWhoseParentIsNotDeclared) {
  const std::vector<std::string> argv = {
      "bash", kScript, "--out", temp_ + "/orphan", "--name", "orphan", "--no-load",
      "--file", "/etc/passwd:0644:0:0:" + kSourceDir + "/image/space/passwd"};
  const RunOutcome outcome = run(argv, kBuildTimeout);
  EXPECT_NE(outcome.exit_code, 0) << describe(argv, outcome);
  EXPECT_NE(outcome.err.find("parent '/etc' is not declared"), std::string::npos) << outcome.err;
}

TEST_F(ImageBuildTest, WriterRefusesAnImageThatDiffersFromItsManifest) {
  const std::vector<std::string> argv = {
      "bash", kScript, "--out", temp_ + "/extra", "--name", "extra", "--no-load",
      "--expect-manifest", kSourceDir + "/image/gatekeeper.manifest",
      "--dir", "/etc:0755:0:0", "--dir", "/tmp:1777:0:0"};
  const RunOutcome outcome = run(argv, kBuildTimeout);
  EXPECT_NE(outcome.exit_code, 0) << describe(argv, outcome);
  EXPECT_NE(outcome.err.find("does not hold exactly"), std::string::npos) << outcome.err;
  EXPECT_FALSE(fs::exists(temp_ + "/extra/extra.tar"));
}

}  // namespace
