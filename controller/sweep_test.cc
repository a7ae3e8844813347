// Coordination and sweep against the in-memory place: the per-space lock (busy at once, released
// by a crash, visible to list), `preparing` and `failed` creations in the list, and what sweep
// removes and what it must leave.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/manager.h"
#include "controller/records.h"
#include "controller/render.h"
#include "controller/sweep.h"
#include "controller/temp_dir.h"
#include "controller/testing/memory_place.h"

namespace controller {
namespace {

using nlohmann::json;

// An operation's answer as the document the CLI and serve print for it.
template <typename T>
Result<json> document(const Result<T>& r) {
  if (!r) return r.error();
  return to_json(*r);
}

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-sweep-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    state_ = dir_ + "/state";
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string make_space(const std::string& name = "old") {
    CreateRequest r;
    r.name = name;
    Result<SpaceSummary> s = place_.create(r);
    EXPECT_TRUE(s);
    return s ? s->id : std::string();
  }
  bool at_place(const std::string& id) {
    Result<std::vector<SpaceSummary>> all = place_.list();
    for (const SpaceSummary& s : *all) {
      if (s.id == id) return true;
    }
    return false;
  }
  const json* entry(const json& list, const std::string& id) {
    for (const json& e : list["spaces"]) {
      if (e["id"] == id) return &e;
    }
    return nullptr;
  }

  std::string dir_, state_;
  testing::MemoryPlace place_;
  Manager manager_{place_, ""};
};

// Runs `body` in a child that then waits to be killed with SIGKILL (a crash: nothing unwinds).
pid_t in_child_then_kill(const std::function<void()>& body) {
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    body();
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c = 0;
  EXPECT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

TEST_F(SweepTest, ASecondLockOnTheSameSpaceIsBusyAtOnceAndNamesTheHolder) {
  Result<SpaceLock> first = SpaceLock::acquire(state_, "0123456789ab", "network set");
  ASSERT_TRUE(first);
  EXPECT_TRUE(SpaceLock::is_held(state_, "0123456789ab"));
  Result<SpaceLock> second = SpaceLock::acquire(state_, "0123456789ab", "space stop");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, Code::kSpaceBusy);
  EXPECT_NE(second.error().message.find(std::to_string(getpid()) + " network set"), std::string::npos) << second.error().message;
  EXPECT_NE(second.error().message.find("space stop 0123456789ab"), std::string::npos) << second.error().message;
  // Another space is not held by it.
  EXPECT_TRUE(SpaceLock::acquire(state_, "0123456789ac", "space stop"));
}

TEST_F(SweepTest, ACrashReleasesTheLock) {
  in_child_then_kill([&] {
    static std::optional<SpaceLock> held;
    Result<SpaceLock> l = SpaceLock::acquire(state_, "0123456789ab", "space create");
    if (l) held.emplace(std::move(*l));
  });
  EXPECT_FALSE(SpaceLock::is_held(state_, "0123456789ab"));
  EXPECT_TRUE(SpaceLock::acquire(state_, "0123456789ab", "space start"));
}

TEST_F(SweepTest, EveryActionOnABusySpaceIsRefusedWithSpaceBusy) {
  manager_.state = state_;
  const std::string id = make_space("fresh");
  Result<SpaceLock> held = SpaceLock::acquire(state_, id, "escape-test");
  ASSERT_TRUE(held);
  SpaceVerified found;
  std::vector<Result<json>> answers;
  answers.push_back(document(manager_.stop(id)));
  answers.push_back(document(manager_.start(id)));
  answers.push_back(document(manager_.remove(id)));
  answers.push_back(document(manager_.verify(id, found)));
  answers.push_back(document(manager_.network_set(id, "open", {})));
  answers.push_back(document(manager_.grant_add(id, "g", "https://api.example.com/v1", "", "")));
  answers.push_back(document(manager_.window_key(id)));
  answers.push_back(document(manager_.gatekeeper_journal(id)));
  answers.push_back(document(manager_.gatekeeper_policy(id)));
  for (std::size_t i = 0; i < answers.size(); ++i) {
    ASSERT_FALSE(answers[i]) << "action " << i;
    EXPECT_EQ(answers[i].error().code, Code::kSpaceBusy) << "action " << i << ": " << answers[i].error().message;
  }
  EXPECT_TRUE(at_place(id));
  Result<json> list = document(manager_.list());
  ASSERT_TRUE(list);
  ASSERT_NE(entry(*list, id), nullptr);
  EXPECT_EQ((*entry(*list, id))["busy"], true);
}

TEST_F(SweepTest, ListShowsAPreparingCreationAndAFailedOneUntilItIsRemoved) {
  manager_.state = state_;
  manager_.keep_failed_creations = true;
  CreateRequest preparing;
  Result<SpaceLock> lock = manager_.begin_create(preparing);
  ASSERT_TRUE(lock);
  CreateRequest bad;
  bad.name = "";  // the memory place refuses it
  Result<SpaceCreated> failed = manager_.create(bad);
  ASSERT_FALSE(failed);
  Result<json> list = document(manager_.list());
  ASSERT_TRUE(list);
  ASSERT_NE(entry(*list, preparing.id), nullptr) << list->dump();
  EXPECT_EQ((*entry(*list, preparing.id))["state"], "preparing");
  const json* f = nullptr;
  for (const json& e : (*list)["spaces"]) {
    if (e["state"] == "failed") f = &e;
  }
  ASSERT_NE(f, nullptr) << list->dump();
  EXPECT_EQ((*f)["failure"]["code"], "invalid_argument");
  const std::string failed_id = (*f)["id"];
  ASSERT_TRUE(manager_.remove(failed_id)) << "dismissing a failed creation";
  list = document(manager_.list());
  EXPECT_EQ(entry(*list, failed_id), nullptr);
}

TEST_F(SweepTest, TheCliForgetsAFailedCreationItReportedItself) {
  manager_.state = state_;
  CreateRequest bad;
  bad.name = "";
  ASSERT_FALSE(manager_.create(bad));
  Result<std::vector<std::string>> ids = record_ids(state_);
  ASSERT_TRUE(ids);
  EXPECT_TRUE(ids->empty());
}

TEST_F(SweepTest, AnInterruptedCreationIsRemovedWithItsRecordAndRefs) {
  manager_.state = state_;
  std::string id;
  // The creating process dies after the place made the space, before it finished.
  in_child_then_kill([&] {
    CreateRequest r;
    r.name = "old";
    static std::optional<SpaceLock> held;
    Result<SpaceLock> l = manager_.begin_create(r, "/home/user/project");
    if (l) held.emplace(std::move(*l));
  });
  Result<std::vector<std::string>> ids = record_ids(state_);
  ASSERT_TRUE(ids && ids->size() == 1);
  id = (*ids)[0];
  CreateRequest r;
  r.id = id;
  r.name = "old";
  ASSERT_TRUE(place_.create(r));
  const std::string other = make_space("old");  // a real space with its record
  ASSERT_TRUE(write_record(state_, other, SpaceRecord{}));
  std::vector<std::pair<std::string, std::string>> refs;
  SweepOptions o;
  o.grace = std::chrono::seconds(0);
  o.temp_base = dir_;
  o.remove_refs = [&](const std::string& repo, const std::string& which) { refs.emplace_back(repo, which); };
  Result<json> swept = document(sweep(manager_, o));
  ASSERT_TRUE(swept);
  EXPECT_FALSE(at_place(id)) << swept->dump();
  EXPECT_TRUE(at_place(other)) << swept->dump();
  Result<bool> exists = record_exists(state_, id);
  EXPECT_FALSE(*exists);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0], std::make_pair(std::string("/home/user/project"), id));
  EXPECT_EQ((*swept)["removed"][0]["reason"], "creation_interrupted");
}

TEST_F(SweepTest, ObjectsWithoutARecordGoOnlyAfterTheGracePeriodAndNeverWhileLocked) {
  manager_.state = state_;
  const std::string young = make_space("fresh");
  const std::string old = make_space("old");
  const std::string locked = make_space("old");
  Result<SpaceLock> held = SpaceLock::acquire(state_, locked, "escape-test");
  ASSERT_TRUE(held);
  SweepOptions o;
  o.grace = std::chrono::seconds(600);
  o.temp_base = dir_;
  Result<json> swept = document(sweep(manager_, o));
  ASSERT_TRUE(swept);
  EXPECT_TRUE(at_place(young)) << swept->dump();
  EXPECT_FALSE(at_place(old)) << swept->dump();
  EXPECT_TRUE(at_place(locked)) << swept->dump();
  EXPECT_EQ((*swept)["removed"].size(), 1u);
}

TEST_F(SweepTest, AnUnreadableRecordIsNeverTakenForAMissingOne) {
  manager_.state = state_;
  const std::string id = make_space("old");
  ASSERT_TRUE(write_record(state_, id, SpaceRecord{}));
  std::ofstream(state_ + "/spaces/" + id + ".json", std::ios::trunc) << "{not json";
  SweepOptions o;
  o.grace = std::chrono::seconds(0);
  o.temp_base = dir_;
  ASSERT_TRUE(sweep(manager_, o));
  EXPECT_TRUE(at_place(id));
}

TEST_F(SweepTest, TemporaryFoldersGoOnlyWhenTheirOwnerIsDead) {
  setenv("TMPDIR", dir_.c_str(), 1);
  std::string dead_path;
  int path_pipe[2];
  ASSERT_EQ(pipe(path_pipe), 0);
  in_child_then_kill([&] {
    static std::optional<OwnedTempDir> d;
    Result<OwnedTempDir> made = OwnedTempDir::make("code-in");
    if (made) {
      d.emplace(std::move(*made));
      (void)!write(path_pipe[1], d->path().data(), d->path().size());
    }
  });
  close(path_pipe[1]);
  char buffer[512] = {};
  ASSERT_GT(read(path_pipe[0], buffer, sizeof buffer - 1), 0);
  close(path_pipe[0]);
  dead_path = buffer;
  ASSERT_TRUE(std::filesystem::exists(dead_path + "/.spacectl-owner"));
  Result<OwnedTempDir> alive = OwnedTempDir::make("code-in");
  ASSERT_TRUE(alive);
  // A folder of the same shape without an owner lock is not ours to judge.
  const std::string foreign = dir_ + "/spacectl-code-in-foreign";
  ASSERT_EQ(mkdir(foreign.c_str(), 0700), 0);
  const std::vector<std::string> removed = sweep_temp_dirs(dir_);
  unsetenv("TMPDIR");
  EXPECT_EQ(removed, std::vector<std::string>{dead_path});
  EXPECT_FALSE(std::filesystem::exists(dead_path));
  EXPECT_TRUE(std::filesystem::exists(alive->path()));
  EXPECT_TRUE(std::filesystem::exists(foreign));
}

TEST_F(SweepTest, FreesTheSubnetsOfARecordNothingAtThePlaceCarries) {
  manager_.state = state_;
  const std::string kept = make_space("kept");
  SpaceRecord live;
  live.subnets = {"10.213.0.0/29", "10.213.0.8/29"};
  ASSERT_TRUE(write_record(state_, kept, live));
  SpaceRecord gone;
  gone.subnets = {"10.213.0.16/29", "10.213.0.24/29"};
  ASSERT_TRUE(write_record(state_, "00000000dead", gone));
  // A creation under way (its lock held) keeps its subnets whatever the place shows.
  SpaceRecord creating;
  creating.creation = {"preparing", "creating_networks", now_utc_iso(), "", ""};
  creating.subnets = {"10.213.0.32/29", "10.213.0.40/29"};
  ASSERT_TRUE(write_record(state_, "00000000beef", creating));
  Result<SpaceLock> held = SpaceLock::acquire(state_, "00000000beef", "space create");
  ASSERT_TRUE(held);

  SweepOptions o;
  o.grace = std::chrono::seconds(0);
  o.temp_base = dir_;
  Result<json> swept = document(sweep(manager_, o));
  ASSERT_TRUE(swept) << swept.error().message;
  ASSERT_EQ((*swept)["subnets_freed"].size(), 1u) << swept->dump();
  EXPECT_EQ((*swept)["subnets_freed"][0]["id"], "00000000dead");
  EXPECT_EQ((*swept)["subnets_freed"][0]["subnets"], "10.213.0.16/29 10.213.0.24/29");
  EXPECT_TRUE(read_record(state_, "00000000dead")->subnets.inner.empty());
  EXPECT_TRUE(*record_exists(state_, "00000000dead"));  // the record itself stays
  EXPECT_EQ(read_record(state_, kept)->subnets.inner, "10.213.0.0/29");
  EXPECT_EQ(read_record(state_, "00000000beef")->subnets.inner, "10.213.0.32/29");
}

TEST(SweepTime, ReadsTheLabelsAndDockersTimesAndNothingElse) {
  EXPECT_EQ(parse_utc_time("2001-01-01T00:00:00Z"), 978307200);
  EXPECT_EQ(parse_utc_time("2001-01-01 00:00:00 +0000 UTC"), 978307200);
  EXPECT_EQ(parse_utc_time("2001-01-01 00:00:00.123456789 +0000 UTC"), 978307200);
  EXPECT_EQ(parse_utc_time("2001-01-01 00:00:00 +0100 CET"), 0);
  EXPECT_EQ(parse_utc_time("2001-01-01"), 0);
  EXPECT_EQ(parse_utc_time("20x1-01-01T00:00:00Z"), 0);
}

}  // namespace
}  // namespace controller
