#include "tests/bench/soak/load.h"
#include "policy/number.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/sha.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/bench/common/server.h"
#include "tests/bench/common/socket.h"
#include "tests/bench/window/tls.h"

namespace soak {

namespace {

using bench::connect_loopback;
using bench::http_status;
using bench::read_head;
using bench::send_all;

void sleep_ms(int ms) { usleep(static_cast<useconds_t>(ms) * 1000); }

void set_timeouts(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int open_to(std::uint16_t port) {
  const int fd = connect_loopback(port);
  if (fd >= 0) set_timeouts(fd, kIoDeadlineMs);
  return fd;
}

// Opens a tunnel to name:port; the CONNECT status (0: no answer) and the fd (closed unless 200).
int connect_tunnel(const Setup& s, Counters* c, const std::string& target, int* status) {
  *status = 0;
  const int fd = open_to(s.corridor);
  if (fd < 0) return -1;
  ++c->sent_requests;
  if (!send_all(fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")) {
    close(fd);
    return -1;
  }
  *status = http_status(read_head(fd));
  if (*status != 200) {
    close(fd);
    return -1;
  }
  return fd;
}

struct Rng {
  std::uint64_t x;
  std::uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
};

// TLS to the echo upstream through an open tunnel (the corridor passes only TLS), then n
// pseudo-random bytes in chunks, each written and read back before the next; sha256 of what was
// sent and of what came back. The reader may be slowed (read_pause_ms after every read) so the
// gatekeeper's buffers stay full. 1: digests equal; 0: they differ; -1: TLS or I/O failed.
int echo_transfer(const Setup& s, int fd, std::size_t n, Rng& rng, int read_pause_ms) {
  bssl::UniquePtr<SSL> ssl = bench::client_tls_session(s.tls, kUpstreamName);
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1 || SSL_connect(ssl.get()) != 1) return -1;
  SHA256_CTX sent_ctx, got_ctx;
  SHA256_Init(&sent_ctx);
  SHA256_Init(&got_ctx);
  std::vector<std::uint8_t> out(256 * 1024), in(64 * 1024);
  std::size_t sent = 0;
  const double deadline = now_seconds() + kIoDeadlineMs / 1000.0;
  while (sent < n) {
    if (now_seconds() > deadline) return -1;
    const std::size_t len = std::min(out.size(), n - sent);
    for (std::size_t i = 0; i < len; i += 8) {
      const std::uint64_t r = rng.next();
      std::memcpy(out.data() + i, &r, std::min<std::size_t>(8, len - i));
    }
    SHA256_Update(&sent_ctx, out.data(), len);
    if (SSL_write(ssl.get(), out.data(), static_cast<int>(len)) != static_cast<int>(len)) return -1;
    sent += len;
    std::size_t got = 0;
    while (got < len) {
      const int r =
          SSL_read(ssl.get(), in.data(), static_cast<int>(std::min(in.size(), len - got)));
      if (r <= 0) return -1;
      SHA256_Update(&got_ctx, in.data(), static_cast<std::size_t>(r));
      got += static_cast<std::size_t>(r);
      if (read_pause_ms > 0) sleep_ms(read_pause_ms);
    }
  }
  std::uint8_t a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256_Final(a, &sent_ctx);
  SHA256_Final(b, &got_ctx);
  SSL_shutdown(ssl.get());
  return std::memcmp(a, b, sizeof a) == 0 ? 1 : 0;
}

// One HTTP answer from fd into `a`, with `buffer` keeping bytes read past it (pipelining).
bool read_answer(int fd, std::string& buffer, int& status, std::string& body, bool& closes) {
  char chunk[16384];
  std::size_t end;
  while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
    if (buffer.size() > 65536) return false;
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
  std::string head = buffer.substr(0, end + 2);
  for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  status = http_status(buffer.substr(0, end + 4));
  std::size_t length = 0;
  if (const std::size_t at = head.find("\r\ncontent-length:"); at != std::string::npos) {
    std::string_view value = std::string_view(head).substr(at + 17);
    value = value.substr(0, value.find("\r\n"));
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    const std::optional<std::size_t> n = policy::parse_number<std::size_t>(value);
    if (!n) return false;  // a length that does not read: no answer
    length = *n;
  }
  closes = head.find("\r\nconnection: close") != std::string::npos;
  buffer.erase(0, end + 4);
  while (buffer.size() < length) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
  body = buffer.substr(0, length);
  buffer.erase(0, length);
  return true;
}

std::string window_get(const std::string& grant, const std::string& key) {
  return "GET /k/" + key + "/model/" + grant +
         "/models HTTP/1.1\r\nHost: gatekeeper:8080\r\nAuthorization: Bearer placeholder\r\n\r\n";
}

}  // namespace

double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

Counters* shared_counters() {
  void* memory =
      mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  return new (memory) Counters;
}

Answer control_call(std::uint16_t port, const std::string& method, const std::string& path,
                    const std::string& body) {
  Answer a;
  const int fd = open_to(port);
  if (fd < 0) return a;
  std::string request =
      method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!body.empty() || method == "POST") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  if (!send_all(fd, request)) {
    close(fd);
    return a;
  }
  std::string buffer;
  bool closes = false;
  if (!read_answer(fd, buffer, a.status, a.body, closes)) a.status = 0;
  close(fd);
  return a;
}

int tunnel_worker(const Setup& s, Counters* c, unsigned seed) {
  Rng rng{0x9e3779b97f4a7c15ull ^ seed};
  while (now_seconds() < s.deadline) {
    int status = 0;
    const int fd = connect_tunnel(s, c, std::string(kUpstreamName) + ":443", &status);
    if (fd < 0) {
      // A CONNECT the policy allows: anything but 200 is a wrong decision, no answer an error.
      if (status != 0) {
        ++c->allowed_refused;
      } else {
        ++c->tunnel_errors;
      }
      sleep_ms(100);
      continue;
    }
    ++c->tunnels;
    const std::size_t n = 256 * 1024 + rng.next() % (kMaxTransfer - 256 * 1024);
    const int ok = echo_transfer(s, fd, n, rng, 0);
    if (ok == 1) {
      ++c->transfers;
      c->transfer_bytes += n;
    } else if (ok == 0) {
      ++c->sha_failures;
    } else {
      ++c->tunnel_errors;
    }
    if (rng.next() % 4 == 0) sleep_ms(500);  // an idle tunnel now and then (after TLS close_notify)
    close(fd);
  }
  return 0;
}

int refusal_worker(const Setup& s, Counters* c) {
  // Every one of these is refused under every policy the control worker sets.
  const std::vector<std::string> corridor = {
      "CONNECT notlisted.bench.test:443 HTTP/1.1\r\nHost: notlisted.bench.test:443\r\n\r\n",
      "CONNECT " + s.ip + ":443 HTTP/1.1\r\nHost: " + s.ip + ":443\r\n\r\n",
      std::string("CONNECT ") + kUpstreamName + ":80 HTTP/1.1\r\nHost: " + kUpstreamName +
          ":80\r\n\r\n",
      "CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n",
      "GET http://upstream.bench.test/ HTTP/1.1\r\nHost: upstream.bench.test\r\n\r\n",
      "CONNECT upstream.bench.test:443 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
      "chunked\r\nContent-Length: 3\r\n\r\n",
      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15)};
  const std::vector<std::string> window = {
      window_get("tls", std::string(64, '0')), window_get("nogrant", s.key),
      "GET /k/" + s.key + "/model/tls/../../etc HTTP/1.1\r\nHost: gatekeeper\r\n\r\n"};
  std::size_t i = 0;
  while (now_seconds() < s.deadline) {
    const bool to_window = i % (corridor.size() + window.size()) >= corridor.size();
    const std::string& request =
        to_window ? window[(i % (corridor.size() + window.size())) - corridor.size()]
                  : corridor[i % (corridor.size() + window.size())];
    ++i;
    const int fd = open_to(to_window ? s.window : s.corridor);
    if (fd < 0) continue;
    ++c->sent_requests;
    send_all(fd, request);
    const int status = http_status(read_head(fd));
    close(fd);
    if (status == 200) {
      ++c->refused_allowed;
    } else {
      ++c->refusals;
    }
    sleep_ms(20);
  }
  return 0;
}

int window_worker(const Setup& s, Counters* c) {
  unsigned round = 0;
  while (now_seconds() < s.deadline) {
    const int fd = open_to(s.window);
    if (fd < 0) {
      ++c->window_errors;
      sleep_ms(100);
      continue;
    }
    std::string buffer;
    // A keep-alive connection: 20 rounds, each one to three requests written at once (pipelined).
    bool alive = true;
    for (int r = 0; r < 20 && alive && now_seconds() < s.deadline; ++r) {
      sleep_ms(2);  // bounded: a mix, not a window benchmark
      const int depth = 1 + static_cast<int>(round++ % 3);
      std::string batch;
      for (int k = 0; k < depth; ++k) {
        batch += window_get((round + static_cast<unsigned>(k)) % 2 == 0 ? "tls" : "plain", s.key);
      }
      c->sent_requests += static_cast<std::uint64_t>(depth);
      if (!send_all(fd, batch)) {
        ++c->window_errors;
        break;
      }
      for (int k = 0; k < depth; ++k) {
        int status = 0;
        std::string body;
        bool closes = false;
        if (!read_answer(fd, buffer, status, body, closes)) {
          ++c->window_errors;
          alive = false;
          break;
        }
        if (status == 200 && body == "ok") {
          ++c->window_ok;
        } else if (status == 403 || status == 404) {
          ++c->window_refused;  // a refusal of an allowed request
        } else {
          ++c->window_errors;  // an upstream error (502, 504): not a decision
        }
        if (closes) {
          alive = false;
          break;
        }
      }
    }
    close(fd);
  }
  return 0;
}

int slow_worker(const Setup& s, Counters* c) {
  Rng rng{42};
  while (now_seconds() < s.deadline) {
    // A head that arrives a byte at a time, then a tunnel whose reader is slow.
    const int fd = open_to(s.corridor);
    if (fd < 0) {
      ++c->slow_errors;
      sleep_ms(100);
      continue;
    }
    ++c->sent_requests;
    const std::string head = std::string("CONNECT ") + kUpstreamName +
                             ":443 HTTP/1.1\r\nHost: " + kUpstreamName + ":443\r\n\r\n";
    bool sent = true;
    for (char ch : head) {
      if (!send_all(fd, std::string(1, ch))) {
        sent = false;
        break;
      }
      sleep_ms(20);
    }
    const int status = sent ? http_status(read_head(fd)) : 0;
    if (status == 200) {
      const int ok = echo_transfer(s, fd, 512 * 1024, rng, 5);
      if (ok == 0) {
        ++c->sha_failures;
      } else if (ok == 1) {
        ++c->slow_ok;
      } else {
        ++c->slow_errors;
      }
    } else if (status != 0) {
      ++c->allowed_refused;
    } else {
      ++c->slow_errors;  // the gatekeeper may end a head that takes too long: not a decision
    }
    close(fd);
  }
  return 0;
}

int control_worker(const Setup& s, Counters* c) {
  unsigned n = 0;
  const std::string churn = std::string(R"({"id":"churn","upstream":"https://)") + kUpstreamName +
                            R"(:8443/v2/","header":"x-api-key","secret":"churn-secret"})";
  while (now_seconds() < s.deadline) {
    Answer a;
    switch (n++ % 4) {
      case 0:
        a = control_call(s.control, "POST", "/network",
                         std::string(R"({"mode":"allowlist","domains":[")") + kUpstreamName +
                             R"(","extra.bench.test"]})");
        break;
      case 1:
        a = control_call(s.control, "POST", "/grants", churn);
        break;
      case 2:
        a = control_call(
            s.control, "POST", "/network",
            std::string(R"({"mode":"allowlist","domains":[")") + kUpstreamName + R"("]})");
        break;
      default:
        a = control_call(s.control, "DELETE", "/grants/churn");
        break;
    }
    if (a.status == 200) {
      ++c->control_changes;
    } else {
      ++c->control_failures;
    }
    sleep_ms(3000);
  }
  return 0;
}

int reader_worker(const Setup& s, Counters* c) {
  while (now_seconds() < s.deadline) {
    for (const char* path : {"/journal", "/metrics", "/policy", "/health"}) {
      const Answer a = control_call(s.control, "GET", path);
      if (a.status == 200 && !a.body.empty()) {
        ++c->reads;
      } else {
        ++c->read_failures;
      }
    }
    sleep_ms(250);
  }
  return 0;
}

int run_echo_upstream(const std::string& ip, SSL_CTX* tls, int ready_fd) {
  const int listener = bench::listen_ipv4(ip, kEchoPort);
  if (listener < 0) return 1;
  fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) & ~O_NONBLOCK);
  if (write(ready_fd, "ready\n", 6) != 6) return 1;
  for (;;) {
    const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::thread([fd, tls] {
      set_timeouts(fd, 120000);
      bssl::UniquePtr<SSL> ssl(SSL_new(tls));
      if (ssl && SSL_set_fd(ssl.get(), fd) == 1 && SSL_accept(ssl.get()) == 1) {
        char buffer[65536];
        for (;;) {
          const int n = SSL_read(ssl.get(), buffer, sizeof buffer);
          if (n <= 0 || SSL_write(ssl.get(), buffer, n) != n) break;
        }
        SSL_shutdown(ssl.get());
      }
      close(fd);
    }).detach();
  }
}

}  // namespace soak
