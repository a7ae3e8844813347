// `cmake --install` into a fresh prefix: every file lands where spacectl finds it without flags,
// --version is the same in both binaries and names the installed pins, help topics, manual pages
// and shell completion work from the installed tree.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/environment.h"

namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Ran {
  int status = -1;
  std::string out;
};

// `command` is ours (fixed words and temp paths), run by sh; stdout is captured.
Ran sh(const std::string& command, const std::string& dir) {
  const std::string out_file = dir + "/.out";
  Ran r;
  const int s = std::system((command + " > " + out_file + " 2>&1").c_str());
  r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128;
  r.out = slurp(out_file);
  return r;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

class InstallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/gk-install-XXXXXX";
    prefix_ = mkdtemp(tmpl);
    const int s = std::system(("cmake --install " GK_BINARY_DIR " --prefix " + prefix_ + " > " + prefix_ + "/install.log 2>&1").c_str());
    install_status_ = WIFEXITED(s) ? WEXITSTATUS(s) : 128;
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    fs::remove_all(prefix_, ignored);
  }
  void SetUp() override { ASSERT_EQ(install_status_, 0) << slurp(prefix_ + "/install.log"); }
  static std::string prefix_;
  static int install_status_;
};
std::string InstallTest::prefix_;
int InstallTest::install_status_ = -1;

TEST_F(InstallTest, EveryFileLandsInTheLayoutSpacectlReads) {
  for (const char* path : {"bin/spacectl",
                           "bin/gatekeeper",
                           "libexec/gatekeeper-spaces/escape-suite",
                           "libexec/gatekeeper-spaces/spacectl-bridge",
                           "share/gatekeeper-spaces/gatekeeper-image.id",
                           "share/gatekeeper-spaces/gatekeeper-image.tar",
                           "share/gatekeeper-spaces/space-image.id",
                           "share/gatekeeper-spaces/space-image.tar",
                           "share/gatekeeper-spaces/seccomp/space.json",
                           "share/gatekeeper-spaces/seccomp/gatekeeper.json",
                           "share/doc/gatekeeper-spaces/README.md",
                           "share/doc/gatekeeper-spaces/SECURITY.md",
                           "share/doc/gatekeeper-spaces/COPYRIGHT.md",
                           "share/doc/gatekeeper-spaces/docs/architecture.md",
                           "share/doc/gatekeeper-spaces/licenses/busybox-static.copyright",
                           "share/doc/gatekeeper-spaces/licenses/boringssl.LICENSE",
                           "share/man/man1/spacectl.1",
                           "share/man/man1/gatekeeper.1",
                           "share/man/man1/escape-suite.1",
                           "share/bash-completion/completions/spacectl",
                           "share/zsh/vendor-completions/_spacectl",
                           "lib/systemd/system/spacectl.service",
                           "lib/systemd/system/spacectl.socket",
                           "lib/systemd/user/spacectl.service",
                           "lib/systemd/user/spacectl.socket"})
    EXPECT_TRUE(fs::exists(prefix_ + "/" + path)) << path;
  EXPECT_EQ(::access((prefix_ + "/bin/spacectl").c_str(), X_OK), 0);
  EXPECT_EQ(::access((prefix_ + "/libexec/gatekeeper-spaces/escape-suite").c_str(), X_OK), 0);
  // Place::connect copies it into spaces (controller/docker_bridge.cc).
  EXPECT_EQ(::access((prefix_ + "/libexec/gatekeeper-spaces/spacectl-bridge").c_str(), X_OK), 0);
}

TEST_F(InstallTest, VersionNamesTheInstalledPinsWithoutFlags) {
  const Ran v = sh(prefix_ + "/bin/spacectl --version", prefix_);
  ASSERT_EQ(v.status, 0) << v.out;
  const std::string data = prefix_ + "/share/gatekeeper-spaces";
  const std::string gk_pin = first_line(slurp(data + "/gatekeeper-image.id"));
  const std::string space_pin = first_line(slurp(data + "/space-image.id"));
  ASSERT_EQ(gk_pin.size(), 71u);
  EXPECT_NE(v.out.find("gatekeeper image " + gk_pin + "  (" + data + "/gatekeeper-image.id)"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("space image " + space_pin + "  (" + data + "/space-image.id)"), std::string::npos) << v.out;
}

// The config JSON inside an image archive (manifest.json names it).
std::string archive_config(const std::string& archive, const std::string& dir) {
  const Ran manifest = sh("tar -xOf " + archive + " manifest.json", dir);
  const std::size_t c = manifest.out.find("\"Config\":\"");
  if (manifest.status != 0 || c == std::string::npos) return {};
  const std::string name = manifest.out.substr(c + 10, manifest.out.find('"', c + 10) - c - 10);
  return sh("tar -xOf " + archive + " " + name, dir).out;
}

std::string label_value(const std::string& config, const std::string& key) {
  const std::string needle = "\"" + key + "\":\"";
  const std::size_t at = config.find(needle);
  if (at == std::string::npos) return {};
  return config.substr(at + needle.size(), config.find('"', at + needle.size()) - at - needle.size());
}

// The package's archives are written without Docker; their IDs must equal what `docker load`
// gave the `images` target, when that target ran in this build tree at the same revision.
TEST_F(InstallTest, ArchivePinsEqualTheLoadedImagesPins) {
  const std::string loaded = GK_BINARY_DIR "/bin/gatekeeper-image.id";
  if (!fs::exists(loaded)) GTEST_SKIP() << "the images target has not run in this build tree (needs Docker)";
  const std::string key = "org.opencontainers.image.revision";
  const std::string loaded_rev = label_value(archive_config(GK_BINARY_DIR "/image/out/gatekeeper.tar", prefix_), key);
  const std::string shipped_rev = label_value(archive_config(GK_BINARY_DIR "/package-images/gatekeeper.tar", prefix_), key);
  ASSERT_FALSE(shipped_rev.empty());
  if (loaded_rev != shipped_rev)
    GTEST_SKIP() << "the images target last ran at revision " << loaded_rev << ", the archives are of " << shipped_rev;
  EXPECT_EQ(slurp(prefix_ + "/share/gatekeeper-spaces/gatekeeper-image.id"), slurp(loaded));
  EXPECT_EQ(slurp(prefix_ + "/share/gatekeeper-spaces/space-image.id"), slurp(GK_BINARY_DIR "/bin/space-image.id"));
}

TEST_F(InstallTest, BothBinariesNameTheSameVersionAndRevision) {
  const Ran s = sh(prefix_ + "/bin/spacectl --version", prefix_);
  const Ran g = sh(prefix_ + "/bin/gatekeeper --version", prefix_);
  ASSERT_EQ(s.status, 0);
  ASSERT_EQ(g.status, 0);
  const std::string version = first_line(s.out).substr(std::string("spacectl ").size());
  EXPECT_EQ(first_line(g.out), "gatekeeper " + version);
  const std::string s_rev = s.out.substr(s.out.find("revision "), s.out.find('\n', s.out.find("revision ")) - s.out.find("revision "));
  EXPECT_NE(g.out.find(s_rev + "\n"), std::string::npos) << s.out << g.out;
  // A checkout names its HEAD; a tarball says it has none.
  const Ran head = sh("git -C " GK_SOURCE_DIR " rev-parse --verify -q HEAD", prefix_);
  if (head.status == 0) EXPECT_EQ(s_rev, "revision " + first_line(head.out));
  else EXPECT_EQ(s_rev, "revision unknown (built from a source tree without git)");
}

TEST_F(InstallTest, HelpTopicsAnswerAndAnUnknownTopicIsAUsageError) {
  const Ran index = sh(prefix_ + "/bin/spacectl help", prefix_);
  EXPECT_EQ(index.status, 0);
  EXPECT_NE(index.out.find("corridor"), std::string::npos);
  const Ran corridor = sh(prefix_ + "/bin/spacectl help corridor", prefix_);
  EXPECT_EQ(corridor.status, 0);
  EXPECT_NE(corridor.out.find("CONNECT"), std::string::npos);
  EXPECT_EQ(sh(prefix_ + "/bin/spacectl help no-such-topic", prefix_).status, 2);
}

TEST_F(InstallTest, ManualPagesFormatWithoutWarningsAndNameEveryCommand) {
  GK_REQUIRE(sh("command -v groff", prefix_).status == 0, "groff formats manual pages");
  for (const char* page : {"spacectl.1", "gatekeeper.1", "escape-suite.1"}) {
    const Ran r = sh("groff -man -ww -z " + prefix_ + "/share/man/man1/" + page, prefix_);
    EXPECT_EQ(r.status, 0) << page;
    EXPECT_EQ(r.out, "") << page;
  }
  const std::string man = slurp(prefix_ + "/share/man/man1/spacectl.1");
  for (const char* command : {"place check", "space create", "space list", "space exec", "code in", "code history",
                              "code files", "code forget", "apply", "apply-state", "network set", "grant add",
                              "window-key", "journal", "policy", "escape-test", "help", "\\-\\-version"})
    EXPECT_NE(man.find(command), std::string::npos) << command;
}

// Completion runs the installed bash script against a stand-in spacectl on PATH that answers
// `--json space list` with two spaces.
TEST_F(InstallTest, BashCompletesSubcommandsOptionsAndSpaceIds) {
  const std::string bin = prefix_ + "/fakebin";
  fs::create_directories(bin);
  std::ofstream(bin + "/spacectl") << "#!/bin/sh\n[ \"$*\" = '--json space list' ] && "
                                      "echo '{\"spaces\":[{\"id\":\"0123456789ab\",\"state\":\"running\"},{\"id\":\"ba9876543210\"}]}'\n";
  ::chmod((bin + "/spacectl").c_str(), 0755);
  auto complete = [&](const std::string& words) {
    const std::string script = prefix_ + "/complete.sh";
    std::ofstream(script) << "PATH=" << bin << ":$PATH\n. " << prefix_ << "/share/bash-completion/completions/spacectl\n"
                          << "COMP_WORDS=(" << words << ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_spacectl\n"
                          << "printf '%s\\n' \"${COMPREPLY[@]}\" | sort | tr '\\n' ' '\n";
    return sh("bash " + script, prefix_).out;
  };
  EXPECT_EQ(complete("spacectl sp"), "space ");
  EXPECT_EQ(complete("spacectl space ''"), "create exec list remove show start stop verify ");
  EXPECT_EQ(complete("spacectl space verify ''"), "0123456789ab ba9876543210 ");
  EXPECT_EQ(complete("spacectl escape-test 0123456789ab --format ''"), "html json junit sarif tap text ");
  EXPECT_EQ(complete("spacectl network set 0123456789ab --m"), "--mode ");
  EXPECT_EQ(complete("spacectl help cor"), "corridor ");
  EXPECT_EQ(complete("spacectl code ''"), "files forget history in out ");
  EXPECT_EQ(complete("spacectl apply 0123456789ab --"), "--as-branch --as-changes --help --remove-afterwards ");
  EXPECT_EQ(complete("spacectl apply ''"), "0123456789ab ba9876543210 ");
  EXPECT_EQ(complete("spacectl code in ''"), "0123456789ab ba9876543210 ");
}

TEST_F(InstallTest, ZshCompletionLoads) {
  GK_REQUIRE(sh("command -v zsh", prefix_).status == 0, "zsh is needed (run .ci/setup)");
  const Ran r = sh("zsh -n " + prefix_ + "/share/zsh/vendor-completions/_spacectl", prefix_);
  EXPECT_EQ(r.status, 0) << r.out;
  const Ran loaded = sh("zsh -fc 'fpath=(" + prefix_ + "/share/zsh/vendor-completions $fpath); "
                            "autoload -Uz compinit && compinit -u -D && print ${_comps[spacectl]}'",
                        prefix_);
  EXPECT_EQ(first_line(loaded.out), "_spacectl") << loaded.out;
}

// The images the package ships carry, in their OCI labels, the version and revision the binaries
// print: read from the archive's own config (no Docker needed).
TEST(ImageLabelsTest, ArchivesCarryTheVersionAndRevisionTheBinariesPrint) {
  char tmpl[] = "/tmp/gk-labels-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const Ran v = sh(GK_BINARY_DIR "/bin/gatekeeper --version", dir);
  ASSERT_EQ(v.status, 0);
  const std::string version = first_line(v.out).substr(std::string("gatekeeper ").size());
  const std::size_t r = v.out.find("revision ");
  std::string revision = v.out.substr(r + 9, v.out.find('\n', r) - r - 9);
  if (revision.rfind("unknown", 0) == 0) revision = "unknown";
  for (const char* image : {"gatekeeper", "space-default"}) {
    const std::string config = archive_config(GK_BINARY_DIR "/package-images/" + std::string(image) + ".tar", dir);
    ASSERT_FALSE(config.empty()) << image;
    EXPECT_EQ(label_value(config, "org.opencontainers.image.version"), version) << image;
    EXPECT_EQ(label_value(config, "org.opencontainers.image.revision"), revision) << image << ": " << config.substr(0, 600);
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

}  // namespace
