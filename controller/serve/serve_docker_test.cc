// spacectl serve on real Docker (label docker; skip without an engine, fail under CI=true): two
// spaces created through the API; idle stop (shortened with SPACECTL_TEST_IDLE_STOP_SECONDS)
// stops the one whose setting is enabled, space and gatekeeper, and it lists as stopped-idle; the
// one whose setting is disabled keeps running. Nothing labelled with the test's owner is left.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/process.h"
#include "controller/serve/testing/serve_client.h"
#include "controller/testing/live_space.h"
#include "policy/number.h"
#include "tests/support/environment.h"

namespace controller::serve {
namespace {

using controller::testing::kLiveBin;
using controller::testing::readable;
using nlohmann::json;
using testing::Answer;

std::string docker_out(std::vector<std::string> args) {
  return controller::testing::docker(std::move(args)).out;
}

class ServeDockerTest : public ::testing::Test {
 protected:
  // The shared live fixture (controller/testing/live_space.h): owner, state, pins, profiles,
  // serve in the background, and at the end the proof that nothing of the owner is left.
  ServeDockerTest() : live_(controller::testing::LiveSpaceOptions{"servetest"}) {}
  void TearDown() override {
    live_.stop_serve();
    if (gk_test::docker_engine_answers()) {
      for (const std::string& id : created_) {
        (void)live_.spacectl({"space", "remove", id}, {}, false);
      }
    }
  }
  bool ready() { return live_.ready(); }
  void start_serve(int idle_seconds) {
    socket_ = live_.serve_socket();
    EXPECT_TRUE(
        live_.start_serve({"SPACECTL_TEST_IDLE_STOP_SECONDS=" + std::to_string(idle_seconds)}))
        << "serve did not start";
  }
  Answer call(const std::string& method, const std::string& path, const std::string& body = {}) {
    return testing::http_exchange(testing::connect_unix(socket_), testing::request_text(method, path, body));
  }
  std::string create(const std::string& name) {
    const Answer a = call("POST", "/v1/spaces", R"({"name":")" + name + R"(","memory_bytes":268435456})");
    EXPECT_EQ(a.status, 202) << a.body;
    const std::string op = a.doc.value("operation", ""), id = a.doc.value("id", "");
    created_.push_back(id);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
    json d;
    while (std::chrono::steady_clock::now() < deadline) {
      d = call("GET", "/v1/operations/" + op).doc;
      if (d.value("state", "") != "running") break;
      usleep(250000);
    }
    EXPECT_EQ(d.value("state", ""), "done") << d.dump();
    return id;
  }
  std::string state_of(const std::string& id) {
    const Answer a = call("GET", "/v1/spaces");
    for (const json& s : a.doc["spaces"]) {
      if (s["id"] == id) return s.value("state", "");
    }
    return "absent";
  }

  controller::testing::LiveSpace live_;
  std::string socket_;
  std::vector<std::string> created_;
};

TEST_F(ServeDockerTest, IdleStopStopsASpaceWithNoActivityAndLeavesADisabledOneRunning) {
  GK_REQUIRE(ready(), "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  start_serve(6);
  // The override shortens every enabled setting, the default too: off until each space has its own.
  ASSERT_EQ(call("PUT", "/v1/idle-stop", R"({"enabled":false,"hours":1})").status, 200);
  // The idle space last: its clock runs from its create, and the check below must come before the
  // 6 s have passed even when the other create is slow (CI runs two docker tests at a time).
  const std::string kept = create("kept");
  const std::string idle = create("idle");
  ASSERT_EQ(call("PUT", "/v1/spaces/" + idle + "/idle-stop", R"({"enabled":true,"hours":1})").status, 200);
  ASSERT_EQ(call("PUT", "/v1/spaces/" + kept + "/idle-stop", R"({"enabled":false,"hours":1})").status, 200);
  EXPECT_EQ(state_of(idle), "running");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (state_of(idle) != "stopped-idle" && std::chrono::steady_clock::now() < deadline) usleep(500000);
  EXPECT_EQ(state_of(idle), "stopped-idle");
  for (const char* role : {"space", "gatekeeper"}) {
    const std::string status = docker_out({"container", "inspect", "--format", "{{.State.Status}}", "gk-" + idle + "-" + role});
    EXPECT_EQ(status, "exited\n") << role;
  }
  EXPECT_EQ(state_of(kept), "running") << "a space with idle stop disabled was stopped";
  // A start by hand: running again, no longer stopped-idle.
  const Answer started = call("POST", "/v1/spaces/" + idle + "/start");
  EXPECT_EQ(started.status, 200) << started.body;
  EXPECT_EQ(state_of(idle), "running");
  for (const std::string& id : created_) EXPECT_EQ(call("DELETE", "/v1/spaces/" + id).status, 200);
  created_.clear();
}

// escape-test through the API: its events carry one line per case as the suite inside reports it
// (only the cases the host listed, each once), and they agree with the report's own verdicts.
TEST_F(ServeDockerTest, EscapeTestStreamsOneProgressEventPerCase) {
  GK_REQUIRE(ready() && readable(kLiveBin + "/escape-suite"),
             "needs a Docker engine, the pinned images and the escape-suite binary");
  start_serve(3600);
  const std::string id = create("escape");
  Answer a =
      call("POST", "/v1/spaces/" + id + "/escape-test", R"({"only":["fs.*"],"exhaustion":false})");
  ASSERT_EQ(a.status, 202) << a.body;
  const std::string op = a.doc.value("operation", "");
  // The event stream, read to its end while the run goes on.
  const Answer events = call("GET", "/v1/operations/" + op + "/events");
  EXPECT_NE(events.body.find("event: end"), std::string::npos) << events.body;
  const json d = call("GET", "/v1/operations/" + op).doc;
  ASSERT_EQ(d.value("state", ""), "done") << d.dump();
  std::map<std::string, std::string> reported;  // id -> verdict, from the report
  for (const json& r : d["result"]["report"]["cases"]) {
    if (r.value("id", "").rfind("fs.", 0) == 0) reported[r.value("id", "")] = r.value("verdict", "");
  }
  ASSERT_FALSE(reported.empty()) << d.dump();
  std::map<std::string, int> seen;
  const std::regex line(
      R"re("step":"case (fs\.[a-z0-9._-]+) (PASS|FAIL|INCONCLUSIVE|N/A) \(([0-9]+) of ([0-9]+)\)")re");
  for (auto it = std::sregex_iterator(events.body.begin(), events.body.end(), line);
       it != std::sregex_iterator(); ++it) {
    ++seen[(*it)[1].str()];
    EXPECT_EQ((*it)[2].str(), reported[(*it)[1].str()])
        << (*it)[1].str() << ": the event and the report disagree";
    EXPECT_EQ(policy::parse_number<std::size_t>((*it)[4].str()), reported.size()) << (*it)[0].str();
  }
  EXPECT_EQ(seen.size(), reported.size()) << events.body;
  for (const auto& [case_id, n] : seen) {
    EXPECT_EQ(n, 1) << case_id << " reported more than once";
  }
  EXPECT_EQ(call("DELETE", "/v1/spaces/" + id).status, 200);
  created_.clear();
}

}  // namespace
}  // namespace controller::serve
