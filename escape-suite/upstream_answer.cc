#include "escape-suite/upstream_answer.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "escape-suite/sha256.h"
#include "escape-suite/window_probe.h"

namespace escape {
namespace {

inline constexpr int kReadTimeoutMs = 5000;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return out;
}

}  // namespace

std::string upstream_answer(std::string_view head, std::string_view key_sha256) {
  std::string key;
  bool found = false;
  std::size_t at = head.find('\n');  // after the request line
  while (at != std::string_view::npos && at + 1 < head.size()) {
    const std::size_t start = at + 1;
    std::size_t end = head.find('\n', start);
    std::string_view line = head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the end of the head
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && lower(line.substr(0, colon)) == "x-api-key") {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      key = std::string(value);
      found = true;
    }
    at = end;
  }
  if (found && !key_sha256.empty() && sha256_hex(key) == key_sha256) {
    const std::string body = std::string(kUpstreamKeySeen) + "\n";
    return "HTTP/1.1 200 OK\r\nx-escape-upstream: " + std::string(kUpstreamKeySeen) + "\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  }
  return "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
}

int run_answer_upstream(int argc, char** argv) {
  std::string key_sha256;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--key-sha256" && i + 1 < argc) key_sha256 = argv[++i];
    else {
      std::fprintf(stderr, "escape-suite %s: unknown argument %s\n", std::string(kAnswerUpstreamMode).c_str(), argv[i]);
      return 2;
    }
  }
  if (key_sha256.size() != 64) {
    std::fprintf(stderr, "escape-suite %s: --key-sha256 takes 64 hex digits\n", std::string(kAnswerUpstreamMode).c_str());
    return 2;
  }
  std::string head;
  char buf[4096];
  while (head.size() < kMaxUpstreamHead && head.find("\r\n\r\n") == std::string::npos && head.find("\n\n") == std::string::npos) {
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, kReadTimeoutMs) <= 0) break;
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
  }
  const std::string answer = upstream_answer(head, key_sha256);
  std::size_t done = 0;
  while (done < answer.size()) {
    const ssize_t n = ::write(1, answer.data() + done, answer.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 1;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace escape
