// The dispatcher on a real loop, on loopback only, without root: the test acceptor stands in for
// `spacectl serve`, our inner test server runs on this host, and `connect` is our bridge run
// here (the same program Place::connect runs inside a space). Every test ends by proving the
// loop closed with no handle left open.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "controller/dispatch/rules.h"
#include "controller/dispatch/testing/harness.h"
#include "controller/dispatch/testing/pattern.h"
#include "escape-suite/sha256.h"
#include "policy/number.h"

namespace controller::dispatch {
namespace {

using testing::Acceptor;
using testing::Answer;
using testing::Client;
using testing::code_of;
using testing::pattern;

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";
const std::string kId = "0123456789ab";
const std::string kToken = "abcdefghijklmnopqrstuvwxyz0123456789-_ABCDE";

class DispatcherLoopTest : public ::testing::Test {
 protected:
  void SetUp() override { start(3600); }
  void start(int session_seconds) {
    char tmpl[] = "/tmp/dispatch-loop-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    token_file_ = dir_ + "/token";
    write_token(kToken);
    server_ = testing::start_child({kBin + "/dispatch-inner-server", "http", "0", token_file_,
                                    std::to_string(session_seconds)});
    ASSERT_EQ(server_.first_line.rfind("listening ", 0), 0u) << server_.first_line;
    const std::optional<int> port = policy::parse_number<int>(server_.first_line.substr(10));
    ASSERT_TRUE(port.has_value()) << server_.first_line;
    inner_port_ = *port;
  }
  void TearDown() override {
    if (acceptor_) {
      EXPECT_TRUE(acceptor_->stop()) << "a handle was left open on the loop";
    }
    acceptor_.reset();
    testing::kill_child(server_);
    std::remove(token_file_.c_str());
    ::rmdir(dir_.c_str());
  }
  void write_token(const std::string& t) {
    std::ofstream(token_file_, std::ios::binary | std::ios::trunc) << t;
  }
  // The dispatcher with hooks that answer like a place whose one space is kId.
  void dispatcher(std::function<void(DispatcherConfig&)> more = {}) {
    acceptor_ = std::make_unique<Acceptor>([this, more](DispatcherConfig& c) {
      c.list_spaces = [this]() -> Result<std::vector<std::string>> {
        ++listings_;
        return std::vector<std::string>{kId};
      };
      c.connect = [this](const std::string&, std::uint16_t) -> Result<std::vector<std::string>> {
        if (not_running_) return fail(Code::kSpaceNotRunning, "the container is exited");
        ++connects_;
        return std::vector<std::string>{kBin + "/spacectl-bridge", std::to_string(inner_port_)};
      };
      c.read_token = [this](const std::string&) -> Result<std::string> {
        ++token_reads_;
        std::ifstream in(token_file_, std::ios::binary);
        std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!token_well_formed(t)) return fail(Code::kCommandFailed, "read token: not a token");
        return t;
      };
      c.inner_port = static_cast<std::uint16_t>(inner_port_);
      c.activity = [this](const std::string&) { ++activity_; };
      if (more) more(c);
    });
  }
  Answer ask(const std::string& raw, bool head = false) {
    Client c(acceptor_->port());
    EXPECT_TRUE(c.connected());
    c.send(raw);
    return c.read_answer(head);
  }
  std::string path(const std::string& rest) { return "/api/spaces/" + kId + "/" + rest; }
  int logins() {
    const Answer a = ask(testing::get(path("stats")));
    std::string_view n = std::string_view(a.body).substr(std::min<std::size_t>(7, a.body.size()));
    if (!n.empty() && n.back() == '\n') n.remove_suffix(1);
    const std::optional<int> count =
        a.body.rfind("logins ", 0) == 0 ? policy::parse_number<int>(n) : std::nullopt;
    EXPECT_TRUE(count.has_value()) << "stats: " << a.body;
    return count.value_or(-1);
  }

  std::string dir_, token_file_;
  testing::Child server_;
  int inner_port_ = 0;
  std::unique_ptr<Acceptor> acceptor_;
  std::atomic<int> listings_{0}, connects_{0}, token_reads_{0}, activity_{0};
  std::atomic<bool> not_running_{false};
};

TEST_F(DispatcherLoopTest, ForwardsWithTheSpaceSessionAndWithoutTheUsersCredentials) {
  dispatcher();
  const Answer a = ask(testing::get(
      path("echo/x?a=1&oc_url_token=u1&oc_client_token=u2&directory=/spaces/" + kId + "/p"),
      "Cookie: host_session=user-secret\r\nAuthorization: Bearer "
      "user-secret\r\nProxy-Authorization: Basic x\r\n"
      "X-Forwarded-For: 10.0.0.1\r\nForwarded: for=x\r\nOrigin: http://app.test\r\nReferer: "
      "http://app.test/\r\n"
      "Accept-Encoding: gzip\r\nX-Keep: kept\r\n"));
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("GET /api/echo/x?a=1&directory=/spaces/" + kId + "/p\n"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("Cookie: oc_ui_session_" + std::to_string(inner_port_) + "="), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("Host: 127.0.0.1:" + std::to_string(inner_port_) + "\n"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("Accept-Encoding: identity\n"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("X-Keep: kept\n"), std::string::npos) << a.body;
  for (const char* gone :
       {"user-secret", "Proxy-Authorization", "X-Forwarded-For", "Forwarded", "Origin", "Referer",
        "gzip", "oc_url_token", "oc_client_token", "app.test"}) {
    EXPECT_EQ(a.body.find(gone), std::string::npos) << gone << " reached the inside:\n" << a.body;
  }
  EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff");
  EXPECT_GE(activity_.load(), 1);
}

TEST_F(DispatcherLoopTest, UnknownAndMalformedSpaceIdsAreNotFound) {
  dispatcher();
  for (const std::string& t : {std::string("/api/spaces/ffffffffffff/echo"), std::string("/api/spaces/0123456789AB/echo"),
                               std::string("/api/spaces/0123/echo")}) {
    const Answer a = ask(testing::get(t));
    EXPECT_EQ(a.status, 404) << t;
    EXPECT_EQ(code_of(a), "space_not_found") << t;
    EXPECT_EQ(a.header("Content-Type"), "application/json");
  }
  EXPECT_EQ(connects_.load(), 0) << "nothing went inside for an unknown space";
}

TEST_F(DispatcherLoopTest, RouteClassesAndDirectoryGuardStayOnTheHost) {
  dispatcher();
  Answer a = ask(testing::get(path("provider/keys")));
  EXPECT_EQ(a.status, 403);
  EXPECT_EQ(code_of(a), "host_only_route");
  a = ask(testing::get(path("session/s1/move"), "", "POST"));
  EXPECT_EQ(a.status, 403);
  EXPECT_EQ(code_of(a), "refused_across_boundary");
  a = ask(testing::get(path("echo?directory=/spaces/" + kId + "/../ffffffffffff")));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(code_of(a), "directory_outside_space");
  a = ask(testing::get(path("echo"), "X-OpenCode-Directory: %2Fhome%2Fuser\r\n"));
  EXPECT_EQ(code_of(a), "directory_outside_space");
  EXPECT_EQ(connects_.load(), 0);
}

TEST_F(DispatcherLoopTest, AnswerHeadersAreAllowListedAndGetNosniff) {
  dispatcher();
  const Answer a = ask(testing::get(path("headers")));
  ASSERT_EQ(a.status, 200);
  for (const char* never : {"Set-Cookie", "Location", "Clear-Site-Data", "Refresh",
                            "WWW-Authenticate", "X-Custom", "Access-Control-Allow-Origin"}) {
    EXPECT_FALSE(a.has(never)) << never;
  }
  EXPECT_EQ(a.header("ETag"), "\"e1\"");
  EXPECT_EQ(a.header("X-Next-Cursor"), "c2");
  EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff");
}

TEST_F(DispatcherLoopTest, RedirectsAreRefusedAndNotModifiedPasses) {
  dispatcher();
  Answer a = ask(testing::get(path("redirect")));
  EXPECT_EQ(a.status, 502);
  EXPECT_EQ(code_of(a), "space_redirected");
  EXPECT_FALSE(a.has("Location"));
  a = ask(testing::get(path("not-modified")));
  EXPECT_EQ(a.status, 304);
  EXPECT_EQ(a.header("ETag"), "\"e1\"");
}

TEST_F(DispatcherLoopTest, PageRenderingTypesArriveAsTextAndRawFilesAsAttachments) {
  dispatcher();
  for (const char* t : {"text/html", "image%2Fsvg%2Bxml", "application/xhtml%2Bxml", "application/pdf", ""}) {
    const Answer a = ask(testing::get(path(std::string("type?ct=") + t)));
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.header("Content-Type"), "text/plain; charset=utf-8") << t;
  }
  EXPECT_EQ(ask(testing::get(path("type?ct=application/json"))).header("Content-Type"),
            "application/json");
  const Answer raw = ask(testing::get(path("fs/raw?path=a.html")));
  EXPECT_EQ(raw.header("Content-Type"), "application/octet-stream");
  EXPECT_EQ(raw.header("Content-Disposition"), "attachment");
}

TEST_F(DispatcherLoopTest, KeepAliveAndThePoolUseOneLoginAndFewStreams) {
  dispatcher();
  Client c(acceptor_->port());
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(c.send(testing::get(path("echo/" + std::to_string(i)))));
    const Answer a = c.read_answer();
    ASSERT_EQ(a.status, 200) << i;
    EXPECT_EQ(a.header("Connection"), "keep-alive");
  }
  EXPECT_EQ(acceptor_->givebacks_keep.load(), 7);
  EXPECT_EQ(connects_.load(), 1) << "sequential requests reuse one pooled stream";
  EXPECT_EQ(logins(), 1);
}

TEST_F(DispatcherLoopTest, ConcurrentRequestsShareOneLoginAndAtMostEightStreams) {
  dispatcher();
  std::vector<std::future<int>> all;
  for (int i = 0; i < 16; ++i) {
    all.push_back(std::async(std::launch::async, [this] {
      return ask(testing::get(path("sse?events=3&delay_ms=200"))).status;
    }));
  }
  for (auto& f : all) EXPECT_EQ(f.get(), 200);
  EXPECT_LE(connects_.load(), static_cast<int>(kMaxStreamsPerSpace));
  EXPECT_EQ(logins(), 1) << "one login per space at a time";
}

TEST_F(DispatcherLoopTest, AnEndedSessionIsRenewedOnceForABodylessRequest) {
  dispatcher();
  ASSERT_EQ(ask(testing::get(path("expire-sessions"))).status, 200);
  const Answer a = ask(testing::get(path("echo")));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(logins(), 2);
}

TEST_F(DispatcherLoopTest, AnEndedSessionUnderARequestWithABodyAsksForAResend) {
  dispatcher();
  ASSERT_EQ(ask(testing::get(path("expire-sessions"))).status, 200);
  const Answer a = ask("POST " + path("echo") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(code_of(a), "space_session_expired");
}

TEST_F(DispatcherLoopTest, ARotatedTokenIsReadAgainOnceAndAWrongOneFailsTheLogin) {
  dispatcher();
  ASSERT_EQ(ask(testing::get(path("echo"))).status, 200);
  write_token(std::string(43, 'Z'));  // the container restart repair wrote a fresh one
  ASSERT_EQ(ask(testing::get(path("expire-sessions"))).status, 200);
  Answer a = ask(testing::get(path("echo")));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(token_reads_.load(), 2);
}

TEST_F(DispatcherLoopTest, AnUnreadableTokenIsItsOwnCodeAndNeverShown) {
  write_token("short");
  dispatcher();
  const Answer a = ask(testing::get(path("echo")));
  EXPECT_EQ(a.status, 502);
  EXPECT_EQ(code_of(a), "space_token_unreadable");
  EXPECT_EQ(a.body.find("short"), std::string::npos);
  EXPECT_EQ(connects_.load(), 0);
}

TEST_F(DispatcherLoopTest, ALoginRefusedWithAFreshlyReadTokenIsLoginFailed) {
  dispatcher([this](DispatcherConfig& c) {
    c.read_token = [this](const std::string&) -> Result<std::string> {
      ++token_reads_;
      return std::string(43, 'Q');  // well-formed, not the inner server's
    };
  });
  const Answer a = ask(testing::get(path("echo")));
  EXPECT_EQ(a.status, 502);
  EXPECT_EQ(code_of(a), "space_login_failed");
  // A token just read is not read again: only a remembered one is (ARotatedToken... above).
  EXPECT_EQ(token_reads_.load(), 1);
  EXPECT_EQ(a.body.find("QQQQ"), std::string::npos);
}

TEST_F(DispatcherLoopTest, AStoppedSpaceAnswersNotRunning) {
  not_running_ = true;
  dispatcher();
  const Answer a = ask(testing::get(path("echo")));
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(code_of(a), "space_not_running");
}

TEST_F(DispatcherLoopTest, AnInnerServerThatHangsUpGivesOneJsonError) {
  dispatcher();
  const Answer a = ask(testing::get(path("die")));
  EXPECT_EQ(a.status, 502);
  EXPECT_EQ(code_of(a), "space_unreachable");
}

TEST_F(DispatcherLoopTest, Uploads64MiBShaExact) {
  dispatcher();
  const std::string body = pattern(64u << 20);
  Client c(acceptor_->port());
  ASSERT_TRUE(c.send("POST " + path("echo") + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n"));
  std::thread writer([&] { c.send(body); });
  const Answer a = c.read_answer(false, 120000);
  writer.join();
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("body-sha256: " + escape::sha256_hex(body)), std::string::npos) << a.body;
}

TEST_F(DispatcherLoopTest, UploadsChunkedBodiesShaExact) {
  dispatcher();
  const std::string body = pattern(3u << 20);
  std::string raw = "PUT " + path("echo") + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t at = 0; at < body.size(); at += 100000) {
    const std::string part = body.substr(at, 100000);
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    raw += size + part + "\r\n";
  }
  raw += "0\r\n\r\n";
  const Answer a = ask(raw);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("body-sha256: " + escape::sha256_hex(body)), std::string::npos);
}

TEST_F(DispatcherLoopTest, Downloads64MiBShaExactWithLengthAndChunked) {
  dispatcher();
  const std::string expected = escape::sha256_hex(pattern(64u << 20));
  for (const char* route : {"bytes", "chunked"}) {
    const Answer a =
        ask(testing::get(path(std::string(route) + "?n=" + std::to_string(64u << 20))));
    ASSERT_EQ(a.status, 200) << route;
    EXPECT_EQ(a.body.size(), 64u << 20) << route;
    EXPECT_EQ(escape::sha256_hex(a.body), expected) << route;
  }
}

// A slow client makes the dispatcher pause its stream; the pooled stream must read again for
// the next exchange (it stayed paused and the second request hung).
TEST_F(DispatcherLoopTest, AStreamPausedForASlowClientServesTheNextRequest) {
  dispatcher();
  Client c(acceptor_->port(), 4096);
  // Where the answer ends relative to the pause is timing; a few sizes make ending paused likely.
  for (std::size_t round = 0; round < 6; ++round) {
    const std::size_t n = (4u << 20) + round * 200'000 + 7;
    ASSERT_TRUE(c.send(testing::get(path("bytes?n=" + std::to_string(n)))));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the queues fill; the stream pauses
    const Answer big = c.read_answer();
    ASSERT_EQ(big.status, 200);
    EXPECT_EQ(big.body.size(), n);
    ASSERT_TRUE(c.send(testing::get(path("echo/after"))));
    const Answer next = c.read_answer(false, 5000);
    ASSERT_EQ(next.status, 200) << "round " << round << ": the pooled stream stayed paused";
  }
  EXPECT_EQ(connects_.load(), 1);
}

TEST_F(DispatcherLoopTest, EightConcurrentEventStreamsArriveWhole) {
  dispatcher();
  std::vector<std::future<Answer>> all;
  for (int i = 0; i < 8; ++i) {
    all.push_back(std::async(std::launch::async, [this] {
      return ask(testing::get(path("sse?events=20&delay_ms=20")));
    }));
  }
  for (auto& f : all) {
    const Answer a = f.get();
    ASSERT_EQ(a.status, 200);
    EXPECT_EQ(a.header("Content-Type"), "text/event-stream");
    EXPECT_EQ(a.header("Cache-Control"), "no-cache");
    EXPECT_EQ(a.header("X-Accel-Buffering"), "no");
    EXPECT_NE(a.body.find("data: 0\n\n"), std::string::npos);
    EXPECT_NE(a.body.find("data: 19\n\n"), std::string::npos);
  }
}

TEST_F(DispatcherLoopTest, WebSocketEchoRelaysA4MiBFrameByteForByte) {
  dispatcher();
  Client c(acceptor_->port());
  ASSERT_TRUE(c.send(testing::ws_upgrade(path("terminal/ws"))));
  const Answer head = c.read_upgrade();
  ASSERT_EQ(head.status, 101);
  EXPECT_FALSE(head.has("Set-Cookie"));
  EXPECT_FALSE(head.has("X-Inner"));
  EXPECT_EQ(head.header("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // RFC 6455 §1.3's example
  const std::string payload = pattern(4u << 20);
  std::thread writer([&] { c.send(testing::ws_frame(2, payload)); });
  const testing::Frame f = testing::read_frame(c);
  writer.join();
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.opcode, 2);
  EXPECT_EQ(escape::sha256_hex(f.payload), escape::sha256_hex(payload));
}

TEST_F(DispatcherLoopTest, AnInsideThatEndsTheSocketSendsCloseCode1012) {
  dispatcher();
  Client c(acceptor_->port());
  ASSERT_TRUE(c.send(testing::ws_upgrade(path("event/ws"))));
  ASSERT_EQ(c.read_upgrade().status, 101);
  const testing::Frame f = testing::read_frame(c);
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.opcode, 8);
  ASSERT_GE(f.payload.size(), 2u);
  EXPECT_EQ((static_cast<unsigned char>(f.payload[0]) << 8) | static_cast<unsigned char>(f.payload[1]), 1012);
  EXPECT_EQ(f.payload.substr(2), "space_closed");
  EXPECT_TRUE(c.closed_within(10000));
}

// The bridge is killed mid-socket (as when the exec dies or the container stops): the stream
// ends without the bridge's clean exit, so the client learns 1011, not 1012.
TEST_F(DispatcherLoopTest, AnInsideThatGoesAwayMidSocketSendsCloseCode1011) {
  const std::string pid_file = dir_ + "/bridge.pid";
  dispatcher([this, pid_file](DispatcherConfig& c) {
    c.connect = [this, pid_file](const std::string&,
                                 std::uint16_t) -> Result<std::vector<std::string>> {
      ++connects_;
      return std::vector<std::string>{"/bin/sh", "-c",
                                      "echo $$ > " + pid_file + " && exec " + kBin +
                                          "/spacectl-bridge " + std::to_string(inner_port_)};
    };
  });
  Client c(acceptor_->port());
  ASSERT_TRUE(c.send(testing::ws_upgrade(path("terminal/ws"))));
  ASSERT_EQ(c.read_upgrade().status, 101);
  ASSERT_TRUE(c.send(testing::ws_frame(1, "before")));
  const testing::Frame echo = testing::read_frame(c);
  ASSERT_TRUE(echo.ok);
  EXPECT_EQ(echo.payload, "before");
  // The socket's stream is the last one spawned (the login's pooled stream came first).
  std::ifstream in(pid_file);
  int pid = 0;
  in >> pid;
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const testing::Frame f = testing::read_frame(c);
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.opcode, 8);
  ASSERT_GE(f.payload.size(), 2u);
  EXPECT_EQ(
      (static_cast<unsigned char>(f.payload[0]) << 8) | static_cast<unsigned char>(f.payload[1]),
      1011);
  EXPECT_EQ(f.payload.substr(2), "space_unreachable");
  EXPECT_TRUE(c.closed_within(10000));
}

// An inner server that takes the request and never answers: after the deadline the client gets
// one JSON answer with a stable code, its connection closes, and the stream is not pooled again.
TEST_F(DispatcherLoopTest, AnAnswerHeadThatNeverComesIs504AfterTheDeadlineAndBothEndsClose) {
  dispatcher([](DispatcherConfig& c) { c.answer_head_deadline_ms = 1500; });
  EXPECT_EQ(ask(testing::get(path("echo/warm"))).status, 200);  // login and one pooled stream
  const int streams_before = connects_.load();
  Client c(acceptor_->port());
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.send(testing::get(path("hang"))));
  const Answer a = c.read_answer(false, 60000);
  const auto waited = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.status, 504) << a.body;
  EXPECT_EQ(code_of(a), "space_answer_timeout") << a.body;
  EXPECT_EQ(a.header("Content-Type"), "application/json");
  EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff");
  EXPECT_GE(waited, std::chrono::milliseconds(1400));
  EXPECT_TRUE(c.closed_within(10000)) << "the client's connection stayed open";
  // The hanging stream was killed, not pooled: the next request needs a stream of its own.
  EXPECT_EQ(ask(testing::get(path("echo/after"))).status, 200);
  EXPECT_EQ(connects_.load(), streams_before + 1);
}

TEST_F(DispatcherLoopTest, SocketsOpenOnlyOnTheirPathsAndInnerRefusalsPassThrough) {
  dispatcher();
  Client a(acceptor_->port());
  a.send(testing::ws_upgrade(path("session")));
  Answer r = a.read_answer();
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(code_of(r), "space_socket_unknown");
  Client b(acceptor_->port());
  b.send(testing::ws_upgrade(path("provider")));
  EXPECT_EQ(code_of(b.read_answer()), "host_only_route");
  Client d(acceptor_->port());
  d.send(testing::ws_upgrade(path("dev-tunnel")));
  r = d.read_answer();
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(code_of(r), "space_socket_refused");
}

TEST_F(DispatcherLoopTest, TheSeventyThirdSocketOfASpaceIsRefused) {
  dispatcher();
  std::vector<std::unique_ptr<Client>> open;
  for (std::size_t i = 0; i < kMaxSocketsPerSpace; ++i) {
    open.push_back(std::make_unique<Client>(acceptor_->port()));
    ASSERT_TRUE(open.back()->send(testing::ws_upgrade(path("terminal/ws"))));
  }
  for (auto& c : open) ASSERT_EQ(c->read_upgrade().status, 101);
  Client extra(acceptor_->port());
  extra.send(testing::ws_upgrade(path("terminal/ws")));
  const Answer r = extra.read_answer();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(code_of(r), "space_socket_limit");
}

}  // namespace
}  // namespace controller::dispatch
