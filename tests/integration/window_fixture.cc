#include "tests/integration/window_fixture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

#include "policy/number.h"
#include "tests/support/environment.h"

namespace gk_window_test {
namespace {

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

}  // namespace

Answer parse_answer(const std::string& raw) {
  Answer a;
  a.raw = raw;
  if (raw.size() >= 12 && raw.rfind("HTTP/1.1 ", 0) == 0) {
    a.status = std::max(0, gk_test::decimal_word(std::string_view(raw).substr(9)));
  }
  const auto at = raw.find("\r\n\r\n");
  a.head = raw.substr(0, at);
  if (at != std::string::npos) a.body = raw.substr(at + 4);
  return a;
}

// Reads exactly one answer, so a kept-alive connection can carry the next request: the head,
// then a Content-Length body, a chunked body (decoded into `body`; `raw` keeps the bytes), or,
// with neither, everything until the close.
Answer read_answer(int fd, int timeout_ms) {
  const std::string head = gk_it::read_head(fd, timeout_ms);
  Answer a = parse_answer(head);
  a.body.clear();
  const std::string h = lower(head);
  const auto length_at = h.find("\r\ncontent-length: ");
  if (a.status == 0) return a;
  if (length_at != std::string::npos) {
    const std::size_t from = length_at + 18;
    const std::optional<std::size_t> n = policy::parse_number<std::size_t>(
        std::string_view(h).substr(from, h.find("\r\n", from) - from));
    if (!n) {
      ADD_FAILURE() << "answer with a Content-Length that is not a count: " << head;
      return a;
    }
    a.body = gk_it::read_until_close(fd, timeout_ms, nullptr, *n);
    a.raw += a.body;
  } else if (h.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
    for (;;) {
      const std::string size_line = read_line(fd, timeout_ms);
      a.raw += size_line;
      if (size_line.empty()) break;
      // "1a\r\n" (no chunk extensions: the window sends none).
      const std::optional<std::size_t> chunk = policy::parse_number<std::size_t>(
          std::string_view(size_line).substr(0, size_line.find("\r\n")), 16);
      if (!chunk) {
        ADD_FAILURE() << "chunk size line '" << size_line << "' is not hex digits";
        break;
      }
      const std::size_t n = *chunk;
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

Answer send_raw(std::uint16_t port, const std::string& request, int timeout_ms) {
  const int fd = gk_it::connect_tcp("127.0.0.1", port);
  if (fd < 0) return {};
  gk_it::send_all(fd, request);
  const Answer a = read_answer(fd, timeout_ms);
  close(fd);
  return a;
}

std::string get(const std::string& target, const std::string& extra) {
  return "GET " + target + " HTTP/1.1\r\nHost: gatekeeper:8080\r\n" + extra + "\r\n";
}

std::string window_path(const std::string& grant, const std::string& rest) {
  return "/k/" + kKey + "/model/" + grant + rest;
}

long long metric(Gatekeeper& gk, const std::string& name_and_labels) {
  const std::string text = gk.request("GET", "/metrics").body;
  const std::string needle = "\n" + name_and_labels + " ";
  const auto at = ("\n" + text).find(needle);
  if (at == std::string::npos) return -1;
  std::string_view value = std::string_view(text).substr(at + needle.size() - 1);
  value = value.substr(0, value.find('\n'));
  const std::optional<long long> n = policy::parse_number<long long>(value);
  EXPECT_TRUE(n.has_value()) << name_and_labels << " '" << value << "' is not a count";
  return n.value_or(-1);
}

void WindowTest::SetUp() {
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

void WindowTest::TearDown() {
  gk_.reset();
  tls_.reset();
  plain_.reset();
  if (!dir_.empty()) { std::error_code ignored; std::filesystem::remove_all(dir_, ignored); }
}

void WindowTest::start(std::vector<std::string> extra, bool set_key) {
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

void WindowTest::grant(const std::string& body) {
  const auto a = gk_->request("POST", "/grants", body);
  ASSERT_EQ(a.status, 200) << a.body;
}

std::vector<std::string> WindowTest::window_decisions() {
  std::vector<std::string> out;
  for (const auto& r : gk_->journal()) {
    if (r.listener == "window") out.push_back(r.decision);
  }
  return out;
}

}  // namespace gk_window_test
