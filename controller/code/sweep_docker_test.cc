// Sweep on real Docker (label docker; skip without an engine, fail under CI=true): spacectl is
// killed with SIGKILL at each step of `space create`, of its code in and of code out, then
// `spacectl sweep` runs; nothing of the owner may be left (containers, networks, volumes, records,
// temporary folders, refs in the user's repository), and another owner's objects must all still be
// there.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/repo_state.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/code/testing/live_code.h"
#include "controller/process.h"
#include "policy/number.h"
#include "tests/support/environment.h"

extern char** environ;

namespace controller::code {
namespace {

using nlohmann::json;
using testing::git;
using testing::write_file;

using controller::testing::kLiveBin;
using controller::testing::labelled;
using controller::testing::labelled_kind;

ProcessOutcome docker(std::vector<std::string> args) {
  ProcessRequest r;
  r.argv = {"docker"};
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.timeout = std::chrono::minutes(2);
  return run_process(r);
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The non-empty lines of a listing.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t s = 0, e; s < text.size(); s = e + 1) {
    e = text.find('\n', s);
    if (e == std::string::npos) e = text.size();
    if (e > s) out.push_back(text.substr(s, e - s));
  }
  return out;
}

// Waits (at most 5 s) until pid shows as stopped in /proc/<pid>/stat (a SIGSTOP is delivered
// asynchronously).
void wait_stopped(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const std::size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() &&
        (stat[close + 2] == 'T' || stat[close + 2] == 't')) {
      return;
    }
    usleep(1000);
  }
  ADD_FAILURE() << "spacectl " << pid << " did not stop within 5 s of SIGSTOP";
}

// Every descendant of pid (from /proc): the docker CLI processes a killed spacectl leaves running.
std::set<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    // "pid (comm) S ppid ...": one state letter after the comm, then the parent's pid.
    const std::string_view after = std::string_view(stat).substr(close + 1);
    const std::size_t ppid_end = after.find(' ', 3);
    const std::optional<pid_t> ppid =
        after.size() > 3 && after[0] == ' ' && after[2] == ' '
            ? policy::parse_number<pid_t>(
                  after.substr(3, ppid_end == std::string_view::npos ? after.npos : ppid_end - 3))
            : std::nullopt;
    const std::optional<pid_t> pid = policy::parse_number<pid_t>(name);
    if (!ppid || !pid) {
      ADD_FAILURE() << "/proc/" << name << "/stat: '" << stat.substr(0, 64)
                    << "' does not read as pid (comm) state ppid";
      continue;
    }
    children[*ppid].push_back(*pid);
  }
  std::set<pid_t> out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      if (out.insert(c).second) todo.push_back(c);
    }
  }
  return out;
}

// The shared code fixture (controller/code/testing/live_code.h): owner, state, HOME, the leftover
// check; five minutes for each spacectl run. TearDown removes what the other owner holds, and
// whatever a failed step left of this one.
class SweepDockerTest : public testing::LiveCodeTest {
 protected:
  SweepDockerTest() : LiveCodeTest("sweep", std::chrono::minutes(5)) {}
  void SetUp() override {
    LiveCodeTest::SetUp();
    other_owner_ = "sweepother" + random_hex(6);
    tmp_ = dir_.path() + "/tmp";
    std::filesystem::create_directories(tmp_);
  }
  void TearDown() override {
    if (!gk_test::docker_engine_answers()) return;
    for (const std::string& o : {owner_, other_owner_}) {
      std::vector<std::string> rm = {"rm", "-f"};
      for (const std::string& c : lines(labelled_kind(o, {"ps", "-a"}))) rm.push_back(c);
      if (rm.size() > 2) (void)docker(rm);
      for (const char* kind : {"volume", "network"}) {
        for (const std::string& n : lines(labelled_kind(o, {kind, "ls"}))) {
          (void)docker({kind, "rm", "--", n});
        }
      }
    }
  }
  // Starts spacectl with stderr on a pipe; reads its progress lines until one contains `marker`,
  // then kills it with SIGKILL and waits for everything it had started to end by itself.
  // Returns false when spacectl ended before the marker came.
  bool kill_at(const std::vector<std::string>& args, const std::string& marker, std::string& seen) {
    std::vector<std::string> argv = live_.base();
    argv.insert(argv.end(), args.begin(), args.end());
    std::set<pid_t> started;
    const testing::KilledRun killed = testing::kill_at_marker(
        argv,
        {"TMPDIR=" + tmp_, "HOME=" + home_.path(), "PATH=" + std::string(std::getenv("PATH"))},
        marker, [&](pid_t pid) {
          // Frozen first: a spacectl still running between the look at its children and the
          // kill could start one more engine call (the step line comes before the step's calls)
          // that the wait below would not know of, and whose object would appear after sweep.
          ::kill(pid, SIGSTOP);
          wait_stopped(pid);
          started = descendants(pid);
        });
    seen = killed.err;
    // A docker CLI the crash left behind finishes (and may create its object) before sweep runs.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (pid_t p : started) {
      while (::kill(p, 0) == 0 && std::chrono::steady_clock::now() < deadline) usleep(50000);
    }
    return killed.marker_seen;
  }

  ProcessOutcome run(const std::vector<std::string>& args) {
    ProcessRequest r;
    r.argv = {"env", "TMPDIR=" + tmp_};  // the same temporary folder as the killed spacectl's
    const std::vector<std::string> base = live_.base();
    r.argv.insert(r.argv.end(), base.begin(), base.end());
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    r.timeout = std::chrono::minutes(5);
    return run_process(r);
  }

  // Another installation's objects on the same engine, with a space id sweep could mistake.
  void make_other_owners_objects() {
    const std::vector<std::string> labels = {
        "--label", "spacectl.space=true",
        "--label", "spacectl.space.owner=" + other_owner_,
        "--label", "spacectl.space.id=0123456789ab",
        "--label", "spacectl.space.created=2001-01-01T00:00:00Z"};
    std::vector<std::string> net = {"network", "create", "--internal"};
    net.insert(net.end(), labels.begin(), labels.end());
    net.push_back("gk-sweep-other-" + std::to_string(getpid()));
    ASSERT_EQ(docker(net).exit_code, 0);
    std::vector<std::string> vol = {"volume", "create"};
    vol.insert(vol.end(), labels.begin(), labels.end());
    vol.push_back("gk-sweep-other-" + std::to_string(getpid()));
    ASSERT_EQ(docker(vol).exit_code, 0);
    std::vector<std::string> ctr = {"create", "--network", "none"};
    ctr.insert(ctr.end(), labels.begin(), labels.end());
    ctr.insert(ctr.end(), {"--name", "gk-sweep-other-" + std::to_string(getpid()),
                           first_line(kLiveBin + "/space-image.id"), "true"});
    ASSERT_EQ(docker(ctr).exit_code, 0);
    other_before_ = labelled(other_owner_);
    ASSERT_FALSE(other_before_.empty());
  }

  // After sweep: nothing of this owner anywhere, the other owner's objects untouched.
  void expect_nothing_left(const std::string& where) {
    EXPECT_EQ(labelled(owner_), "") << "left at the place after a kill at " << where;
    EXPECT_EQ(labelled(other_owner_), other_before_)
        << "another owner's objects changed after a kill at " << where;
    std::size_t records = 0;
    if (std::filesystem::exists(live_.state() + "/spaces")) {
      for (const auto& e : std::filesystem::directory_iterator(live_.state() + "/spaces")) {
        records += e.path().extension() == ".json";
      }
    }
    EXPECT_EQ(records, 0u) << "records left after a kill at " << where;
    std::size_t temps = 0;
    std::string names;
    for (const auto& e : std::filesystem::directory_iterator(tmp_)) {
      if (e.path().filename().string().rfind("spacectl-", 0) != 0) continue;
      ++temps;
      names += " " + e.path().filename().string();
      for (const auto& inner : std::filesystem::directory_iterator(e.path())) {
        names += " [" + inner.path().filename().string() + "]";
      }
    }
    EXPECT_EQ(temps, 0u) << "temporary folders left after a kill at " << where << ":" << names;
  }

  const std::string& owner_ = live_.owner();
  std::string other_owner_, tmp_, other_before_;
};

TEST_F(SweepDockerTest, AKillAtEachStepOfCreateLeavesNothingAfterSweep) {
  GK_REQUIRE(ready(),
             "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  make_other_owners_objects();
  for (const std::string step :
       {"resolving_images", "creating_networks", "creating_volumes", "creating_gatekeeper",
        "creating_space", "verifying", "starting"}) {
    SCOPED_TRACE(step);
    std::string seen;
    ASSERT_TRUE(kill_at({"space", "create", "--name", "killed", "--memory", "256m"},
                        ": " + step + "\n", seen))
        << seen;
    // Before the sweep the interrupted creation is listed as failed, never as a usable space.
    const ProcessOutcome list = run({"space", "list"});
    const json doc = json::parse(list.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << list.out << list.err;
    for (const json& s : doc["spaces"]) EXPECT_EQ(s["state"], "failed") << s.dump();
    const ProcessOutcome swept = run({"sweep", "--grace", "0"});
    ASSERT_EQ(swept.exit_code, 0) << swept.out << swept.err;
    expect_nothing_left(step);
  }
}

TEST_F(SweepDockerTest, AKillAtEachStepOfCodeInLeavesNothingAfterSweep) {
  GK_REQUIRE(ready(),
             "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  make_other_owners_objects();
  const std::string repo = dir_.path() + "/project";
  std::filesystem::create_directories(repo);
  git(repo, {"init", "-q", "-b", "main"});
  write_file(repo + "/README.md", "hello\n");
  git(repo, {"add", "README.md"});
  git(repo, {"-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "one"});
  write_file(repo + "/untracked.txt", "work in progress\n");
  // The base and the snapshot travel in one session ("sent the base … and the snapshot …").
  for (const std::string marker :
       {"bringing the code in", "space git:", "space repository:", "sent the base"}) {
    SCOPED_TRACE(marker);
    std::string seen;
    ASSERT_TRUE(kill_at({"space", "create", "--name", "killed", "--memory", "256m", "--repo", repo},
                        marker, seen))
        << seen;
    const ProcessOutcome swept = run({"sweep", "--grace", "0"});
    ASSERT_EQ(swept.exit_code, 0) << swept.out << swept.err;
    expect_nothing_left(marker);
    EXPECT_EQ(git(repo, {"for-each-ref", "refs/openchamber/"}), "")
        << "refs left in the user's repository";
  }
  // A code in on a space that exists: killed mid-transfer, the space stays (it has a record and
  // is not a creation), its lock is free again and no temporary folder is left.
  const ProcessOutcome created = run({"space", "create", "--name", "kept", "--memory", "256m"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const std::string id = json::parse(created.out)["id"];
  std::string seen;
  ASSERT_TRUE(kill_at({"code", "in", id, "--repo", repo}, "sent the base", seen)) << seen;
  ASSERT_EQ(run({"sweep", "--grace", "0"}).exit_code, 0);
  const ProcessOutcome shown = run({"space", "show", id});
  EXPECT_EQ(shown.exit_code, 0) << shown.out << shown.err;
  std::size_t temps = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp_)) {
    temps += e.path().filename().string().rfind("spacectl-", 0) == 0;
  }
  EXPECT_EQ(temps, 0u);
  const ProcessOutcome removed = run({"space", "remove", id});
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  // The start ref the killed code in had made went with the space.
  EXPECT_EQ(git(repo, {"for-each-ref", "refs/openchamber/"}), "")
      << "refs left in the user's repository";
  EXPECT_EQ(labelled(owner_), "");
  EXPECT_EQ(labelled(other_owner_), other_before_);
}

// spacectl killed with SIGKILL at each step of code out: the user's repository passes the state
// comparison (at most the objects and result ref of a promote that finished), the record is the
// old or the new one (never torn, always readable), and the next code out finishes.
TEST_F(SweepDockerTest, AKillAtEachStepOfCodeOutLeavesTheRepositoryWholeAndTheNextCodeOutFinishes) {
  GK_REQUIRE(ready(),
             "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  const std::string repo = dir_.path() + "/project";
  std::filesystem::create_directories(repo);
  git(repo, {"init", "-q", "-b", "main"});
  write_file(repo + "/README.md", "hello\n");
  git(repo, {"add", "README.md"});
  git(repo, {"-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "one"});
  const ProcessOutcome created =
      run({"space", "create", "--name", "out", "--memory", "512m", "--repo", repo});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const json made = json::parse(created.out);
  const std::string id = made["id"];
  const std::string path = made["code"]["space_path"];
  const ProcessOutcome worked = run(
      {"space", "exec", id, "--", "sh", "-c",
       "cd \"$1\" && printf 'agent\\n' > agent.txt && git add agent.txt && git commit -qm agent",
       "sh", path});
  ASSERT_EQ(worked.exit_code, 0) << worked.out << worked.err;
  const std::string record_path = live_.state() + "/spaces/" + id + ".json";
  Allowed allowed = testing::allowed_for(repo + "/.git", id);
  allowed.space_refs = {"start", "result"};
  allowed.new_packs = true;
  allowed.ref_may_move = true;
  for (const std::string marker : {"the space's result", "fetched ", "checked ", "promoted to "}) {
    SCOPED_TRACE(marker);
    const RepoState before = capture_state({repo});
    std::ifstream old_in(record_path);
    const std::string old_record((std::istreambuf_iterator<char>(old_in)),
                                 std::istreambuf_iterator<char>());
    std::string seen;
    ASSERT_TRUE(kill_at({"code", "out", id}, marker, seen)) << seen;
    for (const std::string& f : forbidden_changes(before, capture_state({repo}), allowed)) {
      ADD_FAILURE() << f;
    }
    // The record: the old bytes or a whole new record, and readable.
    std::ifstream now_in(record_path);
    const std::string now_record((std::istreambuf_iterator<char>(now_in)),
                                 std::istreambuf_iterator<char>());
    if (now_record != old_record) {
      EXPECT_TRUE(json::parse(now_record, nullptr, false).is_object()) << now_record;
    }
    const ProcessOutcome shown = run({"space", "show", id});
    EXPECT_EQ(shown.exit_code, 0) << shown.out << shown.err;
    // The next code out finishes (a dead quarantine is removed on the way).
    const ProcessOutcome again = run({"code", "out", id});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(git(repo, {"cat-file", "-p", "refs/openchamber/spaces/" + id + "/result:agent.txt"})
                  .find("agent"),
              std::string::npos);
  }
  ASSERT_EQ(run({"sweep", "--grace", "0"}).exit_code, 0);
  std::size_t temps = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp_)) {
    temps += e.path().filename().string().rfind("spacectl-", 0) == 0;
  }
  EXPECT_EQ(temps, 0u) << "temporary folders left after sweep";
  const ProcessOutcome removed = run({"space", "remove", id});
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
}

}  // namespace
}  // namespace controller::code
