// The dispatcher inside `spacectl serve` on real Docker (LABEL docker): serve is started on its
// unix socket, a space is created through the API (the manager writes its token), our inner test
// server runs inside on the inner port, and requests and a WebSocket go through serve's socket.
// Nothing labelled with the test's owner is left.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/dispatch/testing/harness.h"
#include "controller/dispatch/testing/pattern.h"
#include "controller/docker_place.h"
#include "controller/process.h"
#include "controller/space_token.h"
#include "escape-suite/sha256.h"
#include "tests/support/docker_pools.h"
#include "tests/support/environment.h"

namespace controller::dispatch {
namespace {

using nlohmann::json;
using testing::Answer;
using testing::Client;

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";

bool exists(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

std::string code_of(const Answer& a) {
  const std::size_t at = a.body.find("\"code\":\"");
  return at == std::string::npos ? std::string() : a.body.substr(at + 8, a.body.find('"', at + 8) - at - 8);
}

class ServeDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_REQUIRE(gk_test::docker_engine_answers(), "no Docker engine answers");
    GK_REQUIRE(exists(kBin + "/gatekeeper-image.id") && exists(kBin + "/space-image.id") &&
                   exists(kBin + "/spacectl-bridge") && exists(kBin + "/dispatch-inner-server"),
               "the images, spacectl-bridge or dispatch-inner-server are not built");
    char tmpl[] = "/tmp/dispatch-serve-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    state_ = dir_ + "/state";
    std::filesystem::create_directories(state_);
    std::filesystem::permissions(state_, std::filesystem::perms::owner_all);
    owner_ = "dispserve" + random_hex(4);
    socket_ = state_ + "/serve.sock";
    pid_ = ::fork();
    if (pid_ == 0) {
      const int err = ::open((dir_ + "/serve.err").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      ::dup2(err, 2);
      ::execl(SPACECTL, SPACECTL, "--owner", owner_.c_str(), "--state-dir", state_.c_str(),
              "--subnet-pool", gk_test::kSecondSubnetPool, "serve", "--no-sweep",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !std::filesystem::exists(socket_); ++i) ::usleep(50000);
    ASSERT_TRUE(std::filesystem::exists(socket_)) << "serve did not start";
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
    PlaceOptions o;
    o.owner = owner_;
    o.gatekeeper_image_file = kBin + "/gatekeeper-image.id";
    o.space_image_file = kBin + "/space-image.id";
    DockerPlace place(o);
    Result<std::string> server = read_small_file(kBin + "/dispatch-inner-server", 16u << 20);
    ASSERT_TRUE(server.ok());
    Result<ExecOutput> w = place.exec(id_, ExecTarget::kSpace, {"sh", "-c", "cat > /tmp/inner && chmod 755 /tmp/inner"}, *server,
                                      std::chrono::seconds(60));
    ASSERT_TRUE(w.ok() && w->exit_code == 0);
    // Waits on the server's line for up to 20 s: a neighbouring test may hold the other core.
    Result<ExecOutput> run =
        place.exec(id_, ExecTarget::kSpace,
                   {"sh", "-c",
                    "(/tmp/inner http 27600 " + std::string(kTokenPath) +
                        " >/tmp/inner.log 2>&1 &) && "
                        "i=0; while [ $i -lt 100 ]; do grep -q listening /tmp/inner.log && exit 0; "
                        "sleep 0.2; i=$((i+1)); done; exit 1"},
                   {}, std::chrono::seconds(30));
    ASSERT_TRUE(run.ok() && run->exit_code == 0);
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!id_.empty()) {
      ProcessRequest r;
      r.argv = {SPACECTL, "--owner", owner_, "--state-dir", state_, "space", "remove", id_};
      r.timeout = std::chrono::minutes(2);
      (void)run_process(r);
      ProcessRequest ps;
      ps.argv = {"docker", "ps", "-aq", "--filter", "label=spacectl.space.owner=" + owner_};
      EXPECT_EQ(run_process(ps).out, "") << "left behind for owner " << owner_;
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  Answer call(const std::string& raw) {
    Client c(socket_);
    c.send(raw);
    return c.read_answer(false, 120000);
  }
  std::string path(const std::string& rest) { return "/api/spaces/" + id_ + "/" + rest; }

  std::string dir_, state_, owner_, socket_, id_;
  pid_t pid_ = -1;
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
  std::string payload(1u << 20, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) {
    payload[i] = static_cast<char>(testing::pattern_byte(i));
  }
  std::thread writer([&] { ws.send(testing::ws_frame(2, payload)); });
  const testing::Frame f = testing::read_frame(ws, 120000);
  writer.join();
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(escape::sha256_hex(f.payload), escape::sha256_hex(payload));
}

}  // namespace
}  // namespace controller::dispatch
