// The window (issue #4): a TLS upstream in the test namespace with a certificate from a test CA
// made here, grants of both styles and an opened domain, every traversal shape, the window key,
// streaming, timeouts, smuggling shapes, certificate names, upstream keep-alive reuse, and client
// keep-alive (many requests on one connection, pipelining, per-request decisions, idle close,
// half-closing clients, eviction at the socket cap).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "tests/integration/harness.h"
#include "tests/integration/http_upstream.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;

constexpr std::uint16_t kTlsPort = 8443;
constexpr std::uint16_t kPlainPort = 8080;
const std::string kKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kBearerSecret = "sk-grant-BEARER-0123456789";
const std::string kApiKeySecret = "sk-grant-XAPIKEY-9876543210";
const std::string kFakeKey = "sk-space-FAKE-key";
const std::string kNoSuchGrant = R"({"error":"no such grant"})";

struct Answer {
  int status = 0;
  std::string head;
  std::string body;
  std::string raw;
};

Answer parse_answer(const std::string& raw) {
  Answer a;
  a.raw = raw;
  if (raw.size() >= 12 && raw.rfind("HTTP/1.1 ", 0) == 0) a.status = std::atoi(raw.c_str() + 9);
  const auto at = raw.find("\r\n\r\n");
  a.head = raw.substr(0, at);
  if (at != std::string::npos) a.body = raw.substr(at + 4);
  return a;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One CRLF-ended line, read byte by byte (nothing after it is consumed).
std::string read_line(int fd, int timeout_ms) {
  std::string line;
  while (line.size() < 4096 && (line.size() < 2 || line.compare(line.size() - 2, 2, "\r\n") != 0)) {
    const std::string c = gk_it::read_until_close(fd, timeout_ms, nullptr, 1);
    if (c.empty()) break;
    line += c;
  }
  return line;
}

// Reads exactly one answer, so a kept-alive connection can carry the next request: the head,
// then a Content-Length body, a chunked body (decoded into `body`; `raw` keeps the bytes), or,
// with neither, everything until the close.
Answer read_answer(int fd, int timeout_ms = 15000) {
  const std::string head = gk_it::read_head(fd, timeout_ms);
  Answer a = parse_answer(head);
  a.body.clear();
  const std::string h = lower(head);
  const auto length_at = h.find("\r\ncontent-length: ");
  if (a.status == 0) return a;
  if (length_at != std::string::npos) {
    const std::size_t n = std::strtoull(h.c_str() + length_at + 18, nullptr, 10);
    a.body = gk_it::read_until_close(fd, timeout_ms, nullptr, n);
    a.raw += a.body;
  } else if (h.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
    for (;;) {
      const std::string size_line = read_line(fd, timeout_ms);
      a.raw += size_line;
      if (size_line.empty()) break;
      const std::size_t n = std::strtoull(size_line.c_str(), nullptr, 16);
      if (n == 0) {
        a.raw += read_line(fd, timeout_ms);  // no trailers: the final CRLF
        break;
      }
      const std::string piece = gk_it::read_until_close(fd, timeout_ms, nullptr, n + 2);
      a.raw += piece;
      a.body += piece.substr(0, n);
    }
  } else {
    a.body = gk_it::read_until_close(fd, timeout_ms);
    a.raw += a.body;
  }
  return a;
}

// True when the peer ends the connection within `timeout_ms` and sends nothing more.
bool closed_by_peer(int fd, int timeout_ms) {
  bool eof = false;
  const std::string more = gk_it::read_until_close(fd, timeout_ms, &eof);
  return eof && more.empty();
}

Answer send_raw(std::uint16_t port, const std::string& request, int timeout_ms = 15000) {
  const int fd = gk_it::connect_tcp("127.0.0.1", port);
  if (fd < 0) return {};
  gk_it::send_all(fd, request);
  const Answer a = read_answer(fd, timeout_ms);
  close(fd);
  return a;
}

std::string get(const std::string& target, const std::string& extra = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: gatekeeper:8080\r\n" + extra + "\r\n";
}

std::string window_path(const std::string& grant, const std::string& rest) {
  return "/k/" + kKey + "/model/" + grant + rest;
}

class WindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_REQUIRE(gk_test::can_use_network_namespaces(), "root and ip netns are needed for the test network");
    if (IsSkipped() || HasFatalFailure()) return;
    net_ = std::make_unique<gk_it::TestNet>();
    ASSERT_TRUE(net_->ok()) << net_->error;
    char dir_template[] = "/tmp/gk-window-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    chmod(dir_.c_str(), 0755);
    pki_ = gk_it::make_test_pki(dir_, {"public.test"});
    ASSERT_TRUE(pki_.ok);
    const int tls_fd = net_->listen_in_namespace(kTlsPort);
    const int plain_fd = net_->listen_in_namespace(kPlainPort);
    ASSERT_GE(tls_fd, 0);
    ASSERT_GE(plain_fd, 0);
    tls_ = std::make_unique<gk_it::HttpUpstream>(tls_fd, &pki_);
    plain_ = std::make_unique<gk_it::HttpUpstream>(plain_fd, nullptr);
  }
  void TearDown() override {
    gk_.reset();
    tls_.reset();
    plain_.reset();
    if (!dir_.empty()) { std::error_code ignored; std::filesystem::remove_all(dir_, ignored); }
  }

  void start(std::vector<std::string> extra = {}, bool set_key = true) {
    std::vector<std::string> args = {"--dns-server", net_->dns(), "--ca-file", pki_.ca_file};
    for (auto& e : extra) args.push_back(std::move(e));
    gk_ = std::make_unique<Gatekeeper>(args);
    ASSERT_TRUE(gk_->ready()) << gk_->ready_line << gk_->stderr_text();
    if (set_key) {
      ASSERT_EQ(gk_->request("POST", "/window-key", R"({"key":")" + kKey + R"("})").status, 200);
    }
    grant(R"({"id":"bearer","upstream":"https://public.test:8443/v1/","header":"authorization","secret":")" +
          kBearerSecret + R"("})");
    grant(R"({"id":"anthropic","upstream":"https://public.test:8443/","header":"x-api-key","secret":")" +
          kApiKeySecret + R"("})");
    grant(R"({"id":"registry","upstream":"http://public.test:8080/npm/"})");
  }
  void grant(const std::string& body) {
    const auto a = gk_->request("POST", "/grants", body);
    ASSERT_EQ(a.status, 200) << a.body;
  }
  std::vector<std::string> window_decisions() {
    std::vector<std::string> out;
    for (const auto& r : gk_->journal()) {
      if (r.listener == "window") out.push_back(r.decision);
    }
    return out;
  }

  std::unique_ptr<gk_it::TestNet> net_;
  std::string dir_;
  gk_it::TestPki pki_;
  std::unique_ptr<gk_it::HttpUpstream> tls_;
  std::unique_ptr<gk_it::HttpUpstream> plain_;
  std::unique_ptr<Gatekeeper> gk_;
};

TEST_F(WindowTest, InjectsTheGrantSecretAndNeverForwardsTheSpaceCredentials) {
  start();
  const std::string fakes = "Authorization: Bearer " + kFakeKey + "\r\nX-Api-Key: " + kFakeKey +
                            "\r\nCookie: session=" + kFakeKey + "\r\nProxy-Authorization: " + kFakeKey +
                            "\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n";
  const Answer bearer = send_raw(gk_->window, get(window_path("bearer", "/messages?stream=false"), fakes));
  EXPECT_EQ(bearer.status, 200) << bearer.raw;
  EXPECT_EQ(bearer.body, "ok /v1/messages?stream=false\n");
  // The client asked for keep-alive: the window's own answer says so; the upstream's hop-by-hop
  // `Connection: keep-alive` does not pass.
  EXPECT_NE(bearer.head.find("\r\nKeep-Alive: timeout=5"), std::string::npos) << bearer.head;
  EXPECT_EQ(bearer.head.find("Connection:"), std::string::npos) << bearer.head;
  const Answer key = send_raw(gk_->window, get(window_path("anthropic", "/v1/messages"), fakes));
  EXPECT_EQ(key.status, 200) << key.raw;
  EXPECT_EQ(key.body, "ok /v1/messages\n");
  const auto seen = tls_->requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].host, "public.test:8443");
  EXPECT_EQ(seen[0].credential_sha256.size(), 1u);
  EXPECT_EQ(seen[0].credential_sha256.at("authorization"), gk_it::sha256_hex("Bearer " + kBearerSecret));
  EXPECT_EQ(seen[1].credential_sha256.size(), 1u);
  EXPECT_EQ(seen[1].credential_sha256.at("x-api-key"), gk_it::sha256_hex(kApiKeySecret));
  const std::set<std::string> fake_hashes = {gk_it::sha256_hex(kFakeKey), gk_it::sha256_hex("Bearer " + kFakeKey),
                                             gk_it::sha256_hex("session=" + kFakeKey)};
  for (const auto& r : seen) {
    for (const auto& [name, hash] : r.credential_sha256) EXPECT_EQ(fake_hashes.count(hash), 0u) << name;
    for (const auto& name : r.header_names) {
      EXPECT_NE(name, "cookie");
      EXPECT_NE(name, "x-hop");
      EXPECT_NE(name, "connection");
    }
  }
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"allow", "allow"}));
  // The secret is in no answer, no journal, no policy, no health, no metrics.
  for (const char* path : {"/policy", "/journal", "/health", "/metrics"}) {
    const std::string body = gk_->request("GET", path).body;
    EXPECT_EQ(body.find("sk-grant"), std::string::npos) << path;
    EXPECT_EQ(body.find(kKey), std::string::npos) << path;
  }
  EXPECT_EQ(bearer.raw.find("sk-grant"), std::string::npos);
  EXPECT_EQ(gk_->stderr_text().find("sk-grant"), std::string::npos);
}

TEST_F(WindowTest, OpenedDomainGrantForwardsWithoutAnyCredential) {
  start();
  const Answer a = send_raw(gk_->window, get(window_path("registry", "/-/package/left-pad?x=1"),
                                             "Authorization: Bearer " + kFakeKey + "\r\nX-Api-Key: k\r\n"));
  EXPECT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body, "ok /npm/-/package/left-pad?x=1\n");
  const auto seen = plain_->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].credential_sha256.empty());
  EXPECT_EQ(seen[0].host, "public.test:8080");
}

TEST_F(WindowTest, ScopedNpmPathsAndOtherAllowedShapesPass) {
  start();
  for (const std::string rest : {"/@scope%2fname/-/name-1.0.0.tgz", "/@types%2Fnode", "/a..b/c", "/...",
                                 "/messages?q=hello%20world", "/owner/repo.git/info/refs?service=git-upload-pack", ""}) {
    const Answer a = send_raw(gk_->window, get(window_path("registry", rest)));
    EXPECT_EQ(a.status, 200) << rest << "\n" << a.raw;
    EXPECT_EQ(a.body, "ok /npm" + rest + "\n") << rest;
  }
}

TEST_F(WindowTest, EveryTraversalShapeIsRefusedBeforeTheUpstream) {
  start();
  std::vector<std::string> shapes = {
      "/../admin", "/%2e%2e/admin", "/..%2fadmin", "/.%2e/admin", "/x/..%5cadmin", "/..;/admin",
      "/%252e%252e/admin", "/%25252e%25252e/admin", "/%2525252e%2525252e/admin", "/%2e%2e%2fadmin",
      "/v1/..", "/v1/..?x=1", "/%zz", "/v1/../../admin", "/..",
      // ours: backslash, semicolon, %00, overlong UTF-8 of '.', '/' (undecodable → refused)
      "/..\\admin", "/x/..;jsessionid=1/admin", "/a/%00/../b", "/%00", "/v1/..%00", "/x%2500", "/%c0%ae%c0%ae/admin", "/..%c0%afadmin",
      "/%2E%2E/admin", "/..%2Fadmin"};
  // '.' percent-encoded 1 to 6 times: %2e, %252e, %25252e, ...
  for (int times = 1; times <= 6; ++times) {
    std::string dot = "%";
    for (int i = 1; i < times; ++i) dot += "25";
    dot += "2e";
    shapes.push_back("/" + dot + dot + "/admin");
    shapes.push_back("/x/" + dot + "." + "/admin");
  }
  for (const std::string& rest : shapes) {
    for (const char* grant : {"registry", "bearer"}) {
      const Answer a = send_raw(gk_->window, get(window_path(grant, rest)));
      EXPECT_EQ(a.status, 403) << rest;
      EXPECT_EQ(a.body, kNoSuchGrant) << rest;
    }
  }
  EXPECT_EQ(tls_->hits.load() + plain_->hits.load(), 0);
  const auto decisions = window_decisions();
  EXPECT_EQ(decisions.size(), shapes.size() * 2);
  for (const auto& d : decisions) EXPECT_EQ(d, "deny:path-walks-out");
  for (const auto& r : gk_->journal()) {
    if (r.listener == "window") {
      EXPECT_EQ(r.host, "grant-path");
    }
  }
}

TEST_F(WindowTest, MissingOrWrongWindowKeyIsRefusedLikeAnUnknownGrant) {
  start({}, false);
  // No key set yet: even the right-looking key is refused.
  const Answer before = send_raw(gk_->window, get(window_path("registry", "/x")));
  EXPECT_EQ(before.status, 403);
  EXPECT_EQ(before.body, kNoSuchGrant);
  ASSERT_EQ(gk_->request("POST", "/window-key", R"({"key":"short"})").body,
            R"({"error":"the window key is 64 hex digits"})");
  ASSERT_EQ(gk_->request("POST", "/window-key", R"({"key":")" + kKey + R"("})").status, 200);
  std::string wrong = kKey;
  wrong[63] = 'e';
  const Answer unknown = send_raw(gk_->window, get(window_path("no-such", "/x")));
  for (const std::string& target : std::vector<std::string>{"/model/registry/x", "/k/" + wrong + "/model/registry/x",
                                    "/k/" + kKey.substr(0, 63) + "/model/registry/x", "/k//model/registry/x", "/",
                                    "/k/" + kKey + "0/model/registry/x"}) {
    const Answer a = send_raw(gk_->window, get(target));
    EXPECT_EQ(a.raw, unknown.raw) << target;  // byte-identical to an unknown grant
  }
  EXPECT_EQ(plain_->hits.load(), 0);
  const auto decisions = window_decisions();
  ASSERT_EQ(decisions.size(), 8u);
  EXPECT_EQ(decisions[0], "deny:bad-window-key");
  EXPECT_EQ(decisions[1], "deny:no-grant");
  for (std::size_t i = 2; i < decisions.size(); ++i) EXPECT_EQ(decisions[i], "deny:bad-window-key");
  const Answer ok = send_raw(gk_->window, get(window_path("registry", "/x")));
  EXPECT_EQ(ok.status, 200);
}

TEST_F(WindowTest, ServerSentEventsPassChunkByChunk) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  gk_it::send_all(fd, get(window_path("anthropic", "/v1/sse"), "Connection: close\r\n"));
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (seen.find("data: one") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    seen += gk_it::read_until_close(fd, 200, nullptr, 1);
  }
  EXPECT_NE(seen.find("data: one"), std::string::npos) << "chunk 1 did not arrive before chunk 2 was sent";
  EXPECT_EQ(seen.find("data: two"), std::string::npos);
  tls_->release_sse();
  seen += gk_it::read_until_close(fd, 5000);
  close(fd);
  EXPECT_TRUE(tls_->sse_released_in_time.load());
  EXPECT_NE(seen.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(seen.find("data: two"), std::string::npos);
  EXPECT_NE(seen.find("\r\n0\r\n\r\n"), std::string::npos);
}

TEST_F(WindowTest, SixtyFourHungRequestsAllRecoverWith504AndTheWindowServesAgain) {
  start({"--idle-seconds", "2"});
  std::vector<int> fds;
  for (int i = 0; i < 64; ++i) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    gk_it::send_all(fd, get(window_path("anthropic", "/hang")));
    fds.push_back(fd);
  }
  int timeouts = 0;
  for (int fd : fds) {
    const Answer a = parse_answer(gk_it::read_until_close(fd, 15000));
    close(fd);
    if (a.status == 504 && a.body == R"({"error":"the upstream did not answer in time"})") ++timeouts;
  }
  EXPECT_EQ(timeouts, 64);
  const auto decisions = window_decisions();
  EXPECT_EQ(std::count(decisions.begin(), decisions.end(), "failed:timeout"), 64);
  EXPECT_EQ(std::count(decisions.begin(), decisions.end(), "allow"), 64);
  const Answer again = send_raw(gk_->window, get(window_path("anthropic", "/after")));
  EXPECT_EQ(again.status, 200) << again.raw;
}

TEST_F(WindowTest, SlowUploadIsNotCutWhileBytesKeepArriving) {
  start({"--idle-seconds", "1"});
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  const std::string piece(1000, 'u');
  gk_it::send_all(fd, "POST " + window_path("anthropic", "/upload") +
                          " HTTP/1.1\r\nHost: g\r\nContent-Length: " + std::to_string(piece.size() * 6) + "\r\n\r\n");
  std::string body;
  for (int i = 0; i < 6; ++i) {
    usleep(500000);  // 3 s in all, three times the idle limit
    gk_it::send_all(fd, piece);
    body += piece;
  }
  const Answer a = read_answer(fd, 10000);
  close(fd);
  EXPECT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body, gk_it::sha256_hex(body) + "\n");
}

TEST_F(WindowTest, ChunkedUploadIsReframedAndArrivesWhole) {
  start();
  const Answer a = send_raw(gk_->window, "POST " + window_path("registry", "/upload") +
                                             " HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: chunked\r\n\r\n"
                                             "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
  EXPECT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body, gk_it::sha256_hex("hello world") + "\n");
}

TEST_F(WindowTest, RequestSmugglingShapesAreRefused) {
  start();
  const std::string target = window_path("registry", "/upload");
  const std::vector<std::string> shapes = {
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
      "GET " + target + " HTTP/1.1\r\nHost: g\r\nX-Folded: a\r\n b\r\n\r\n",
      "GET " + target + " HTTP/1.1\r\nHost: g\r\nX-Folded: a\r\n\tb\r\n\r\n",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: gzip\r\n\r\n",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
      "POST " + target + " HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST " + target + " HTTP/1.0\r\nHost: g\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      // An empty field name (llhttp 8.1 takes it; found by fuzz_window_request).
      "GET " + target + " HTTP/1.1\r\nHost: g\r\n:Authorization: Bearer fake\r\n\r\n",
  };
  for (const std::string& shape : shapes) {
    const Answer a = send_raw(gk_->window, shape);
    EXPECT_EQ(a.raw, gk_it::k400) << shape;
  }
  EXPECT_EQ(plain_->hits.load(), 0);
  const auto decisions = window_decisions();
  EXPECT_EQ(decisions.size(), shapes.size());
  for (const auto& d : decisions) EXPECT_EQ(d, "deny:malformed");
}

TEST_F(WindowTest, CertificateForAnotherNameIsRefused) {
  start();
  grant(R"({"id":"wrong-name","upstream":"https://mixed.test:8443/","header":"x-api-key","secret":"sk-grant-x"})");
  const Answer a = send_raw(gk_->window, get(window_path("wrong-name", "/v1/messages")));
  EXPECT_EQ(a.status, 502) << a.raw;
  EXPECT_EQ(a.body, R"({"error":"the upstream did not answer"})");
  EXPECT_EQ(tls_->hits.load(), 0);
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"allow", "failed:tls-certificate"}));
}

TEST_F(WindowTest, KeepAliveReusesOneUpstreamConnection) {
  start();
  for (int i = 0; i < 20; ++i) {
    const Answer a = send_raw(gk_->window, get(window_path("anthropic", "/v1/n" + std::to_string(i))));
    ASSERT_EQ(a.status, 200) << a.raw;
  }
  EXPECT_EQ(tls_->hits.load(), 20);
  EXPECT_EQ(tls_->connections.load(), 1);
}

TEST_F(WindowTest, SixteenMebibyteTlsDownloadIsByteExact) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  gk_it::send_all(fd, get(window_path("anthropic", "/big")));
  const std::string head = gk_it::read_head(fd, 10000);
  EXPECT_NE(head.find("Content-Length: 16777216\r\n"), std::string::npos) << head;
  const std::string body = gk_it::read_until_close(fd, 60000, nullptr, 16u << 20);
  close(fd);
  ASSERT_EQ(body.size(), 16u << 20);
  std::string expected(body.size(), '\0');
  gk_it::fill_pattern(7, 0, expected.data(), expected.size());
  EXPECT_TRUE(body == expected);
}

TEST_F(WindowTest, SigtermWithPooledAndHungUpstreamsLeavesNoHandleOpen) {
  start();
  ASSERT_EQ(send_raw(gk_->window, get(window_path("anthropic", "/v1/pooled"))).status, 200);
  const int hung = gk_it::connect_tcp("127.0.0.1", gk_->window);
  gk_it::send_all(hung, get(window_path("registry", "/hang")));
  for (int i = 0; i < 100 && plain_->hits.load() == 0; ++i) usleep(20000);
  EXPECT_EQ(gk_->terminate(), 0) << gk_->stderr_text();
  close(hung);
}

TEST_F(WindowTest, OwnListenerAlwaysRefusedAndUnresolvedUpstreams) {
  start();
  grant(R"({"id":"self","upstream":"http://loop.test:)" + std::to_string(gk_->window) + R"(/"})");
  grant(R"({"id":"oai","upstream":"https://auth.openai.com/"})");
  grant(R"({"id":"nx","upstream":"https://nx.test/"})");
  const Answer self = send_raw(gk_->window, get(window_path("self", "/x")));
  EXPECT_EQ(self.status, 403);
  EXPECT_EQ(self.body, R"({"error":"refused destination"})");
  const Answer oai = send_raw(gk_->window, get(window_path("oai", "/x")));
  EXPECT_EQ(oai.status, 403);
  EXPECT_EQ(oai.body, R"({"error":"refused destination"})");
  const Answer nx = send_raw(gk_->window, get(window_path("nx", "/x")));
  EXPECT_EQ(nx.status, 502);
  EXPECT_EQ(nx.body, R"({"error":"the upstream of this grant does not resolve"})");
  EXPECT_EQ(window_decisions(),
            (std::vector<std::string>{"deny:own-listener", "deny:always-refused", "deny:unresolved:ENOTFOUND"}));
}

TEST_F(WindowTest, AReplacedGrantNeverRidesTheOldGrantsKeptConnection) {
  start();
  ASSERT_EQ(send_raw(gk_->window, get(window_path("anthropic", "/v1/first"))).status, 200);
  // Same id, same upstream, a new secret: the kept connection serves, with the new secret.
  grant(R"({"id":"anthropic","upstream":"https://public.test:8443/","header":"x-api-key","secret":"sk-grant-NEW-1"})");
  ASSERT_EQ(send_raw(gk_->window, get(window_path("anthropic", "/v1/second"))).status, 200);
  EXPECT_EQ(tls_->connections.load(), 1);
  const auto seen = tls_->requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].credential_sha256.at("x-api-key"), gk_it::sha256_hex("sk-grant-NEW-1"));
  // Same id, another upstream (whose certificate does not name it): a kept connection to the old
  // upstream must not carry the request; a new one is dialled and its certificate refused.
  grant(R"({"id":"anthropic","upstream":"https://mixed.test:8443/","header":"x-api-key","secret":"sk-grant-NEW-2"})");
  const Answer moved = send_raw(gk_->window, get(window_path("anthropic", "/v1/third")));
  EXPECT_EQ(moved.status, 502) << moved.raw;
  EXPECT_EQ(tls_->hits.load(), 2);
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"allow", "allow", "allow", "failed:tls-certificate"}));
}

// --- client keep-alive (RFC 9112 §9.3) ---

// The value of one /metrics line ("name{labels} value"); -1 when absent.
long long metric(Gatekeeper& gk, const std::string& name_and_labels) {
  const std::string text = gk.request("GET", "/metrics").body;
  const std::string needle = "\n" + name_and_labels + " ";
  const auto at = ("\n" + text).find(needle);
  if (at == std::string::npos) return -1;
  return std::atoll(text.c_str() + at + needle.size() - 1);
}

TEST_F(WindowTest, KeptAliveClientSendsTwentyRequestsOnOneConnection) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(gk_it::send_all(fd, get(window_path("anthropic", "/v1/k" + std::to_string(i)))));
    const Answer a = read_answer(fd);
    ASSERT_EQ(a.status, 200) << i << "\n" << a.raw;
    EXPECT_EQ(a.body, "ok /v1/k" + std::to_string(i) + "\n");
    EXPECT_NE(a.head.find("\r\nKeep-Alive: timeout=5"), std::string::npos) << a.head;
  }
  close(fd);
  EXPECT_EQ(tls_->hits.load(), 20);
  EXPECT_EQ(tls_->connections.load(), 1);
  EXPECT_EQ(metric(*gk_, R"(gatekeeper_connections_accepted_total{listener="window"})"), 1);
  EXPECT_EQ(window_decisions(), std::vector<std::string>(20, "allow"));  // each request decided
}

TEST_F(WindowTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  // Three requests in one write: the second has a body, the third asks for the close.
  ASSERT_TRUE(gk_it::send_all(fd, get(window_path("anthropic", "/v1/p1")) + "POST " + window_path("registry", "/upload") +
                                      " HTTP/1.1\r\nHost: g\r\nContent-Length: 5\r\n\r\nhello" +
                                      get(window_path("bearer", "/p3"), "Connection: close\r\n")));
  const Answer first = read_answer(fd);
  const Answer second = read_answer(fd);
  const Answer third = read_answer(fd);
  EXPECT_EQ(first.status, 200) << first.raw;
  EXPECT_EQ(first.body, "ok /v1/p1\n");
  EXPECT_EQ(second.status, 200) << second.raw;
  EXPECT_EQ(second.body, gk_it::sha256_hex("hello") + "\n");
  EXPECT_EQ(third.status, 200) << third.raw;
  EXPECT_EQ(third.body, "ok /v1/p3\n");
  EXPECT_NE(third.head.find("\r\nConnection: close"), std::string::npos) << third.head;
  EXPECT_TRUE(closed_by_peer(fd, 3000));
  close(fd);
  EXPECT_EQ(window_decisions(), std::vector<std::string>(3, "allow"));
}

TEST_F(WindowTest, EachKeptAliveRequestIsDecidedAfreshAndARefusalEndsTheConnection) {
  start();
  for (const std::string& refused : {window_path("registry", "/../admin"), "/k/" + std::string(64, 'f') + "/model/registry/x",
                                     window_path("no-such", "/x")}) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(gk_it::send_all(fd, get(window_path("registry", "/ok"))));
    EXPECT_EQ(read_answer(fd).status, 200);
    ASSERT_TRUE(gk_it::send_all(fd, get(refused)));
    const Answer a = read_answer(fd);
    EXPECT_EQ(a.status, 403) << refused;
    EXPECT_EQ(a.body, kNoSuchGrant) << refused;
    EXPECT_TRUE(closed_by_peer(fd, 3000)) << refused;
    close(fd);
  }
  EXPECT_EQ(plain_->hits.load(), 3);  // only the three allowed requests reached the upstream
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"allow", "deny:path-walks-out", "allow", "deny:bad-window-key",
                                                          "allow", "deny:no-grant"}));
}

TEST_F(WindowTest, IdleKeptAliveConnectionIsClosedQuietlyAfterFiveSeconds) {
  start();
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(gk_it::send_all(fd, get(window_path("registry", "/x"))));
  ASSERT_EQ(read_answer(fd).status, 200);
  const auto answered = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed_by_peer(fd, 9000));  // a FIN and no byte: no 400 for a request never sent
  const auto waited = std::chrono::steady_clock::now() - answered;
  close(fd);
  EXPECT_GE(waited, std::chrono::milliseconds(4500));
  EXPECT_EQ(window_decisions(), std::vector<std::string>{"allow"});  // no deny:unreadable-request
}

TEST_F(WindowTest, Http10ConnectionCloseAndCloseDelimitedAnswersEndTheConnection) {
  start();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"GET " + window_path("registry", "/a") + " HTTP/1.0\r\nHost: g\r\n\r\n", "ok /npm/a\n"},
      {"GET " + window_path("registry", "/a") + " HTTP/1.0\r\nHost: g\r\nConnection: keep-alive\r\n\r\n", "ok /npm/a\n"},
      {get(window_path("registry", "/b"), "Connection: close\r\n"), "ok /npm/b\n"},
      {get(window_path("registry", "/eof")), "until the close\n"},
  };
  for (const auto& [request, body] : cases) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(gk_it::send_all(fd, request));
    const Answer a = read_answer(fd);
    EXPECT_EQ(a.status, 200) << request << a.raw;
    EXPECT_EQ(a.body, body) << request;
    EXPECT_NE(a.head.find("\r\nConnection: close"), std::string::npos) << request << a.head;
    EXPECT_TRUE(closed_by_peer(fd, 3000)) << request;
    close(fd);
  }
}

TEST_F(WindowTest, ClientThatHalfClosesAfterItsRequestStillGetsTheAnswer) {
  start();
  // `nc` and shutdown(SHUT_WR) clients: the FIN can arrive while the window resolves, waits for
  // the pool or connects; each of those states must still answer a whole request.
  for (int i = 0; i < 20; ++i) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    const bool with_body = i % 2 == 1;
    const std::string request = with_body ? "POST " + window_path("registry", "/upload") +
                                                " HTTP/1.1\r\nHost: g\r\nContent-Length: 4\r\n\r\nbody"
                                          : get(window_path(i % 4 == 0 ? "registry" : "anthropic", "/half"));
    ASSERT_TRUE(gk_it::send_all(fd, request));
    shutdown(fd, SHUT_WR);
    const Answer a = read_answer(fd);
    EXPECT_EQ(a.status, 200) << i << "\n" << a.raw;
    EXPECT_EQ(a.body, with_body ? gk_it::sha256_hex("body") + "\n" : (i % 4 == 0 ? "ok /npm/half\n" : "ok /half\n")) << i;
    // The head may have gone out before the FIN was read (then it offered keep-alive): either
    // way the window ends the connection after the answer.
    EXPECT_TRUE(closed_by_peer(fd, 3000)) << i;
    close(fd);
  }
  // A body cut short by the FIN is an unreadable request: the bare 400, never a 504 much later.
  const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(gk_it::send_all(fd, "POST " + window_path("registry", "/upload") +
                                      " HTTP/1.1\r\nHost: g\r\nContent-Length: 10\r\n\r\nfour"));
  shutdown(fd, SHUT_WR);
  const auto sent = std::chrono::steady_clock::now();
  EXPECT_EQ(gk_it::read_until_close(fd, 10000), gk_it::k400);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(5));
  close(fd);
}

TEST_F(WindowTest, AtTheSocketCapTheOldestIdleConnectionMakesRoom) {
  start({"--max-window-sockets", "4"});
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->window);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(gk_it::send_all(fd, get(window_path("registry", "/idle" + std::to_string(i)))));
    ASSERT_EQ(read_answer(fd).status, 200) << i;
    fds.push_back(fd);
    usleep(20000);  // a clear order of idleness
  }
  // All four sockets are idle between requests: a fifth client is served, the oldest idle goes.
  const Answer fifth = send_raw(gk_->window, get(window_path("registry", "/fifth")));
  EXPECT_EQ(fifth.status, 200) << fifth.raw;
  EXPECT_TRUE(closed_by_peer(fds[0], 3000));
  for (int i = 1; i < 4; ++i) {
    ASSERT_TRUE(gk_it::send_all(fds[i], get(window_path("registry", "/again"))));
    EXPECT_EQ(read_answer(fds[i]).status, 200) << i;
  }
  for (int fd : fds) close(fd);
  EXPECT_EQ(metric(*gk_, R"(gatekeeper_connections_over_cap_total{listener="window"})"), 0);
}

}  // namespace
