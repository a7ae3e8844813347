// Shared by the window's integration tests (window_test.cc, window_keepalive_test.cc): the test
// network with a TLS and a plain upstream (certificate from a test CA made per test), the
// gatekeeper child with its window key and three grants, and a client that reads exactly one
// answer so a kept-alive connection can carry the next request.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/http_upstream.h"

namespace gk_window_test {

using gk_it::Gatekeeper;

inline constexpr std::uint16_t kTlsPort = 8443;
inline constexpr std::uint16_t kPlainPort = 8080;
inline const std::string kKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
inline const std::string kBearerSecret = "sk-grant-BEARER-0123456789";
inline const std::string kApiKeySecret = "sk-grant-XAPIKEY-9876543210";
inline const std::string kFakeKey = "sk-space-FAKE-key";
inline const std::string kNoSuchGrant = R"({"error":"no such grant"})";

struct Answer {
  int status = 0;
  std::string head;
  std::string body;
  std::string raw;
};

Answer parse_answer(const std::string& raw);
// Reads exactly one answer: the head, then a Content-Length body, a chunked body (decoded into
// `body`; `raw` keeps the bytes), or, with neither, everything until the close.
Answer read_answer(int fd, int timeout_ms = 15000);
// True when the peer ends the connection within `timeout_ms` and sends nothing more.
bool closed_by_peer(int fd, int timeout_ms);
// A new connection to 127.0.0.1:port, `request`, one answer, close.
Answer send_raw(std::uint16_t port, const std::string& request, int timeout_ms = 15000);
std::string get(const std::string& target, const std::string& extra = "");
std::string window_path(const std::string& grant, const std::string& rest);
// The value of one /metrics line ("name{labels} value"); -1 when absent.
long long metric(Gatekeeper& gk, const std::string& name_and_labels);

class WindowTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Starts the gatekeeper with the window key (unless !set_key) and the grants "bearer"
  // (authorization, TLS, /v1/), "anthropic" (x-api-key, TLS, /) and "registry" (opened, plain, /npm/).
  void start(std::vector<std::string> extra = {}, bool set_key = true);
  void grant(const std::string& body);
  std::vector<std::string> window_decisions();

  std::unique_ptr<gk_it::TestNet> net_;
  std::string dir_;
  gk_it::TestPki pki_;
  std::unique_ptr<gk_it::HttpUpstream> tls_;
  std::unique_ptr<gk_it::HttpUpstream> plain_;
  std::unique_ptr<Gatekeeper> gk_;
};

}  // namespace gk_window_test
