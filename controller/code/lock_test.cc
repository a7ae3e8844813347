// One action at a time per space: `code history`, `code in` and `code out` take the space's lock
// (records.h SpaceLock), and a second one while another holds it is turned away at once with
// space_busy (exit 7), never left waiting and never run beside it (two history runs would both
// send the history and race on the shallow mark; history beside code out would race on the
// space's refs).
// The real spacectl runs against the fake docker; the first action is held inside its first
// `docker exec` until the test lets it go, so "at once" means: answered while the first still held
// the lock, with no clock involved.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/snapshot.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/testing/fake_docker_fixture.h"

namespace controller::code {
namespace {

using nlohmann::json;

constexpr const char* kId = "0123456789ab";

std::string error_code(const ProcessOutcome& o) {
  const json doc = json::parse(o.out, nullptr, false);
  return doc.is_object() && doc.contains("error") && doc["error"].is_object()
             ? doc["error"].value("code", "")
             : "";
}

class CodeLockTest : public FakeDockerTest {
 protected:
  void SetUp() override {
    FakeDockerTest::SetUp();
    testing::isolate_git_environment(home_.path());
    repo_ = dir_ + "/repo";
    testing::make_bait(repo_);
    const std::string state = dir_ + "/state";
    ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((state + "/spaces").c_str(), 0700), 0);
    // The start ref code out requires, and the record code in would have written.
    Result<Snapshot> snap = take_snapshot(repo_, kId, Mode::kUncommitted);
    ASSERT_TRUE(snap) << snap.error().message;
    const json record = {{"version", 1},
                         {"mode", "allowlist"},
                         {"domains", json::array()},
                         {"grants", json::array()},
                         {"code",
                          {{"repository", repo_},
                           {"space_path", std::string("/spaces/") + kId + "/repo"},
                           {"project_path", std::string("/spaces/") + kId + "/repo"},
                           {"base", snap->base},
                           {"history", "pending"}}}};
    const std::string path = state + "/spaces/" + kId + ".json";
    std::ofstream(path) << record.dump() << "\n";
    chmod(path.c_str(), 0600);
    release_ = dir_ + "/release";
  }

  // True once the fake docker logged an exec: the first action is inside it, holding the lock.
  bool wait_for_exec() {
    for (int i = 0; i < 6000; ++i) {
      for (const Call& c : calls()) {
        if (!c.argv.empty() && c.argv[0] == "exec") return true;
      }
      usleep(10000);
    }
    return false;
  }

  // Runs `first` held inside its first exec; while it is held, runs each of `others`, then lets
  // the first go. Returns the others' outcomes; `first_out` gets the first's.
  std::vector<ProcessOutcome> while_held(const std::vector<std::string>& first,
                                         const std::vector<std::vector<std::string>>& others,
                                         ProcessOutcome& first_out) {
    std::atomic<bool> first_done{false};
    std::thread holder([&] {
      first_out = spacectl(first, {}, {"env", "FAKE_DOCKER_EXEC_WAIT_FOR=" + release_});
      first_done = true;
    });
    std::vector<ProcessOutcome> out;
    const bool held = wait_for_exec();
    EXPECT_TRUE(held) << "the first action never reached its exec";
    if (held) {
      for (const auto& args : others) {
        out.push_back(spacectl(args));
        EXPECT_FALSE(first_done) << "the first action ended before the others were answered";
      }
    }
    for (const Call& c : calls()) execs_while_held_ += !c.argv.empty() && c.argv[0] == "exec";
    std::ofstream(release_) << "go\n";
    holder.join();
    return out;
  }

  testing::TempTree home_;
  std::string repo_, release_;
  int execs_while_held_ = 0;
};

TEST_F(CodeLockTest, ASecondHistoryOrACodeOutOrInWhileHistoryRunsIsSpaceBusyAtOnce) {
  ProcessOutcome first;
  const std::vector<ProcessOutcome> others = while_held(
      {"code", "history", kId},
      {{"code", "history", kId}, {"code", "out", kId}, {"code", "in", kId, "--repo", repo_}},
      first);
  ASSERT_EQ(others.size(), 3u);
  for (const ProcessOutcome& o : others) {
    EXPECT_EQ(error_code(o), "space_busy") << o.out << o.err;
    EXPECT_EQ(o.exit_code, 7) << o.out << o.err;
  }
  EXPECT_NE(others[0].out.find("code history " + std::string(kId)), std::string::npos)
      << others[0].out;
  // The first held the lock all along (the fake's answer is no git's, so it fails on its own
  // terms).
  EXPECT_NE(error_code(first), "space_busy") << first.out << first.err;
  // Nothing but the first reached the space: one exec (the first's, held) while it was held.
  EXPECT_EQ(execs_while_held_, 1);
  // The lock went with the first process: the next history runs (and fails on the fake's answer).
  EXPECT_NE(error_code(spacectl({"code", "history", kId})), "space_busy");
}

TEST_F(CodeLockTest, HistoryWhileCodeOutRunsIsSpaceBusyAtOnce) {
  ProcessOutcome first;
  const std::vector<ProcessOutcome> others =
      while_held({"code", "out", kId}, {{"code", "history", kId}}, first);
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(error_code(others[0]), "space_busy") << others[0].out << others[0].err;
  EXPECT_EQ(others[0].exit_code, 7);
  EXPECT_EQ(execs_while_held_, 1);
  EXPECT_NE(error_code(first), "space_busy") << first.out << first.err;
}

}  // namespace
}  // namespace controller::code
