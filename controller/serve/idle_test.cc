// Pure pieces of serve: idle-stop settings at their limits, the gatekeeper's relayed bytes read
// from /metrics, the stopped-idle state, and operations with their events.
#include <uv.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/manager.h"
#include "controller/serve/idle.h"
#include "controller/serve/operations.h"

namespace controller::serve {
namespace {

using nlohmann::json;

TEST(IdleStopSetting, HoursAreOneTo168AndNothingElseIsTaken) {
  EXPECT_FALSE(parse_idle_setting(json{{"enabled", true}, {"hours", 0}}));
  EXPECT_TRUE(parse_idle_setting(json{{"enabled", true}, {"hours", 1}}));
  EXPECT_TRUE(parse_idle_setting(json{{"enabled", false}, {"hours", 168}}));
  EXPECT_FALSE(parse_idle_setting(json{{"enabled", true}, {"hours", 169}}));
  EXPECT_FALSE(parse_idle_setting(json{{"enabled", "yes"}, {"hours", 2}}));
  EXPECT_FALSE(parse_idle_setting(json{{"enabled", true}}));
  EXPECT_FALSE(parse_idle_setting(json{{"enabled", true}, {"hours", 2}, {"seconds", 5}}));
  EXPECT_FALSE(parse_idle_setting(json::array()));
}

TEST(IdleStopMetrics, RelayedBytesAreTheSumOfBothDirections) {
  const std::string metrics =
      "# HELP gatekeeper_relayed_bytes_total Bytes relayed through tunnels.\n"
      "# TYPE gatekeeper_relayed_bytes_total counter\n"
      "gatekeeper_relayed_bytes_total{direction=\"upstream\"} 1200\n"
      "gatekeeper_relayed_bytes_total{direction=\"downstream\"} 34\n"
      "gatekeeper_open_tunnels 0\n";
  EXPECT_EQ(relayed_bytes(metrics), 1234);
  EXPECT_EQ(relayed_bytes("gatekeeper_open_tunnels 3\n"), -1);
  EXPECT_EQ(relayed_bytes("gatekeeper_relayed_bytes_total{direction=\"upstream\"} 12x\n"), -1);
}

// A counter that does not read is no reading, never a wrapped or partial sum: 2^63 in 20 digits
// overflowed the digit loop (signed overflow), and a good line beside a bad one was summed alone.
TEST(IdleStopMetrics, ACounterThatDoesNotReadOrASumThatDoesNotFitIsNoReading) {
  const std::string up = "gatekeeper_relayed_bytes_total{direction=\"upstream\"} ";
  const std::string down = "gatekeeper_relayed_bytes_total{direction=\"downstream\"} ";
  EXPECT_EQ(relayed_bytes(up + "9223372036854775807\n"), 9223372036854775807LL);
  EXPECT_EQ(relayed_bytes(up + "9223372036854775808\n"), -1);
  EXPECT_EQ(relayed_bytes(up + "99999999999999999999\n"), -1);
  EXPECT_EQ(relayed_bytes(up + "9223372036854775807\n" + down + "1\n"), -1);
  EXPECT_EQ(relayed_bytes(up + "1200\n" + down + "-34\n"), -1);
  EXPECT_EQ(relayed_bytes(up + "1200\n" + down + "+34\n"), -1);
  EXPECT_EQ(relayed_bytes(up + "1200\n" + down + "\n"), -1);
  EXPECT_EQ(relayed_bytes(up + "1200\n" + down + "34 \n"), -1);
}

TEST(IdleStopState, ASpaceThatExited75IsStoppedIdleAnyOtherExitIsStopped) {
  SpaceSummary s;
  s.id = "0123456789ab";
  s.space_state = "exited";
  s.gatekeeper_state = "exited";
  s.space_exit_code = kIdleExitCode;
  EXPECT_EQ(space_state(s, false), SpaceState::kStoppedIdle);
  s.space_exit_code = 143;  // docker stop
  EXPECT_EQ(space_state(s, false), SpaceState::kStopped);
  s.space_exit_code = 75;
  s.gatekeeper_state = "running";  // its gatekeeper still up: one half runs
  EXPECT_EQ(space_state(s, false), SpaceState::kUnreachable);
}

TEST(ServeOperations, AnOperationKeepsItsEventsAndEndsDoneOrFailed) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  {
    Operations ops(&loop);
    const std::string ok = ops.start("create", "0123456789ab", [](const Say& say) -> Result<json> {
      say("creating_networks");
      say("starting");
      return json{{"id", "0123456789ab"}};
    });
    const std::string bad = ops.start("code-in", "0123456789ab", [](const Say&) -> Result<json> {
      return fail(Code::kSpaceBusy, "code in 0123456789ab: the space is busy");
    });
    ops.join();
    const json d = ops.describe(ok);
    EXPECT_EQ(d["state"], "done");
    EXPECT_EQ(d["result"]["id"], "0123456789ab");
    std::vector<json> events;
    bool finished = false;
    std::size_t next = 0;
    ASSERT_TRUE(ops.events_since(ok, 0, events, finished, next));
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0]["step"], "creating_networks");
    EXPECT_EQ(events[2]["step"], "done");
    EXPECT_TRUE(finished);
    events.clear();
    ASSERT_TRUE(ops.events_since(ok, 2, events, finished, next));
    EXPECT_EQ(events.size(), 1u);
    EXPECT_EQ(ops.describe(bad)["failure"]["code"], "space_busy");
    EXPECT_TRUE(ops.dismiss(bad));
    EXPECT_TRUE(ops.describe(bad).is_null());
    EXPECT_FALSE(ops.dismiss(bad));
    ops.close();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  EXPECT_EQ(uv_loop_close(&loop), 0) << "a handle was left open";
}

}  // namespace
}  // namespace controller::serve
