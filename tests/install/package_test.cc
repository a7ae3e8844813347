// The Debian package on a clean Debian 12 root made here with debootstrap (minbase, from the
// Debian mirror apt uses): apt installs it with the dependencies it declares, `spacectl --version`
// and `spacectl place check` work with no flag (the chroot shares the host's network and reaches
// the host's Docker engine through its socket, bind-mounted), a space is created and removed, and
// purging the package leaves no file of ours behind.
#include <sys/mount.h>

#include <cerrno>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
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

class PackageTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (root_.empty()) return;
    bool detached = true;
    for (const char* m : {"/run/docker.sock", "/proc", "/dev", "/sys"})
      if (::umount2((root_ + m).c_str(), MNT_DETACH) != 0 && errno != EINVAL) detached = false;
    // Never walk a root that may still hold the host's /dev or /sys.
    if (!detached) return;
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  Ran sh(const std::string& command) {
    const std::string out_file = log_dir_ + "/.out";
    Ran r;
    const int s = std::system((command + " > " + out_file + " 2>&1").c_str());
    r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128;
    r.out = slurp(out_file);
    std::ofstream(log_dir_ + "/package-test.log", std::ios::app) << "$ " << command << "\n" << r.out << "[exit " << r.status << "]\n";
    return r;
  }
  Ran in_root(const std::string& command) {
    return sh("chroot " + root_ + " /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "
              "DEBIAN_FRONTEND=noninteractive /bin/sh -c '" + command + "'");
  }
  // Every path in the root except what apt, dpkg and the kernel churn on their own.
  std::set<std::string> files() {
    std::set<std::string> out;
    const Ran r = sh("cd " + root_ + " && find . -xdev \\( -path ./proc -o -path ./var/lib/dpkg -o -path ./var/lib/apt -o "
                     "-path ./var/cache -o -path ./var/log -o -path ./tmp -o -path ./run -o -path ./dev \\) -prune -o -print");
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);) out.insert(l);
    return out;
  }

  std::string root_;
  std::string log_dir_ = GK_BINARY_DIR "/artifacts";
};

TEST_F(PackageTest, InstallsRunsAndPurgesCleanlyOnACleanDebianRoot) {
  GK_REQUIRE(gk_test::running_as_root(), "debootstrap and chroot need root");
  GK_REQUIRE(std::system("command -v debootstrap >/dev/null") == 0, "debootstrap is needed (run .ci/setup)");
  GK_REQUIRE(gk_test::docker_engine_answers(), "place check needs a Docker engine");
  fs::create_directories(log_dir_);
  std::ofstream(log_dir_ + "/package-test.log", std::ios::trunc);
  std::string deb;
  for (const auto& e : fs::directory_iterator(GK_BINARY_DIR))
    if (e.path().extension() == ".deb" && e.path().filename().string().rfind("gatekeeper-spaces_", 0) == 0) deb = e.path();
  ASSERT_FALSE(deb.empty()) << "no gatekeeper-spaces_*.deb in " GK_BINARY_DIR " (cmake --build --target package)";

  char tmpl[] = "/var/tmp/gk-debroot-XXXXXX";
  root_ = mkdtemp(tmpl);
  const Ran boot = sh("debootstrap --variant=minbase bookworm " + root_ + " http://deb.debian.org/debian");
  ASSERT_EQ(boot.status, 0) << boot.out.substr(boot.out.size() > 3000 ? boot.out.size() - 3000 : 0);
  ASSERT_EQ(::mount("proc", (root_ + "/proc").c_str(), "proc", 0, nullptr), 0);
  std::ofstream(root_ + "/run/docker.sock");
  ASSERT_EQ(::mount("/var/run/docker.sock", (root_ + "/run/docker.sock").c_str(), nullptr, MS_BIND, nullptr), 0);
  // A space's volumes are fixed-size filesystems on loop devices (bounded disk): the installed
  // spacectl attaches them through /dev/loop-control, which debootstrap's /dev does not hold,
  ASSERT_EQ(::mount("/dev", (root_ + "/dev").c_str(), nullptr, MS_BIND | MS_REC, nullptr), 0);
  // And verify proves the limit (and the IO weighting it can see) through /sys/block.
  ASSERT_EQ(::mount("/sys", (root_ + "/sys").c_str(), nullptr, MS_BIND | MS_REC, nullptr), 0);
  ASSERT_EQ(sh("cp " + deb + " " + root_ + "/tmp/gatekeeper-spaces.deb").status, 0);

  // A clean root has no spacectl, no docker CLI: only what the package declares brings them.
  EXPECT_NE(in_root("command -v docker").status, 0);
  const Ran install = in_root("apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/gatekeeper-spaces.deb");
  ASSERT_EQ(install.status, 0) << install.out.substr(install.out.size() > 3000 ? install.out.size() - 3000 : 0);

  const Ran version = in_root("spacectl --version");
  ASSERT_EQ(version.status, 0) << version.out;
  EXPECT_NE(version.out.find("gatekeeper image sha256:"), std::string::npos) << version.out;
  EXPECT_NE(version.out.find("(/usr/share/gatekeeper-spaces/gatekeeper-image.id)"), std::string::npos) << version.out;
  EXPECT_EQ(in_root("gatekeeper --version").status, 0);
  EXPECT_EQ(in_root("test -f /usr/share/man/man1/spacectl.1 && test -f /usr/share/bash-completion/completions/spacectl").status, 0);

  // When no container uses the pinned images, drop them from the engine so that place check has to
  // load them from the package's archives (`docker image rm` without --force refuses otherwise).
  const std::string gk_pin = slurp(root_ + "/usr/share/gatekeeper-spaces/gatekeeper-image.id").substr(0, 71);
  const std::string space_pin = slurp(root_ + "/usr/share/gatekeeper-spaces/space-image.id").substr(0, 71);
  sh("docker image rm " + gk_pin + " " + space_pin);
  const Ran check = in_root("spacectl --state-dir /tmp/state place check");
  EXPECT_EQ(check.status, 0) << check.out;
  EXPECT_NE(check.out.find("This place can run isolated spaces."), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("the pinned gatekeeper image " + gk_pin + " is in the engine"), std::string::npos) << check.out;
  EXPECT_EQ(sh("docker image inspect --format '{{.Id}}' " + gk_pin + " " + space_pin).status, 0);

  const Ran create = in_root("spacectl --state-dir /tmp/state --json space create --name package-test");
  EXPECT_EQ(create.status, 0) << create.out;
  const std::size_t at = create.out.find("\"id\":\"");
  if (at != std::string::npos) {
    const std::string id = create.out.substr(at + 6, 12);
    EXPECT_EQ(in_root("spacectl --state-dir /tmp/state space verify " + id).status, 0);
    EXPECT_EQ(in_root("spacectl --state-dir /tmp/state space remove " + id).status, 0);
  }

  // Purge, snapshot, install again, use, purge: the second purge must leave the same tree.
  ASSERT_EQ(in_root("dpkg --purge gatekeeper-spaces").status, 0);
  const std::set<std::string> before = files();
  ASSERT_EQ(in_root("dpkg -i /tmp/gatekeeper-spaces.deb").status, 0);
  EXPECT_EQ(in_root("spacectl --version && spacectl help files").status, 0);
  const Ran listed = in_root("dpkg -L gatekeeper-spaces");
  EXPECT_NE(listed.out.find("/usr/libexec/gatekeeper-spaces/escape-suite"), std::string::npos);
  ASSERT_EQ(in_root("dpkg --purge gatekeeper-spaces").status, 0);
  const std::set<std::string> after = files();
  for (const std::string& f : after) EXPECT_TRUE(before.count(f)) << "left behind: " << f;
  for (const std::string& f : before) EXPECT_TRUE(after.count(f)) << "removed too much: " << f;
  EXPECT_FALSE(fs::exists(root_ + "/usr/share/gatekeeper-spaces"));
  EXPECT_FALSE(fs::exists(root_ + "/usr/bin/spacectl"));
}

}  // namespace
