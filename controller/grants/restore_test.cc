// `space start` saying env and helper grants again, and serve's keeper renewing a helper's token,
// against the in-memory place with a gatekeeper that records each control request (its body is
// what the gatekeeper would hold). The helper is testing/token_helper.cc, which counts its runs.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"  // random_hex
#include "controller/manager.h"
#include "controller/render.h"
#include "controller/serve/keeper.h"
#include "controller/spec.h"
#include "controller/testing/memory_place.h"

namespace controller::grants {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// An operation's answer as the document the CLI and serve print for it.
template <typename T>
Result<json> document(const Result<T>& r) {
  if (!r) return r.error();
  return to_json(*r);
}

// What the gatekeeper was told, shared by every place a test makes.
struct Gatekeeper {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> requests;  // "POST /grants", body
  testing::MemoryPlace place;
  std::vector<std::string> bodies(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::string> out;
    for (const auto& [w, b] : requests) {
      if (w == what) out.push_back(b);
    }
    return out;
  }
};

// The memory place with a gatekeeper whose control channel answers {"ok":true} and records.
class RecordingPlace final : public Place {
 public:
  explicit RecordingPlace(std::shared_ptr<Gatekeeper> g) : g_(std::move(g)) {}
  Result<CheckReport> check() override { return g_->place.check(); }
  Result<SpaceSummary> create(const CreateRequest& r) override { return g_->place.create(r); }
  Result<std::vector<SpaceSummary>> list() override { return g_->place.list(); }
  Result<ExecOutput> exec(const std::string& id, ExecTarget target,
                          const std::vector<std::string>& argv, const std::string& in,
                          std::chrono::milliseconds timeout) override {
    if (target == ExecTarget::kGatekeeper && argv.size() == 4 && argv[1] == "control" &&
        argv[3] != "/health") {
      std::lock_guard<std::mutex> lock(g_->mutex);
      g_->requests.emplace_back(argv[2] + " " + argv[3], in);
      return ExecOutput{0, "{\"ok\":true,\"grants\":[]}", ""};
    }
    return g_->place.exec(id, target, argv, in, timeout);
  }
  Result<std::vector<std::string>> exec_argv(const std::string& id) override {
    return g_->place.exec_argv(id);
  }
  Result<std::vector<std::string>> interactive_exec_argv(const std::string& id,
                                                         bool terminal) override {
    return g_->place.interactive_exec_argv(id, terminal);
  }
  Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) override {
    return g_->place.connect(id, port);
  }
  Result<void> stop(const std::string& id) override { return g_->place.stop(id); }
  Result<void> start(const std::string& id) override { return g_->place.start(id); }
  Result<void> remove(const std::string& id) override { return g_->place.remove(id); }
  Result<std::vector<Difference>> verify(const std::string& id) override {
    return g_->place.verify(id);
  }

 private:
  std::shared_ptr<Gatekeeper> g_;
};

class GrantRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-restore-XXXXXX";
    dir_ = mkdtemp(tmpl);
    gatekeeper_ = std::make_shared<Gatekeeper>();
    place_ = std::make_unique<RecordingPlace>(gatekeeper_);
    manager_ = std::make_unique<Manager>(Manager{*place_, dir_ + "/state"});
    CreateRequest r;
    Result<SpaceSummary> s = place_->create(r);
    ASSERT_TRUE(s);
    id_ = s->id;
  }
  void TearDown() override {
    unsetenv("SPACECTL_RESTORE_KEY");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  GrantRequest helper_grant(const std::string& id, const std::string& mode,
                            const std::string& lifetime) const {
    GrantRequest g;
    g.id = id;
    g.upstream = "https://api.example.com/v1";
    g.header = "authorization";
    g.source.kind = grants::SourceKind::kHelper;
    g.source.helper = {TOKEN_HELPER, mode, dir_ + "/count"};
    if (mode == "fail-after") g.source.helper.push_back("1");
    g.source.helper.push_back(lifetime);
    return g;
  }
  int helper_calls() const {
    std::ifstream in(dir_ + "/count");
    int n = 0;
    in >> n;
    return n;
  }
  std::string record_text() const {
    std::ifstream in(dir_ + "/state/spaces/" + id_ + ".json");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Runs serve's keeper on a loop of its own until `done` or the deadline.
  void run_keeper(const std::function<bool()>& done, std::chrono::seconds deadline) {
    uv_loop_t loop;
    ASSERT_EQ(uv_loop_init(&loop), 0);
    const std::string state = dir_ + "/state";
    serve::Keeper keeper(
        &loop, state,
        [this, state]() -> Result<serve::Env> {
          serve::Env env;
          env.place = std::make_unique<RecordingPlace>(gatekeeper_);
          env.manager = std::make_unique<Manager>(Manager{*env.place, state});
          return env;
        },
        600s);
    keeper.start();
    uv_timer_t watch;
    uv_timer_init(&loop, &watch);
    struct Watch {
      const std::function<bool()>* done;
      std::chrono::steady_clock::time_point until;
      serve::Keeper* keeper;
    } w{&done, std::chrono::steady_clock::now() + deadline, &keeper};
    watch.data = &w;
    uv_timer_start(
        &watch,
        [](uv_timer_t* t) noexcept {
          auto* x = static_cast<Watch*>(t->data);
          if (!(*x->done)() && std::chrono::steady_clock::now() < x->until) return;
          x->keeper->close();
          uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
        },
        100, 100);
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop), 0) << "a handle of the keeper is still open";
  }

  std::string dir_, id_;
  std::shared_ptr<Gatekeeper> gatekeeper_;
  std::unique_ptr<RecordingPlace> place_;
  std::unique_ptr<Manager> manager_;
};

TEST_F(GrantRestoreTest, StartSaysEnvAndHelperGrantsAgainAndOnlyStdinOnesNeedAccess) {
  const std::string env_secret = "sk-restore-env-" + random_hex(8);
  setenv("SPACECTL_RESTORE_KEY", env_secret.c_str(), 1);
  GrantRequest env;
  env.id = "openai";
  env.upstream = "https://api.openai.com/v1";
  env.header = "authorization";
  env.source = {grants::SourceKind::kEnv, "SPACECTL_RESTORE_KEY", {}};
  ASSERT_TRUE(manager_->grant_add(id_, env, grants::Token()));
  ASSERT_TRUE(manager_->grant_add(id_, helper_grant("tokens", "ok", "600"), grants::Token()));
  grants::Token typed;
  typed.secret = "sk-restore-typed";
  GrantRequest stdin_grant;
  stdin_grant.id = "typed";
  stdin_grant.upstream = "https://api.example.com/v1";
  stdin_grant.header = "x-api-key";
  stdin_grant.source.kind = grants::SourceKind::kStdin;
  ASSERT_TRUE(manager_->grant_add(id_, stdin_grant, std::move(typed)));
  EXPECT_EQ(helper_calls(), 1);
  ASSERT_TRUE(manager_->stop(id_));
  const std::size_t before = gatekeeper_->bodies("POST /grants").size();

  Result<json> started = document(manager_->start(id_));
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ((*started)["grants_restored"], json::array({"openai", "tokens"})) << started->dump();
  EXPECT_EQ((*started)["needs_access"], json::array({"typed"})) << started->dump();
  EXPECT_EQ(helper_calls(), 2);
  std::vector<std::string> bodies = gatekeeper_->bodies("POST /grants");
  ASSERT_EQ(bodies.size(), before + 2);
  EXPECT_NE(bodies[before].find(env_secret), std::string::npos);
  EXPECT_NE(bodies[before + 1].find("sk-helper-token-2"), std::string::npos);
  for (const std::string& secret :
       {env_secret, std::string("sk-helper-token-2"), std::string("sk-restore-typed")}) {
    EXPECT_EQ(started->dump().find(secret), std::string::npos);
    EXPECT_EQ(record_text().find(secret), std::string::npos) << secret;
  }

  // Unset at the next start: that grant needs access too, and says why.
  unsetenv("SPACECTL_RESTORE_KEY");
  ASSERT_TRUE(manager_->stop(id_));
  started = document(manager_->start(id_));
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ((*started)["needs_access"], json::array({"openai", "typed"})) << started->dump();
  ASSERT_EQ((*started)["grant_failures"].size(), 1u) << started->dump();
  EXPECT_EQ((*started)["grant_failures"][0]["code"], "secret_source_missing");
  EXPECT_EQ((*started)["state"], "needs-access");
}

TEST_F(GrantRestoreTest, TheKeeperRenewsAShortLivedTokenInPlaceAgainAndAgain) {
  // 4-second tokens: renewed at half their life, so about every 2 s.
  ASSERT_TRUE(manager_->grant_add(id_, helper_grant("tokens", "ok", "4"), grants::Token()));
  const std::size_t before = gatekeeper_->bodies("POST /grants").size();
  run_keeper([this] { return helper_calls() >= 4; }, 30s);
  ASSERT_GE(helper_calls(), 4);
  const std::vector<std::string> bodies = gatekeeper_->bodies("POST /grants");
  ASSERT_GE(bodies.size(), before + 3);
  // In order, each renewal replaced the grant with the next token; nothing was withdrawn.
  for (std::size_t i = before; i < bodies.size(); ++i) {
    EXPECT_NE(bodies[i].find("sk-helper-token-" + std::to_string(i - before + 2)),
              std::string::npos)
        << bodies[i];
  }
  EXPECT_TRUE(gatekeeper_->bodies("DELETE /grants/tokens").empty());
  // The record holds the newest expiry and never a token.
  EXPECT_EQ(record_text().find("sk-helper-token"), std::string::npos);
  Result<SpaceRecord> record = read_record(dir_ + "/state", id_);
  ASSERT_TRUE(record);
  const auto expires = grants::parse_rfc3339(record->grants[0].expires_at);
  ASSERT_TRUE(expires);
  EXPECT_GT(*expires, std::chrono::system_clock::now());
}

TEST_F(GrantRestoreTest, AFailingRenewalKeepsTheOldTokenUntilItExpiresThenWithdrawsIt) {
  // The first run (at grant add) works, every later one fails: the 3-second token stays in the
  // gatekeeper until it expires, and is then withdrawn, so no request carries it afterwards.
  ASSERT_TRUE(manager_->grant_add(id_, helper_grant("tokens", "fail-after", "3"), grants::Token()));
  Result<SpaceRecord> record = read_record(dir_ + "/state", id_);
  ASSERT_TRUE(record);
  const auto expires = grants::parse_rfc3339(record->grants[0].expires_at);
  ASSERT_TRUE(expires);
  run_keeper([this] { return !gatekeeper_->bodies("DELETE /grants/tokens").empty(); }, 30s);
  EXPECT_EQ(gatekeeper_->bodies("DELETE /grants/tokens").size(), 1u);
  EXPECT_GE(std::chrono::system_clock::now(), *expires) << "withdrawn before the token expired";
  EXPECT_EQ(gatekeeper_->bodies("POST /grants").size(), 1u)
      << "no token but the first was ever said";
  // One failed run, then backoff (30 s) longer than the test: the helper is not hammered.
  EXPECT_EQ(helper_calls(), 2);
}

}  // namespace
}  // namespace controller::grants
