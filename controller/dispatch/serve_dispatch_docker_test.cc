// The dispatcher inside `spacectl serve` on real Docker (LABEL docker): serve is started on its
// unix socket, a space is created through the API (the manager writes its token), our inner test
// server runs inside on the inner port, and requests and a WebSocket go through serve's socket.
// Nothing labelled with the test's owner is left.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/dispatch/testing/harness.h"
#include "controller/dispatch/testing/live_inner.h"
#include "controller/dispatch/testing/pattern.h"
#include "controller/docker_place.h"
#include "controller/process.h"
#include "controller/space_token.h"
#include "controller/testing/live_space.h"
#include "escape-suite/sha256.h"
#include "tests/support/docker_pools.h"
#include "tests/support/environment.h"

namespace controller::dispatch {
namespace {

using nlohmann::json;
using testing::Answer;
using testing::Client;
using testing::code_of;
using testing::pattern;

class ServeDispatchTest : public ::testing::Test {
 protected:
  // The shared live fixture (controller/testing/live_space.h) gives the owner, the state
  // directory, pins, profiles and the second test pool (gk_pool_second), and proves at the end
  // that nothing of the owner is left.
  ServeDispatchTest() : live_(controller::testing::LiveSpaceOptions{"dispserve"}) {
    live_.set_subnet_pool(gk_test::kSecondSubnetPool);
  }
  void SetUp() override {
    GK_REQUIRE(live_.ready() && testing::inner_programs_built(),
               "no Docker engine, images, seccomp profiles, spacectl-bridge or "
               "dispatch-inner-server");
    socket_ = live_.serve_socket();
    ASSERT_TRUE(live_.start_serve()) << "serve did not start";
    // Create through the API and wait for the operation.
    const std::string body = R"({"name":"disp","memory_bytes":536870912})";
    Answer a = call("POST /v1/spaces HTTP/1.1\r\nHost: s\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body);
    ASSERT_EQ(a.status, 202) << a.body;
    const json created = json::parse(a.body, nullptr, false);
    id_ = created.value("id", "");
    const std::string op = created.value("operation", "");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
    json d;
    while (std::chrono::steady_clock::now() < deadline) {
      d = json::parse(call("GET /v1/operations/" + op + " HTTP/1.1\r\nHost: s\r\n\r\n").body, nullptr, false);
      if (d.value("state", "") != "running") break;
      ::usleep(250000);
    }
    ASSERT_EQ(d.value("state", ""), "done") << d.dump();
    // The inner test server, inside, on the inner port with the token create wrote.
    DockerPlace place(live_.place_options());
    ASSERT_TRUE(testing::start_inner_server(place, id_, "http 27600 " + std::string(kTokenPath)));
  }
  void TearDown() override {
    live_.stop_serve();
    if (!id_.empty()) (void)live_.spacectl({"space", "remove", id_}, {}, false);
  }
  Answer call(const std::string& raw) {
    Client c(socket_);
    c.send(raw);
    return c.read_answer(false, 120000);
  }
  std::string path(const std::string& rest) { return "/api/spaces/" + id_ + "/" + rest; }

  controller::testing::LiveSpace live_;
  std::string socket_, id_;
};

TEST_F(ServeDispatchTest, RequestsAndAWebSocketGoThroughServe) {
  // Two requests on one keep-alive connection: serve gets the stream back between them.
  Client c(socket_);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send(testing::get(path("echo?n=1"), "Authorization: Bearer user-secret\r\n")));
  Answer a = c.read_answer(false, 120000);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("Cookie: oc_ui_session_27600="), std::string::npos) << a.body;
  EXPECT_EQ(a.body.find("user-secret"), std::string::npos) << a.body;
  EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff");
  ASSERT_TRUE(c.send(testing::get(path("echo?n=2"))));
  a = c.read_answer(false, 120000);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("GET /api/echo?n=2\n"), std::string::npos);
  // serve's own route on the same connection afterwards.
  ASSERT_TRUE(c.send("GET /v1/spaces HTTP/1.1\r\nHost: s\r\n\r\n"));
  EXPECT_EQ(c.read_answer(false, 120000).status, 200);

  EXPECT_EQ(code_of(call(testing::get("/api/spaces/ffffffffffff/echo"))), "space_not_found");
  EXPECT_EQ(code_of(call(testing::get(path("provider")))), "host_only_route");

  Client ws(socket_);
  ASSERT_TRUE(ws.send(testing::ws_upgrade(path("terminal/ws"))));
  ASSERT_EQ(ws.read_upgrade(120000).status, 101);
  const std::string payload = pattern(1u << 20);
  std::thread writer([&] { ws.send(testing::ws_frame(2, payload)); });
  const testing::Frame f = testing::read_frame(ws, 120000);
  writer.join();
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(escape::sha256_hex(f.payload), escape::sha256_hex(payload));
}

}  // namespace
}  // namespace controller::dispatch
