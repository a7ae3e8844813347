// The dispatcher end to end through a live space (LABEL docker): the manager makes the token at
// create, our inner test server runs inside on the inner port with that token, and the test
// acceptor (standing in for `spacectl serve`) hands requests to a Dispatcher whose hooks are the
// Docker place's list, connect and exec. Traffic: loopback on the host, and the space's own
// loopback through `docker exec`.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "controller/dispatch/rules.h"
#include "controller/dispatch/testing/harness.h"
#include "controller/dispatch/testing/live_inner.h"
#include "controller/dispatch/testing/pattern.h"
#include "controller/docker_place.h"
#include "controller/manager.h"
#include "controller/process.h"
#include "controller/space_token.h"
#include "controller/testing/live_space.h"
#include "escape-suite/sha256.h"
#include "tests/support/docker_pools.h"
#include "tests/support/environment.h"

namespace controller::dispatch {
namespace {

using controller::testing::docker;
using testing::Acceptor;
using testing::Answer;
using testing::Client;
using testing::code_of;
using testing::pattern;

class DispatchLiveTest : public ::testing::Test {
 protected:
  // The shared live fixture (controller/testing/live_space.h) gives the owner, the state
  // directory, pins, profiles and the second test pool (gk_pool_second), and proves at the end
  // that nothing of the owner is left.
  DispatchLiveTest() : live_(controller::testing::LiveSpaceOptions{"dispatchtest"}) {
    live_.set_subnet_pool(gk_test::kSecondSubnetPool);
  }
  void SetUp() override {
    GK_REQUIRE(live_.ready() && testing::inner_programs_built(),
               "no Docker engine, images, seccomp profiles, spacectl-bridge or "
               "dispatch-inner-server");
    place_ = std::make_unique<DockerPlace>(live_.place_options());
    Manager m{*place_, live_.state()};
    CreateRequest request;
    request.memory_bytes = 512ll << 20;
    Result<SpaceCreated> created = m.create(request);
    ASSERT_TRUE(created.ok()) << created.error().message;
    id_ = created->space.summary.id;
    ASSERT_TRUE(created->token_written) << created->token_failure.value_or("");
    ASSERT_TRUE(testing::start_inner_server(*place_, id_, "http 27600 " + std::string(kTokenPath)));
    DockerPlace* place = place_.get();
    acceptor_ = std::make_unique<Acceptor>([place](DispatcherConfig& c) {
      c.list_spaces = [place]() -> Result<std::vector<std::string>> {
        Result<std::vector<SpaceSummary>> all = place->list();
        if (!all) return all.error();
        std::vector<std::string> ids;
        for (const SpaceSummary& s : *all) ids.push_back(s.id);
        return ids;
      };
      c.connect = [place](const std::string& id, std::uint16_t port) { return place->connect(id, port); };
      c.read_token = [place](const std::string& id) { return read_space_token(*place, id); };
    });
  }
  void TearDown() override {
    if (acceptor_) {
      EXPECT_TRUE(acceptor_->stop()) << "a handle was left open on the loop";
    }
    acceptor_.reset();
    if (place_ && !id_.empty()) {
      Result<void> r = place_->remove(id_);
      EXPECT_TRUE(r.ok()) << r.error().message;
    }
  }
  Answer ask(const std::string& raw) {
    Client c(acceptor_->port());
    c.send(raw);
    return c.read_answer(false, 120000);
  }
  std::string path(const std::string& rest) { return "/api/spaces/" + id_ + "/" + rest; }

  controller::testing::LiveSpace live_;
  std::unique_ptr<DockerPlace> place_;
  std::unique_ptr<Acceptor> acceptor_;
  std::string id_;
};

TEST_F(DispatchLiveTest, EveryRuleHoldsThroughALiveSpace) {
  Answer a = ask(testing::get(
      path("echo?x=1&oc_url_token=u"),
      "Cookie: host=user-secret\r\nAuthorization: Bearer user-secret\r\nOrigin: http://a\r\n"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("GET /api/echo?x=1\n"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("Cookie: oc_ui_session_27600="), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("Host: 127.0.0.1:27600\n"), std::string::npos);
  EXPECT_EQ(a.body.find("user-secret"), std::string::npos) << a.body;
  EXPECT_EQ(a.body.find("Origin"), std::string::npos) << a.body;
  EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff");

  EXPECT_EQ(code_of(ask(testing::get("/api/spaces/ffffffffffff/echo"))), "space_not_found");
  EXPECT_EQ(code_of(ask(testing::get(path("provider")))), "host_only_route");
  EXPECT_EQ(code_of(ask(testing::get(path("git/worktrees")))), "refused_across_boundary");
  EXPECT_EQ(code_of(ask(testing::get(path("echo?directory=/etc")))), "directory_outside_space");
  a = ask(testing::get(path("headers")));
  EXPECT_FALSE(a.has("Set-Cookie"));
  EXPECT_FALSE(a.has("Location"));
  EXPECT_EQ(a.header("ETag"), "\"e1\"");
  a = ask(testing::get(path("redirect")));
  EXPECT_EQ(a.status, 502);
  EXPECT_EQ(code_of(a), "space_redirected");
  EXPECT_EQ(ask(testing::get(path("type?ct=text/html"))).header("Content-Type"),
            "text/plain; charset=utf-8");
  // The session ends inside: a bodyless request is renewed once, one with a body asks for a resend.
  ASSERT_EQ(ask(testing::get(path("expire-sessions"))).status, 200);
  EXPECT_EQ(ask(testing::get(path("echo"))).status, 200);
  ASSERT_EQ(ask(testing::get(path("expire-sessions"))).status, 200);
  a = ask("POST " + path("echo") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_EQ(code_of(a), "space_session_expired");

  // 8 concurrent event streams.
  std::vector<std::future<Answer>> streams;
  for (int i = 0; i < 8; ++i) {
    streams.push_back(std::async(std::launch::async, [this] {
      return ask(testing::get(path("sse?events=10&delay_ms=50")));
    }));
  }
  for (auto& f : streams) {
    const Answer s = f.get();
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.header("Content-Type"), "text/event-stream");
    EXPECT_NE(s.body.find("data: 9\n\n"), std::string::npos);
  }

  // WebSockets: a 4 MiB echo, an end from inside (1012), a path that is not a socket.
  {
    Client c(acceptor_->port());
    ASSERT_TRUE(c.send(testing::ws_upgrade(path("terminal/ws"))));
    const Answer head = c.read_upgrade(120000);
    ASSERT_EQ(head.status, 101);
    EXPECT_FALSE(head.has("Set-Cookie"));
    const std::string payload = pattern(4u << 20);
    std::thread writer([&] { c.send(testing::ws_frame(2, payload)); });
    const testing::Frame f = testing::read_frame(c, 120000);
    writer.join();
    ASSERT_TRUE(f.ok);
    EXPECT_EQ(escape::sha256_hex(f.payload), escape::sha256_hex(payload));
  }
  {
    Client c(acceptor_->port());
    c.send(testing::ws_upgrade(path("event/ws")));
    ASSERT_EQ(c.read_upgrade(120000).status, 101);
    const testing::Frame f = testing::read_frame(c, 60000);
    ASSERT_TRUE(f.ok);
    EXPECT_EQ(f.opcode, 8);
    ASSERT_GE(f.payload.size(), 2u);
    EXPECT_EQ((static_cast<unsigned char>(f.payload[0]) << 8) | static_cast<unsigned char>(f.payload[1]), 1012);
  }
  {
    Client c(acceptor_->port());
    c.send(testing::ws_upgrade(path("session")));
    EXPECT_EQ(code_of(c.read_answer()), "space_socket_unknown");
  }
}

TEST_F(DispatchLiveTest, Carries64MiBUpAndDownShaExact) {
  const std::string body = pattern(64u << 20);
  const std::string sha = escape::sha256_hex(body);
  {
    Client c(acceptor_->port());
    ASSERT_TRUE(c.send("POST " + path("echo") + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\n\r\n"));
    std::thread writer([&] { c.send(body); });
    const Answer a = c.read_answer(false, 300000);
    writer.join();
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_NE(a.body.find("body-sha256: " + sha), std::string::npos) << a.body;
  }
  const Answer down = ask(testing::get(path("bytes?n=" + std::to_string(body.size()))));
  ASSERT_EQ(down.status, 200);
  EXPECT_EQ(down.body.size(), body.size());
  EXPECT_EQ(escape::sha256_hex(down.body), sha);
}

TEST_F(DispatchLiveTest, TheTokenIsNeverInInspectOrLogsAndAStoppedSpaceIsNotRunning) {
  Result<std::string> token = read_space_token(*place_, id_);
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_TRUE(token_well_formed(*token));
  EXPECT_EQ(token->size(), 43u);
  const Names n = names_for(id_);
  for (const std::string& c : {n.space, n.gatekeeper}) {
    const ProcessOutcome inspect = docker({"inspect", "--", c});
    ASSERT_TRUE(inspect.succeeded()) << inspect.describe();
    EXPECT_EQ(inspect.out.find(*token), std::string::npos) << "docker inspect " << c << " shows the token";
    const ProcessOutcome logs = docker({"logs", "--", c});
    EXPECT_EQ(logs.out.find(*token), std::string::npos) << "docker logs " << c << " shows the token";
    EXPECT_EQ(logs.err.find(*token), std::string::npos) << "docker logs " << c << " shows the token";
  }
  // The file is the space user's, 0600 in a 0700 directory.
  Result<ExecOutput> ls = place_->exec(id_, ExecTarget::kSpace, {"ls", "-ldn", std::string(kTokenDir), std::string(kTokenPath)},
                                       {}, std::chrono::seconds(30));
  ASSERT_TRUE(ls.ok() && ls->exit_code == 0);
  EXPECT_NE(ls->out.find("drwx------"), std::string::npos) << ls->out;
  EXPECT_NE(ls->out.find("-rw-------"), std::string::npos) << ls->out;

  ASSERT_EQ(ask(testing::get(path("echo"))).status, 200);
  ASSERT_TRUE(place_->stop(id_).ok());
  // The pooled stream died with the container; a fresh one is refused by the place.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const Answer a = ask(testing::get(path("echo")));
  EXPECT_EQ(a.status, 503) << a.body;
  EXPECT_EQ(code_of(a), "space_not_running");
}

}  // namespace
}  // namespace controller::dispatch
