// --version's text, the pins it reads, the layout spacectl finds without flags, and the warning
// place check gives for a gatekeeper that is not the pinned image.
#include "controller/version.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "controller/help.h"
#include "controller/install_paths.h"

namespace controller {
namespace {

const std::string kPinA = "sha256:" + std::string(64, 'a');
const std::string kPinB = "sha256:" + std::string(64, 'b');

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-version-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string dir_;
};

SpaceSummary running(const std::string& id, const std::string& image) {
  SpaceSummary s;
  s.id = id;
  s.gatekeeper_state = "running";
  s.gatekeeper_image = image;
  s.gatekeeper_version = "0.0.9";
  s.gatekeeper_revision = "1234abcd";
  return s;
}

TEST(VersionWarningTest, WarnsOnlyForARunningGatekeeperThatIsNotThePin) {
  const VersionInfo own{"0.1.0", "feedface", true};
  SpaceSummary stopped = running("cccccccccccc", kPinB);
  stopped.gatekeeper_state = "exited";
  const std::vector<std::string> w =
      gatekeeper_version_warnings({running("aaaaaaaaaaaa", kPinA), running("bbbbbbbbbbbb", kPinB), stopped}, kPinA, own);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("space bbbbbbbbbbbb"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find(kPinB), std::string::npos);
  EXPECT_NE(w[0].find("version 0.0.9, revision 1234abcd"), std::string::npos);
  EXPECT_NE(w[0].find("not the pinned " + kPinA), std::string::npos);
  EXPECT_NE(w[0].find("spacectl 0.1.0, revision feedface"), std::string::npos);
}

TEST(VersionWarningTest, NoPinNoWarning) {
  const VersionInfo own{"0.1.0", "feedface", true};
  EXPECT_TRUE(gatekeeper_version_warnings({running("bbbbbbbbbbbb", kPinB)}, "", own).empty());
  EXPECT_TRUE(gatekeeper_version_warnings({running("bbbbbbbbbbbb", kPinB)}, "sha256:short", own).empty());
}

TEST(VersionWarningTest, UnlabelledImageSaysUnknown) {
  SpaceSummary s = running("bbbbbbbbbbbb", kPinB);
  s.gatekeeper_version.clear();
  s.gatekeeper_revision.clear();
  const std::vector<std::string> w = gatekeeper_version_warnings({s}, kPinA, VersionInfo{"0.1.0", "f", true});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("version unknown, revision unknown"), std::string::npos);
}

using VersionTextTest = TempDir;

TEST_F(VersionTextTest, NamesVersionRevisionAndEachPinWithItsFile) {
  std::ofstream(dir_ + "/gk.id") << kPinA << "\n";
  std::ofstream(dir_ + "/space.id") << "not a pin\n";
  PlaceOptions pins;
  pins.gatekeeper_image_file = dir_ + "/gk.id";
  pins.space_image_file = dir_ + "/space.id";
  const std::string text = version_text(VersionInfo{"0.1.0", "feedface", true}, pins, dir_ + "/none.id");
  EXPECT_EQ(text, "spacectl 0.1.0\nrevision feedface\ngatekeeper image " + kPinA + "  (" + dir_ + "/gk.id)\n" +
                      "space image not pinned (no valid pin file)  (" + dir_ + "/space.id)\n");
}

TEST_F(VersionTextTest, ABuildWithoutGitSaysSo) {
  PlaceOptions pins;
  const std::string text = version_text(VersionInfo{"0.1.0", "unknown", false}, pins, "");
  EXPECT_NE(text.find("revision unknown (built from a source tree without git)"), std::string::npos);
}

TEST(VersionTest, OwnVersionIsTheProjectVersion) {
  const VersionInfo v = own_version();
  EXPECT_FALSE(v.version.empty());
  if (v.revision_known) EXPECT_EQ(v.revision.size(), 40u);
  else EXPECT_EQ(v.revision, "unknown");
}

using InstallPathsTest = TempDir;

TEST_F(InstallPathsTest, ABuildTreeKeepsEverythingNextToTheExecutable) {
  ::mkdir((dir_ + "/bin").c_str(), 0755);
  ::mkdir((dir_ + "/bin/seccomp").c_str(), 0755);
  std::ofstream(dir_ + "/bin/seccomp/space.json") << "{}";
  const InstallPaths p = find_install_paths(dir_ + "/bin");
  EXPECT_FALSE(p.installed);
  EXPECT_EQ(p.data_dir, dir_ + "/bin");
  EXPECT_EQ(p.libexec_dir, dir_ + "/bin");
}

TEST_F(InstallPathsTest, AnInstalledTreeIsFoundFromThePrefix) {
  ::mkdir((dir_ + "/bin").c_str(), 0755);
  const InstallPaths p = find_install_paths(dir_ + "/bin");
  EXPECT_TRUE(p.installed);
  EXPECT_EQ(p.data_dir, dir_ + "/share/gatekeeper-spaces");
  EXPECT_EQ(p.libexec_dir, dir_ + "/libexec/gatekeeper-spaces");
}

TEST(HelpTest, EveryTopicHasTextAndUnknownHasNone) {
  ASSERT_FALSE(help_topics().empty());
  for (std::string_view t : help_topics()) {
    const std::optional<std::string> text = help_text(t);
    ASSERT_TRUE(text.has_value()) << t;
    EXPECT_GT(text->size(), 100u) << t;
    EXPECT_NE(help_index().find("  " + std::string(t) + " "), std::string::npos) << t;
  }
  EXPECT_FALSE(help_text("nope").has_value());
  EXPECT_FALSE(help_text("").has_value());
}

}  // namespace
}  // namespace controller
