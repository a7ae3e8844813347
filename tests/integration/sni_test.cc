// The tunnel's first flight, end to end: after the 200 the corridor relays nothing until the
// client's ClientHello names the approved server. A real TLS client (BoringSSL) with the right and
// a wrong server name, a hello cut into records and TCP segments, bytes that are not TLS, an
// oversize record, no server name, Encrypted Client Hello, the deadline. Every refusal: the space
// saw the 200 and then the close, the journal has the word and the CONNECT name (never the other
// server name), and the upstream received no byte.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/integration/harness.h"
#include "tests/integration/http_upstream.h"
#include "tests/support/environment.h"
#include "tests/support/tls_hello.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

class SniTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
               "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
    net = std::make_unique<TestNet>();
    ASSERT_TRUE(net->ok()) << net->error;
    gk = std::make_unique<Gatekeeper>(std::vector<std::string>{"--dns-server", net->dns()});
    ASSERT_TRUE(gk->ready()) << gk->ready_line << gk->stderr_text();
  }
  void TearDown() override {
    gk.reset();
    tls_upstream.reset();
    if (!dir.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  // A TLS HTTP upstream for tls.test on P.4:443 whose certificate names tls.test.
  void start_tls_upstream() {
    char dir_template[] = "/tmp/gk-sni-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir = dir_template;
    chmod(dir.c_str(), 0755);
    pki = gk_it::make_test_pki(dir, {"tls.test", "other.test"});
    ASSERT_TRUE(pki.ok);
    const int fd = net->listen_in_namespace(443, 4);
    ASSERT_GE(fd, 0);
    tls_upstream = std::make_unique<gk_it::HttpUpstream>(fd, &pki);
  }
  // The bytes the client reads after the head until the close.
  std::string after_head(gk_it::Tunnel& t) {
    bool eof = false;
    std::string rest = gk_it::read_until_close(t.fd, 15000, &eof);
    EXPECT_TRUE(eof) << "the refused tunnel must be closed";
    close(t.fd);
    return rest;
  }
  // The last journal record (decision and host).
  gk_it::Gatekeeper::Record last() {
    auto j = gk->journal();
    return j.empty() ? gk_it::Gatekeeper::Record{} : j.back();
  }
  // No byte reached the raw upstream: every session it started ended without a first record.
  void expect_nothing_went_up() {
    for (int i = 0; i < 50 && net->sessions_done.load() < net->sessions_started.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(net->sessions_done.load(), net->sessions_started.load());
    EXPECT_EQ(net->first_records.load(), 0) << "a byte went up before the check";
  }
  void expect_refused(const std::string& target, const std::string& after, const std::string& word) {
    auto t = gk_it::open_raw_tunnel(gk->corridor, target, after);
    ASSERT_EQ(t.head, gk_it::k200);
    EXPECT_EQ(after_head(t), "");
    const auto record = last();
    EXPECT_EQ(record.decision, word);
    EXPECT_EQ(record.host, gk_it::server_name_of(target));
    expect_nothing_went_up();
  }

  std::unique_ptr<TestNet> net;
  std::unique_ptr<Gatekeeper> gk;
  std::string dir;
  gk_it::TestPki pki;
  std::unique_ptr<gk_it::HttpUpstream> tls_upstream;
};

// TLS through a tunnel with BoringSSL: handshake (certificate checked for `server_name`), one GET.
// Returns the answer, or "" when the handshake failed.
std::string tls_get(int fd, const std::string& ca_file, const std::string& server_name) {
  bssl::UniquePtr<SSL_CTX> ctx(SSL_CTX_new(TLS_method()));
  if (!ctx || SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr) != 1) return "";
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  bssl::UniquePtr<SSL> ssl(SSL_new(ctx.get()));
  if (!ssl || SSL_set_tlsext_host_name(ssl.get(), server_name.c_str()) != 1 ||
      X509_VERIFY_PARAM_set1_host(SSL_get0_param(ssl.get()), server_name.data(), server_name.size()) != 1 ||
      SSL_set_fd(ssl.get(), fd) != 1) {
    return "";
  }
  gk_it::set_timeout(fd, 10000);
  if (SSL_connect(ssl.get()) != 1) return "";
  const std::string request = "GET /through-the-corridor HTTP/1.1\r\nHost: " + server_name +
                              "\r\nConnection: close\r\n\r\n";
  if (SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) != static_cast<int>(request.size())) {
    return "";
  }
  std::string answer;
  char buf[4096];
  int n = 0;
  // The test upstream keeps the connection: read until the body's one line has arrived.
  while (answer.find("\r\n\r\n") == std::string::npos || answer.back() != '\n') {
    n = SSL_read(ssl.get(), buf, sizeof buf);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  return answer;
}

TEST_F(SniTest, RealTlsClientWithTheApprovedServerNameGetsThrough) {
  start_tls_upstream();
  gk->allow({"tls.test"});
  auto t = gk_it::open_raw_tunnel(gk->corridor, "tls.test:443", "");
  ASSERT_EQ(t.head, gk_it::k200);
  const std::string answer = tls_get(t.fd, pki.ca_file, "tls.test");
  close(t.fd);
  EXPECT_NE(answer.find("ok /through-the-corridor"), std::string::npos) << answer;
  EXPECT_EQ(last().decision, "allow");
  EXPECT_EQ(last().host, "tls.test");
}

TEST_F(SniTest, RealTlsClientWithAnotherServerNameIsClosedBeforeAnyByteGoesUp) {
  start_tls_upstream();
  gk->allow({"tls.test"});
  auto t = gk_it::open_raw_tunnel(gk->corridor, "tls.test:443", "");
  ASSERT_EQ(t.head, gk_it::k200);
  // The upstream's certificate names other.test too: only the corridor can stop this one.
  EXPECT_EQ(tls_get(t.fd, pki.ca_file, "other.test"), "");
  close(t.fd);
  EXPECT_EQ(last().decision, "deny:tls-sni-mismatch");
  EXPECT_EQ(last().host, "tls.test");
  EXPECT_TRUE(tls_upstream->requests().empty());
  EXPECT_EQ(gk->request("GET", "/journal").body.find("other.test"), std::string::npos);
}

TEST_F(SniTest, AlwaysRefusedNameBehindAnAllowedNameIsRefused) {
  gk->allow({"public.test"});
  expect_refused("public.test:443", gk_test::client_hello("auth.openai.com") + "ECHO\n",
                 "deny:tls-sni-mismatch");
  EXPECT_EQ(gk->request("GET", "/journal").body.find("openai"), std::string::npos);
}

TEST_F(SniTest, OpenModeChecksTheServerNameToo) {
  gk->allow({}, "open");
  expect_refused("public.test:443", gk_test::client_hello("mixed.test") + "ECHO\n", "deny:tls-sni-mismatch");
}

TEST_F(SniTest, HelloCutIntoRecordsAndSegmentsIsReassembled) {
  gk->allow({"public.test"});
  const std::string records =
      gk_test::tls_records(gk_test::client_hello_message(gk_test::HelloSpec{"public.test", {}, 0}), 17);
  auto t = gk_it::open_raw_tunnel(gk->corridor, "public.test:443", "");
  ASSERT_EQ(t.head, gk_it::k200);
  // Three TCP segments, cut inside record headers and inside the server name.
  const std::size_t a = 3, b = records.size() / 2 + 1;
  gk_it::send_all(t.fd, records.substr(0, a));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gk_it::send_all(t.fd, records.substr(a, b - a));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gk_it::send_all(t.fd, records.substr(b) + "ECHO\nsplit");
  shutdown(t.fd, SHUT_WR);
  EXPECT_EQ(gk_it::read_until_close(t.fd, 5000), "split");
  close(t.fd);
  EXPECT_EQ(last().decision, "allow");
  EXPECT_EQ(last().host, "public.test");
}

TEST_F(SniTest, BytesThatAreNotTlsAreRefused) {
  gk->allow({"public.test"});
  expect_refused("public.test:443", "GET / HTTP/1.1\r\nHost: public.test\r\n\r\n", "deny:not-tls");
}

TEST_F(SniTest, OversizeRecordIsRefused) {
  gk->allow({"public.test"});
  expect_refused("public.test:443", std::string("\x16\x03\x01\x40\x01", 5) + std::string(100, 'x'),
                 "deny:tls-oversize");
}

TEST_F(SniTest, HelloWithoutServerNameIsRefused) {
  gk->allow({"public.test"});
  expect_refused("public.test:443",
                 gk_test::tls_records(gk_test::client_hello_message(gk_test::HelloSpec{std::nullopt, {}, 0})),
                 "deny:tls-no-sni");
}

TEST_F(SniTest, EncryptedClientHelloIsRefused) {
  gk->allow({"public.test"});
  expect_refused("public.test:443",
                 gk_test::tls_records(gk_test::client_hello_message(
                     gk_test::HelloSpec{"public.test", {{0xfe0d, std::string(40, 'e')}}, 0})),
                 "deny:tls-ech");
}

TEST_F(SniTest, ClientThatLeavesMidHelloIsRecorded) {
  gk->allow({"public.test"});
  auto t = gk_it::open_raw_tunnel(gk->corridor, "public.test:443", gk_test::client_hello("public.test").substr(0, 20));
  ASSERT_EQ(t.head, gk_it::k200);
  close(t.fd);
  for (int i = 0; i < 50 && last().decision != "deny:not-tls"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(last().decision, "deny:not-tls");
  expect_nothing_went_up();
}

TEST_F(SniTest, HelloThatNeverCompletesEndsAtTheDeadline) {
  gk->allow({"public.test"});
  const auto start = std::chrono::steady_clock::now();
  expect_refused("public.test:443", gk_test::client_hello("public.test").substr(0, 20), "deny:tls-timeout");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(9000));
  EXPECT_LT(took, std::chrono::milliseconds(14000));
}

}  // namespace
