// The window: a TLS upstream in the test namespace with a certificate from a test CA
// made here, grants of both styles and an opened domain, every traversal shape, the window key,
// streaming, timeouts, smuggling shapes, certificate names and upstream keep-alive reuse. Client
// keep-alive is in window_keepalive_test.cc; the fixture in window_fixture.h.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/http_upstream.h"
#include "tests/integration/window_fixture.h"

namespace gk_window_test {
namespace {

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
    // An absence means something only in an answer that came: 200 with a body first.
    const auto answer = gk_->request("GET", path);
    ASSERT_EQ(answer.status, 200) << path;
    ASSERT_FALSE(answer.body.empty()) << path;
    EXPECT_EQ(answer.body.find("sk-grant"), std::string::npos) << path;
    EXPECT_EQ(answer.body.find(kKey), std::string::npos) << path;
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
  long refusals = 0;  // identical refusals are one journal record with its count
  for (const auto& r : gk_->journal()) {
    if (r.listener == "window") {
      EXPECT_EQ(r.host, "grant-path");
      EXPECT_EQ(r.decision, "deny:path-walks-out");
      refusals += r.count;
    }
  }
  EXPECT_EQ(refusals, static_cast<long>(shapes.size() * 2));
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
  ASSERT_EQ(decisions.size(), 2u);  // identical refusals are one journal record with its count
  EXPECT_EQ(decisions[0], "deny:bad-window-key");
  EXPECT_EQ(decisions[1], "deny:no-grant");
  EXPECT_EQ(gk_->journal()[0].count, 7);
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
  long refusals = 0;  // identical refusals are one journal record with its count
  for (const auto& r : gk_->journal()) {
    if (r.listener == "window") {
      EXPECT_EQ(r.decision, "deny:malformed");
      refusals += r.count;
    }
  }
  EXPECT_EQ(refusals, static_cast<long>(shapes.size()));
}

TEST_F(WindowTest, CertificateForAnotherNameIsRefused) {
  start();
  grant(R"({"id":"wrong-name","upstream":"https://alias.test:8443/","header":"x-api-key","secret":"sk-grant-x"})");
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
  grant(R"({"id":"anthropic","upstream":"https://alias.test:8443/","header":"x-api-key","secret":"sk-grant-NEW-2"})");
  const Answer moved = send_raw(gk_->window, get(window_path("anthropic", "/v1/third")));
  EXPECT_EQ(moved.status, 502) << moved.raw;
  EXPECT_EQ(tls_->hits.load(), 2);
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"allow", "allow", "allow", "failed:tls-certificate"}));
}

}  // namespace
}  // namespace gk_window_test
