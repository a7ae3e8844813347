// The window's request-target rule and upstream rules from the outside: what the strict parser
// refuses, what the path rule refuses (RFC 3986 characters, controls in any form), and that none
// of it reaches an upstream. The fixture is in window_fixture.h.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/window_fixture.h"

namespace gk_window_test {
namespace {

TEST_F(WindowTest, TargetBytesOutsidePathAndQueryAreRefusedBeforeTheUpstream) {
  start();
  // Bytes the strict parser takes in a target but RFC 3986 does not allow in a path or query.
  const std::vector<std::string> shapes = {"/v1/a|b", "/v1/{x}", "/v1/a\"b", "/v1/a^b", "/v1/a`b",
                                           "/v1/a<b>", "/v1/a[0]", "/v1\\..\\admin", "/v1/..%09/admin",
                                           "/v1/..%0d", "/v1/%7f"};
  for (const std::string& rest : shapes) {
    const Answer a = send_raw(gk_->window, get(window_path("registry", rest)));
    EXPECT_EQ(a.status, 403) << rest << "\n" << a.raw;
    EXPECT_EQ(a.body, kNoSuchGrant) << rest;
  }
  EXPECT_EQ(plain_->hits.load(), 0);
  // Identical refusals are coalesced into one journal record with a count.
  const auto decisions = window_decisions();
  EXPECT_FALSE(decisions.empty());
  for (const auto& d : decisions) EXPECT_EQ(d, "deny:path-walks-out");
  // Just inside: every RFC 3986 path and query character passes.
  const Answer ok = send_raw(gk_->window, get(window_path("registry", "/a-._~!$&'()*+,;=:@/b?c=/?:@")));
  EXPECT_EQ(ok.status, 200) << ok.raw;
}

TEST_F(WindowTest, RawOverlongDotsAndAHiddenTabNeverReachTheUpstream) {
  start();
  // The loose llhttp took both; the strict one refuses them as unreadable (the bare 400), and the
  // path rule would refuse them too (policy/window_path_test.cc).
  for (const std::string rest : {"/\xc0\xae\xc0\xae/admin", "/v1/..\t/admin", "/v1/a\x80", "/v1/a\fb"}) {
    const Answer a = send_raw(gk_->window, get(window_path("registry", rest)));
    EXPECT_EQ(a.raw, gk_it::k400) << rest;
  }
  EXPECT_EQ(plain_->hits.load(), 0);
  bool noted = false;
  for (const auto& r : gk_->journal()) noted = noted || (r.listener == "window" && r.decision == "deny:unreadable-request");
  EXPECT_TRUE(noted);
}

TEST_F(WindowTest, SpecialUseNamesAreRefusedByNameInTheWindowAndTheCorridor) {
  start();
  grant(R"({"id":"mdns","upstream":"https://printer.local:8443/"})");
  grant(R"({"id":"loopname","upstream":"http://gatekeeper.localhost:8080/"})");
  grant(R"({"id":"cloud","upstream":"https://metadata.google.internal/"})");
  for (const char* id : {"mdns", "loopname", "cloud"}) {
    const Answer a = send_raw(gk_->window, get(window_path(id, "/x")));
    EXPECT_EQ(a.status, 403) << id << "\n" << a.raw;
    EXPECT_EQ(a.body, R"({"error":"refused destination"})") << id;
  }
  EXPECT_EQ(window_decisions(), (std::vector<std::string>(3, "deny:special-use-name")));
  ASSERT_EQ(gk_->request("POST", "/network", R"({"mode":"open","domains":[]})").status, 200);
  for (const char* target : {"foo.localhost:443", "router.home.arpa:443", "x.onion:443"}) {
    const gk_it::Tunnel t = gk_it::open_tunnel(gk_->corridor, target);
    EXPECT_EQ(t.head, gk_it::k403) << target;
    if (t.fd >= 0) close(t.fd);
  }
  std::vector<std::string> corridor;
  for (const auto& r : gk_->journal()) {
    if (r.listener == "corridor") corridor.push_back(r.decision);
  }
  EXPECT_EQ(corridor, (std::vector<std::string>(3, "deny:special-use-name")));
  // The test build keeps .test (the harness's names): the grants above still work.
  EXPECT_EQ(send_raw(gk_->window, get(window_path("registry", "/ok"))).status, 200);
}

TEST_F(WindowTest, OperatorBlockedRangesRefuseTheWindowsUpstreamAndItsKeptConnections) {
  // serve --block / POST /blocked hold for the window as for the corridor: public.test answers
  // P.2, which the table calls public (the test build) but the operator blocked.
  start({"--block", net_->prefix() + "2/32"});
  const std::string refused = R"({"error":"refused destination"})";
  const Answer blocked = send_raw(gk_->window, get(window_path("registry", "/a")));
  EXPECT_EQ(blocked.status, 403) << blocked.raw;
  EXPECT_EQ(blocked.body, refused);
  EXPECT_EQ(window_decisions(), std::vector<std::string>{"deny:blocked-address"});
  EXPECT_EQ(plain_->hits.load(), 0);
  // Lifted: the upstream is reached, and its connection is kept for the next request.
  ASSERT_EQ(gk_->request("POST", "/blocked", R"({"ranges":[]})").status, 200);
  EXPECT_EQ(send_raw(gk_->window, get(window_path("registry", "/b"))).status, 200);
  const int hits = plain_->hits.load();
  EXPECT_EQ(hits, 1);
  // Blocked again: the kept connection to the now blocked address is not reused either.
  ASSERT_EQ(
      gk_->request("POST", "/blocked", R"({"ranges":[")" + net_->prefix() + R"(0/24"]})").status,
      200);
  const Answer again = send_raw(gk_->window, get(window_path("registry", "/c")));
  EXPECT_EQ(again.status, 403) << again.raw;
  EXPECT_EQ(again.body, refused);
  EXPECT_EQ(plain_->hits.load(), hits);
  const auto decisions = window_decisions();
  EXPECT_EQ(std::count(decisions.begin(), decisions.end(), "allow"), 1);
}

TEST_F(WindowTest, WindowAnswersAreClassifiedAndPrivateNetworksNeedTheHostsWord) {
  start();
  // mixed.test answers P.2 and fd00::1 (Unique-Local): an inside answer refuses the name unless
  // the host said unsafe_private_upstream; meta.test answers 169.254.169.254: refused either way.
  grant(R"({"id":"mixed","upstream":"http://mixed.test:8080/npm/"})");
  grant(R"({"id":"mixed-ok","upstream":"http://mixed.test:8080/npm/","unsafe_private_upstream":true})");
  grant(R"({"id":"meta","upstream":"http://meta.test/"})");
  grant(R"({"id":"meta-ok","upstream":"http://meta.test/","unsafe_private_upstream":true})");
  grant(R"({"id":"own","upstream":"http://loop.test:9/"})");
  const Answer mixed = send_raw(gk_->window, get(window_path("mixed", "/x")));
  EXPECT_EQ(mixed.status, 403) << mixed.raw;
  EXPECT_EQ(mixed.body, R"({"error":"refused destination"})");
  const Answer mixed_ok = send_raw(gk_->window, get(window_path("mixed-ok", "/x")));
  EXPECT_EQ(mixed_ok.status, 200) << mixed_ok.raw;
  EXPECT_EQ(mixed_ok.body, "ok /npm/x\n");
  for (const char* id : {"meta", "meta-ok", "own"}) {
    const Answer a = send_raw(gk_->window, get(window_path(id, "/latest/meta-data/")));
    EXPECT_EQ(a.status, 403) << id << "\n" << a.raw;
  }
  // mixed.test refused, mixed.test allowed, meta.test refused twice (one coalesced record), loop.test.
  EXPECT_EQ(window_decisions(), (std::vector<std::string>{"deny:blocked-address", "allow", "deny:blocked-address",
                                                           "deny:blocked-address"}));
  EXPECT_EQ(plain_->hits.load(), 1);
  EXPECT_NE(gk_->stderr_text().find("grant mixed-ok may reach private networks"), std::string::npos);
  EXPECT_EQ(gk_->request("POST", "/grants", R"({"id":"x","upstream":"http://a.test/","unsafe_private_upstream":"yes"})")
                .status,
            400);
}

TEST_F(WindowTest, OnlySafeMethodsAreRetriedOnAFreshConnection) {
  start();
  // Each round: a request that leaves the upstream connection kept, then one the upstream reads
  // and drops without answering. A GET is sent again on a fresh connection (and dropped again);
  // a POST, PUT, DELETE or PATCH reaches the upstream exactly once.
  struct Round {
    const char* method;
    int copies;
  };
  int expected_hits = 0;
  for (const Round& r : {Round{"GET", 2}, Round{"POST", 1}, Round{"PUT", 1}, Round{"DELETE", 1}, Round{"PATCH", 1},
                         Round{"OPTIONS", 2}}) {
    ASSERT_EQ(send_raw(gk_->window, get(window_path("registry", "/keep"))).status, 200);
    ++expected_hits;
    const std::string request = std::string(r.method) + " " + window_path("registry", "/drop") +
                                " HTTP/1.1\r\nHost: g\r\nContent-Length: 0\r\n\r\n";
    const Answer a = send_raw(gk_->window, request);
    EXPECT_EQ(a.status, 502) << r.method << "\n" << a.raw;
    expected_hits += r.copies;
    EXPECT_EQ(plain_->hits.load(), expected_hits) << r.method;
  }
}

TEST_F(WindowTest, RoutingAndForwardingHeadersNeverReachTheUpstream) {
  start();
  const std::string extra =
      "X-Original-URL: /admin\r\nX-Rewrite-URL: /admin\r\nX-HTTP-Method-Override: DELETE\r\n"
      "X-Forwarded-For: 127.0.0.1\r\nX-Forwarded-Host: internal\r\nX-Forwarded-Proto: https\r\n"
      "Forwarded: for=127.0.0.1\r\nX-Real-IP: 127.0.0.1\r\nx-goog-api-key: " + kFakeKey + "\r\nX-Request-Id: r1\r\n";
  const Answer a = send_raw(gk_->window, get(window_path("registry", "/v1/models"), extra));
  EXPECT_EQ(a.status, 200) << a.raw;
  const auto seen = plain_->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].header_names, (std::vector<std::string>{"host", "x-request-id"}));
}

}  // namespace
}  // namespace gk_window_test
