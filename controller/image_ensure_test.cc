// The strict parts of images by digest: the digest record next to a pin, the --registry value of
// `spacectl image push`, which registries are spoken to over plain HTTP, and engine image IDs.
// The pull, the load and the refusals run live in image_registry_live_test.cc.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "controller/image_ensure.h"
#include "controller/image_push.h"

namespace controller {
namespace {

const std::string kHex(64, 'a');

TEST(ImageDigestReferenceTest, AcceptsRegistryPathAndSha256DigestOnly) {
  EXPECT_TRUE(is_digest_reference("127.0.0.1:5000/gk/gatekeeper@sha256:" + kHex));
  EXPECT_TRUE(is_digest_reference("registry.example/a/b/space-default@sha256:" + kHex));
  EXPECT_FALSE(is_digest_reference("gatekeeper@sha256:" + kHex)) << "no registry host: would resolve on Docker Hub";
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000/gk/gatekeeper:0.1.0")) << "a tag is not a digest";
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000/gk/gatekeeper:0.1.0@sha256:" + kHex)) << "no tag beside the digest";
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000/gk/gatekeeper@sha256:" + kHex.substr(1))) << "63 hex";
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000/gk/gatekeeper@sha256:" + std::string(64, 'A'))) << "upper case";
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000/gk/gatekeeper@sha512:" + kHex + kHex));
  EXPECT_FALSE(is_digest_reference("-H/x@sha256:" + kHex)) << "never a flag";
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000//gk@sha256:" + kHex));
  EXPECT_FALSE(is_digest_reference("127.0.0.1:5000/g k@sha256:" + kHex));
  // 255 bytes is the limit; one more is refused.
  const std::string tail = "@sha256:" + kHex;
  const std::string at_limit = "r/" + std::string(255 - 2 - tail.size(), 'a') + tail;
  ASSERT_EQ(at_limit.size(), 255u);
  EXPECT_TRUE(is_digest_reference(at_limit));
  EXPECT_FALSE(is_digest_reference("r/a" + at_limit.substr(2)));
}

TEST(ImageRegistryLocationTest, AcceptsHostPortAndPathOnly) {
  EXPECT_TRUE(is_registry_location("127.0.0.1:5000/gatekeeper-spaces"));
  EXPECT_TRUE(is_registry_location("registry.example/team/gk"));
  EXPECT_FALSE(is_registry_location("127.0.0.1:5000")) << "a path is required";
  EXPECT_FALSE(is_registry_location("http://127.0.0.1:5000/gk")) << "no scheme";
  EXPECT_FALSE(is_registry_location("127.0.0.1:5000/gk:tag"));
  EXPECT_FALSE(is_registry_location("127.0.0.1:0/gk"));
  EXPECT_FALSE(is_registry_location("127.0.0.1:65536/gk"));
  EXPECT_TRUE(is_registry_location("127.0.0.1:65535/gk"));
  EXPECT_FALSE(is_registry_location("--insecure/gk"));
  EXPECT_FALSE(is_registry_location("host/gk/"));
  EXPECT_FALSE(is_registry_location("host/Gk")) << "repository paths are lower case";
  EXPECT_FALSE(is_registry_location("host/" + std::string(196, 'a'))) << "201 bytes";
  EXPECT_TRUE(is_registry_location("host/" + std::string(195, 'a'))) << "200 bytes";
}

TEST(ImageRegistryLocationTest, PlainHttpOnlyForLoopbackAsDockerDoes) {
  EXPECT_TRUE(registry_is_loopback("127.0.0.1:5000/gk"));
  EXPECT_TRUE(registry_is_loopback("127.255.255.254:5000/gk"));
  EXPECT_TRUE(registry_is_loopback("localhost:5000/gk"));
  EXPECT_FALSE(registry_is_loopback("128.0.0.1:5000/gk")) << "just outside 127.0.0.0/8";
  EXPECT_FALSE(registry_is_loopback("126.255.255.255/gk"));
  EXPECT_FALSE(registry_is_loopback("127.0.0.1.example/gk")) << "a name that starts like the address";
  EXPECT_FALSE(registry_is_loopback("127.0.0.256/gk"));
  EXPECT_FALSE(registry_is_loopback("registry.example/gk"));
}

TEST(ImagePullFlagsTest, PodmanSkipsTlsOnlyForALoopbackRegistryAndDockerNeverIsTold) {
  const std::string loopback = "127.0.0.1:5000/gk/space-default@sha256:" + kHex;
  const std::string just_outside = "128.0.0.1:5000/gk/space-default@sha256:" + kHex;
  const std::string named = "registry.example/gk/space-default@sha256:" + kHex;
  EXPECT_EQ(engine_pull_flags(EngineKind::kPodman, loopback),
            std::vector<std::string>{"--tls-verify=false"});
  EXPECT_EQ(engine_pull_flags(EngineKind::kPodman, "localhost:5000/gk/x@sha256:" + kHex),
            std::vector<std::string>{"--tls-verify=false"});
  EXPECT_TRUE(engine_pull_flags(EngineKind::kPodman, just_outside).empty());
  EXPECT_TRUE(engine_pull_flags(EngineKind::kPodman, named).empty());
  // A path that names loopback is not the host.
  EXPECT_TRUE(engine_pull_flags(EngineKind::kPodman, "registry.example/127.0.0.1/x@sha256:" + kHex)
                  .empty());
  for (const EngineKind docker : {EngineKind::kDocker, EngineKind::kDockerSsh}) {
    EXPECT_TRUE(engine_pull_flags(docker, loopback).empty());
    EXPECT_TRUE(engine_pull_flags(docker, named).empty());
  }
}

TEST(ImageIdTest, NormalisesDockerAndPodmanAnswers) {
  EXPECT_EQ(normalise_image_id("sha256:" + kHex), "sha256:" + kHex);
  EXPECT_EQ(normalise_image_id(kHex), "sha256:" + kHex) << "Podman prints the bare hex";
  EXPECT_EQ(normalise_image_id(kHex.substr(1)), "");
  EXPECT_EQ(normalise_image_id("sha256:" + kHex + "\n"), "");
}

class DigestRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gk-digest-record-XXXXXX";
    dir_ = mkdtemp(tmpl);
    pin_ = dir_ + "/gatekeeper-image.id";
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string dir_, pin_;
};

TEST_F(DigestRecordTest, SitsNextToThePin) {
  EXPECT_EQ(digest_record_for(pin_), dir_ + "/gatekeeper-image.digest");
  EXPECT_EQ(archive_for(pin_), dir_ + "/gatekeeper-image.tar");
}

TEST_F(DigestRecordTest, NoRecordMeansNoRegistry) {
  Result<std::string> r = read_digest_record(pin_);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "");
}

TEST_F(DigestRecordTest, ReadsOneReference) {
  const std::string ref = "127.0.0.1:5000/gk/gatekeeper@sha256:" + kHex;
  std::ofstream(digest_record_for(pin_)) << ref << "\n";
  Result<std::string> r = read_digest_record(pin_);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, ref);
}

TEST_F(DigestRecordTest, RefusesATagTwoLinesOrGarbage) {
  for (const std::string& text : {std::string("127.0.0.1:5000/gk/gatekeeper:0.1.0\n"),
                                 "127.0.0.1:5000/gk/a@sha256:" + kHex + "\n127.0.0.1:5000/gk/b@sha256:" + kHex + "\n",
                                 std::string("\x1b[2J\n")}) {
    std::ofstream(digest_record_for(pin_), std::ios::trunc) << text;
    Result<std::string> r = read_digest_record(pin_);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, Code::kImageMissing);
    EXPECT_NE(r.error().message.find(digest_record_for(pin_)), std::string::npos) << r.error().message;
  }
}

TEST(ImagePushTest, RefusesARegistryValueBeforeTouchingAnything) {
  Result<std::vector<PushedImage>> r = push_images("http://127.0.0.1:5000/gk", {{"gatekeeper", "0", "/nonexistent.id", true}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kUsage);
}

TEST(ImagePushTest, AMissingRequiredPinIsImageMissingAndAnOptionalOneIsSkipped) {
  Result<std::vector<PushedImage>> r = push_images("127.0.0.1:5000/gk", {{"gatekeeper-test", "0", "/nonexistent/t.id", false}});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_NE((*r)[0].skipped.find("/nonexistent/t.id"), std::string::npos);
  Result<std::vector<PushedImage>> required = push_images("127.0.0.1:5000/gk", {{"gatekeeper", "0", "/nonexistent/g.id", true}});
  ASSERT_FALSE(required);
  EXPECT_EQ(required.error().code, Code::kImageMissing);
}

}  // namespace
}  // namespace controller
