// The host's disk full (label docker; root for the loop mount; skip without, fail under CI=true):
// the state directory and the temporary folder live on a small loop-mounted ext4 that is filled
// up, and create, code in and code out run into it. Each must fail with an error that says what
// was full (the path and "No space left on device"), leave no half-written record or temporary
// file, and leave the user's repository exactly as it was.
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/repo_state.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "tests/support/docker_pools.h"
#include "tests/support/environment.h"

namespace controller::code {
namespace {

using nlohmann::json;
using testing::git;
using testing::write_file;

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";

bool exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

ProcessOutcome run(std::vector<std::string> argv,
                   std::chrono::seconds timeout = std::chrono::seconds(300)) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.timeout = timeout;
  return run_process(r);
}

class DiskFullDockerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_git_environment(home_.path());
    owner_ = "diskfull" + std::to_string(getpid());
    mount_ = scratch_.path() + "/small";
  }
  void TearDown() override {
    if (gk_test::docker_engine_answers()) {
      if (!id_.empty()) (void)spacectl({"space", "remove", id_});
      controller::testing::expect_nothing_left(owner_);
    }
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
  }
  bool ready() {
    return gk_test::running_as_root() && gk_test::docker_engine_answers() &&
           exists(kBin + "/gatekeeper-image.id") && exists(kBin + "/space-image.id") &&
           exists(kBin + "/seccomp/space.json");
  }
  // A 16 MiB ext4 on a loop device at mount_, holding state/ and tmp/.
  void mount_small() {
    const std::string image = scratch_.path() + "/small.img";
    ASSERT_EQ(run({"truncate", "-s", "16M", image}).exit_code, 0);
    ASSERT_EQ(run({"mkfs.ext4", "-q", "-F", "-m", "0", image}).exit_code, 0);
    std::filesystem::create_directories(mount_);
    const ProcessOutcome m = run({"mount", "-o", "loop,nosuid,nodev", image, mount_});
    ASSERT_EQ(m.exit_code, 0) << m.err;
    mounted_ = true;
    std::filesystem::create_directories(mount_ + "/state");
    std::filesystem::create_directories(mount_ + "/tmp");
    std::filesystem::permissions(mount_ + "/state", std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
  }
  // Fills the filesystem with a file until `leave` bytes or fewer are free.
  void fill(std::size_t leave) {
    std::ofstream out(mount_ + "/filler", std::ios::binary | std::ios::app);
    const std::string block(4096, 'f');
    for (;;) {
      const std::filesystem::space_info info = std::filesystem::space(mount_);
      if (info.available <= leave) break;
      out.write(block.data(), static_cast<std::streamsize>(
                                  std::min<std::size_t>(block.size(), info.available - leave)));
      out.flush();
      if (!out) break;
    }
  }
  void unfill() { std::filesystem::remove(mount_ + "/filler"); }
  ProcessOutcome spacectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"env",           "TMPDIR=" + mount_ + "/tmp",
                                     SPACECTL,        "--json",
                                     "--owner",       owner_,
                                     "--state-dir",   mount_ + "/state",
                                     "--subnet-pool", gk_test::kSecondSubnetPool};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
  // No temporary record (".<id>.json.*.tmp"), no temporary folder, and every record readable.
  void expect_nothing_half_written(const std::string& when) {
    if (std::filesystem::exists(mount_ + "/state/spaces")) {
      for (const auto& e : std::filesystem::directory_iterator(mount_ + "/state/spaces")) {
        const std::string name = e.path().filename();
        EXPECT_FALSE(name.ends_with(".tmp")) << when << ": a temporary record was left: " << name;
        if (name.ends_with(".json")) {
          std::ifstream in(e.path());
          const std::string text((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
          EXPECT_TRUE(json::parse(text, nullptr, false).is_object())
              << when << ": a torn record: " << text;
        }
      }
    }
    for (const auto& e : std::filesystem::directory_iterator(mount_ + "/tmp")) {
      ADD_FAILURE() << when << ": a temporary folder was left: " << e.path();
    }
  }
  static void expect_says_full(const ProcessOutcome& o, const std::string& when) {
    EXPECT_NE(o.exit_code, 0) << when << ": " << o.out << o.err;
    const json d = json::parse(o.out, nullptr, false);
    ASSERT_TRUE(d.is_object() && d.contains("error")) << when << ": " << o.out << o.err;
    const std::string message = d["error"].value("message", "");
    EXPECT_NE(message.find("No space left on device"), std::string::npos)
        << when << ": " << message;
  }

  testing::TempTree home_, scratch_, repo_dir_;
  std::string owner_, mount_, id_;
  bool mounted_ = false;
};

TEST_F(DiskFullDockerTest,
       CreateCodeInAndCodeOutOnAFullDiskSayWhatWasFullAndLeaveNothingHalfWritten) {
  GK_REQUIRE(ready(), "needs root (a loop mount), a Docker engine and the pinned images");
  mount_small();
  const std::string repo = repo_dir_.path() + "/project";
  std::filesystem::create_directories(repo);
  git(repo, {"init", "-q", "-b", "main"});
  for (int i = 0; i < 64; ++i) {
    write_file(repo + "/file" + std::to_string(i) + ".txt",
               std::string(4096, static_cast<char>('a' + i % 26)));
  }
  git(repo, {"add", "."});
  git(repo, {"-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "one"});

  // create with no room for its first record.
  (void)spacectl({"space", "list"});  // the owner file and folders exist before the disk fills
  fill(0);
  ProcessOutcome o = spacectl({"space", "create", "--name", "full", "--memory", "256m"});
  expect_says_full(o, "create");
  expect_nothing_half_written("create");
  unfill();
  EXPECT_EQ(json::parse(spacectl({"space", "list"}).out)["spaces"], json::array())
      << "a full disk left a space";

  // code in whose index copy finds the temporary folder full; the repository untouched.
  o = spacectl({"space", "create", "--name", "full", "--memory", "256m"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  id_ = json::parse(o.out)["id"];
  fill(0);
  RepoState before = capture_state({repo});
  o = spacectl({"code", "in", id_, "--repo", repo});
  expect_says_full(o, "code in");
  expect_nothing_half_written("code in");
  for (const std::string& f : forbidden_changes(before, capture_state({repo}), Allowed{})) {
    ADD_FAILURE() << "code in: " << f;
  }
  unfill();

  // code out whose quarantine (in the state directory) fills while the pack arrives.
  o = spacectl({"code", "in", id_, "--repo", repo});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string path = json::parse(o.out)["space_path"];
  o = spacectl({"space", "exec", id_, "--", "sh", "-c",
                "cd \"$1\" && head -c 4194304 /dev/urandom > big.bin && git add big.bin && git "
                "commit -qm big",
                "sh", path});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  fill(256 * 1024);
  before = capture_state({repo});
  o = spacectl({"code", "out", id_});
  expect_says_full(o, "code out");
  expect_nothing_half_written("code out");
  for (const std::string& f : forbidden_changes(before, capture_state({repo}), Allowed{})) {
    ADD_FAILURE() << "code out: " << f;
  }
  unfill();
}

}  // namespace
}  // namespace controller::code
