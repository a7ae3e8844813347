#include "appliance/control_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "appliance/loop/address.h"
#include "appliance/loop/unique_fd.h"
#include "policy/control_messages.h"
#include "policy/number.h"

namespace appliance {
namespace {

constexpr std::size_t kMaxAnswer = 8u << 20;  // a full journal is ~180 KB; metrics are small
constexpr int kTimeoutMs = 20'000;

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "gatekeeper control: %s\n", message.c_str());
  return code;
}

bool is_token(std::string_view s) {
  if (s.empty() || s.size() > 16) return false;
  for (char c : s) {
    if (c < 'A' || c > 'Z') return false;
  }
  return true;
}

bool is_path(std::string_view s) {
  if (s.empty() || s.front() != '/' || s.size() > 1024) return false;
  for (char c : s) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool wait_for(int fd, short events) {
  pollfd p{fd, events, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, kTimeoutMs);
  } while (rc < 0 && errno == EINTR);
  return rc > 0;
}

}  // namespace

int run_control_client(const std::vector<std::string>& args) {
  std::uint16_t port = 9099;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--port" && i + 1 < args.size()) {
      const std::string& v = args[++i];
      const std::optional<std::uint16_t> value = policy::parse_number<std::uint16_t>(v);
      if (!value || *value == 0) {
        return fail(kControlUsage, "--port '" + v + "' is not a port 1..65535");
      }
      port = *value;
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.size() != 2 || !is_token(positional[0]) || !is_path(positional[1])) {
    return fail(kControlUsage, "usage: gatekeeper control METHOD PATH [--port N] < optional-json-body");
  }
  // The body: whatever stdin holds, unless it is a terminal.
  std::string body;
  if (!::isatty(STDIN_FILENO)) {
    char buf[65536];
    while (true) {
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(kControlUsage, std::string("read(stdin): ") + std::strerror(errno));
      if (n == 0) break;
      body.append(buf, static_cast<std::size_t>(n));
      if (body.size() > policy::kMaxControlBody) {
        return fail(kControlUsage, "the body on stdin is over 1 MiB");
      }
    }
  }
  const std::string where = "127.0.0.1:" + std::to_string(port);
  const loop::UniqueFd socket_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const int fd = socket_fd.get();
  if (!socket_fd) return fail(kControlUnreachable, std::string("socket: ") + std::strerror(errno));
  loop::IpBytes loopback;
  loopback.bytes = {127, 0, 0, 1};
  const sockaddr_storage to = loop::socket_address(loopback, port);
  int rc = ::connect(fd, loop::as_sockaddr(to), sizeof(sockaddr_in));
  if (rc != 0 && errno != EINPROGRESS) {
    const int e = errno;
    return fail(kControlUnreachable, "connect(" + where + "): " + std::strerror(e));
  }
  if (rc != 0) {
    int err = 0;
    socklen_t len = sizeof err;
    if (!wait_for(fd, POLLOUT) || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
        err != 0) {
      return fail(kControlUnreachable, "connect(" + where + "): " +
                                           (err != 0 ? std::strerror(err) : "timed out"));
    }
  }
  std::string request = positional[0] + " " + positional[1] + " HTTP/1.1\r\nHost: " + where +
                        "\r\nConnection: close\r\n";
  if (!body.empty()) request += "Content-Type: application/json\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd, POLLOUT)) break;
      continue;
    }
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  if (sent < request.size()) {
    return fail(kControlUnreachable, "send(" + where + "): the request could not be sent");
  }
  std::string answer;
  while (answer.size() <= kMaxAnswer) {
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd, POLLIN)) break;
      continue;
    }
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  const std::size_t head_end = answer.find("\r\n\r\n");
  if (answer.size() < 12 || answer.compare(0, 7, "HTTP/1.") != 0 || head_end == std::string::npos) {
    return fail(kControlUnreachable, "recv(" + where + "): no HTTP answer");
  }
  const std::optional<int> parsed =
      policy::parse_number<int>(std::string_view(answer).substr(9, 3));
  if (!parsed) {
    return fail(kControlUnreachable, "recv(" + where + "): no HTTP status");
  }
  const int status = *parsed;
  const std::string_view answer_body = std::string_view(answer).substr(head_end + 4);
  std::fwrite(answer_body.data(), 1, answer_body.size(), stdout);
  if (!answer_body.empty() && answer_body.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
  if (status < 200 || status > 299) {
    std::fprintf(stderr, "gatekeeper control: %s %s: HTTP %d\n", positional[0].c_str(),
                 positional[1].c_str(), status);
    return kControlHttpError;
  }
  return kControlOk;
}

}  // namespace appliance
