// A plain HTTP/1.1 client for serve's tests: one request per connection (Connection: close),
// over serve's unix socket or a TCP socket the test made.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/number.h"

namespace controller::serve::testing {

using nlohmann::json;

struct Answer {
  int status = 0;
  std::string head, body;
  json doc;
};

inline int connect_unix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends raw bytes, reads until the server closes (every request here says Connection: close).
inline Answer http_exchange(int fd, const std::string& raw) {
  Answer a;
  std::size_t done = 0;
  while (done < raw.size()) {
    const ssize_t n = write(fd, raw.data() + done, raw.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  std::string all;
  char buffer[8192];
  timeval tv{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    all.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  const std::size_t end = all.find("\r\n\r\n");
  a.head = all.substr(0, end);
  a.body = end == std::string::npos ? std::string() : all.substr(end + 4);
  if (all.size() > 12) a.status = policy::parse_number<int>(all.substr(9, 3)).value_or(0);
  a.doc = json::parse(a.body, nullptr, false);
  return a;
}

inline std::string request_text(const std::string& method, const std::string& path, const std::string& body,
                         const std::string& extra = {}) {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: spacectl\r\nConnection: close\r\n" + extra;
  if (!body.empty() || method == "POST" || method == "PUT") r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "\r\n" + body;
}


}  // namespace controller::serve::testing
