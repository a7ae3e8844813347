// Integration harness: runs `gatekeeper-test serve` as a child process, builds a network
// namespace whose "public" hosts live at 198.18.0.x (public only in the test build), runs
// dnsmasq inside it, and serves upstream test hosts from sockets created inside it.
// Traffic goes only to loopback and to the namespace this harness creates.
#pragma once

#include <openssl/sha.h>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/socket_io.h"

namespace gk_it {

// --- plain sockets (blocking, with deadlines) ---
int connect_tcp(const std::string& ip, std::uint16_t port);  // -1 on failure
using gk_test::send_all;
// Reads until EOF, an error, `max` bytes (never more) or the deadline; `eof` tells whether EOF
// was seen.
std::string read_until_close(int fd, int timeout_ms, bool* eof = nullptr, std::size_t max = 1 << 20);
// Reads up to and including "\r\n\r\n" (byte by byte, so nothing after the head is consumed).
std::string read_head(int fd, int timeout_ms);
void set_timeout(int fd, int timeout_ms);

// Streaming SHA-256 for byte-exactness checks (BoringSSL's, wrapped once here).
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t length);
  std::string hex();

 private:
  SHA256_CTX ctx_;
};

// Deterministic test bytes: pattern_byte(seed, i).
void fill_pattern(std::uint32_t seed, std::uint64_t offset, char* out, std::size_t length);

// --- the gatekeeper child ---
// The gatekeeper refuses uid 0 (self-confinement). Run by root, the harness starts it the way the
// container does: this uid and gid, no supplementary groups, plus the ambient capabilities below,
// which the gatekeeper must drop itself (CAP_SETPCAP lets it empty its bounding set).
inline constexpr unsigned kGatekeeperUid = 65532;
class Gatekeeper {
 public:
  // Starts `gatekeeper-test serve --bind 127.0.0.1 --corridor-port 0 --window-port 0
  // --control-port 0 <extra>` and waits for the ready line.
  explicit Gatekeeper(std::vector<std::string> extra);
  ~Gatekeeper();
  [[nodiscard]] bool ready() const { return ready_; }
  [[nodiscard]] bool alive();
  [[nodiscard]] pid_t pid() const { return pid_; }
  // Waits for the process to end: the signal that ended it, 0 for a normal exit, -1 on timeout.
  int wait_for_signal(int timeout_ms);
  std::uint16_t corridor = 0, window = 0, control = 0;
  std::string ready_line;

  struct Answer {
    int status = 0;  // 0: no HTTP answer
    std::string body;
  };
  Answer request(const std::string& method, const std::string& path, const std::string& body = "");
  void allow(const std::vector<std::string>& domains, const std::string& mode = "allowlist");
  // The journal's records as (host, port, decision, count), oldest first.
  struct Record {
    std::string listener, host, decision;
    long port = 0;
    long count = 1;  // identical refusals this record stands for (the journal coalesces them)
  };
  std::vector<Record> journal();
  // SIGTERM, wait; returns the exit status (or -1 when killed by a signal / timed out).
  int terminate(int timeout_ms = 10000);
  // What the destructor does: SIGTERM, and a recorded failure unless the exit status is 0 within
  // 10 s (then SIGKILL), or when a ready gatekeeper had already ended by itself.
  void stop();
  std::string stderr_text();

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string err_path_;
  bool ready_ = false;
};

// Opens a corridor socket and sends CONNECT; returns the fd (caller closes) and the head read.
// open_tunnel sends, right after the head, a ClientHello record naming the target's host (the
// corridor relays nothing before one), then `extra`; TestNet's upstream skips that record.
// open_raw_tunnel sends exactly `after_head`.
struct Tunnel {
  int fd = -1;
  std::string head;
};
Tunnel open_tunnel(std::uint16_t corridor, const std::string& target, const std::string& extra = "");
Tunnel open_raw_tunnel(std::uint16_t corridor, const std::string& target, const std::string& after_head);
// The server name a client would send for a CONNECT target: "public.test:443" -> "public.test".
std::string server_name_of(const std::string& target);
inline constexpr std::string_view k200 = "HTTP/1.1 200 Connection Established\r\n\r\n";
inline constexpr std::string_view k400 = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n";
inline constexpr std::string_view k403 = "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n";
inline constexpr std::string_view k502 = "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n";
inline constexpr std::string_view k503 = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n";

// --- the test network ---
// Namespace gkit<pid>, subnet P = 198.18.<n>.0/24 with n in 1..199 held by this process alone
// (an flock on /tmp/gk-it-subnet-<n>.lock, released when the process ends, however it ends;
// 198.18.200-254 are the Docker tests' and 198.19 the benchmarks'): veth P.1 (here) <-> P.2, P.4
// (namespace). dnsmasq on P.2:53 answers: public.test and alias.test → P.2 (alias.test: a name the
// test certificate does not hold); mixed.test → P.2 and fd00::1; loop.test → 127.0.0.1;
// refused.test and tls.test → P.4 (nothing listens unless a test does); slow.test → P.77 (no such
// host: connects hang); meta.test → 169.254.169.254 (a name pointed at the metadata service);
// nx.test → NXDOMAIN.
// The upstream on P.2:443 skips leading TLS records (the tunnel's ClientHello), reads one
// command line, then:
//   "ECHO\n"     echoes until EOF, then FIN
//   "SEND <n>\n" sends n pattern bytes (seed 1), then FIN, then counts bytes until EOF
//   "SINK\n"     hashes everything until EOF, then answers "<sha256 hex>\n" and closes
//   "HOLD\n"     reads until EOF, then closes
class TestNet {
 public:
  TestNet();
  ~TestNet();
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] std::string dns() const { return prefix_ + "2"; }
  // "198.18.<n>." of this process.
  [[nodiscard]] const std::string& prefix() const { return prefix_; }
  // A listening TCP socket on P.2:<port> inside the namespace (caller accepts and closes); -1 on
  // failure.
  // `last_octet` 4: on P.4, the address of refused.test and tls.test (nothing listens there
  // unless a test does).
  int listen_in_namespace(std::uint16_t port, int last_octet = 2);
  std::atomic<std::uint64_t> bytes_after_fin{0};  // SEND: bytes read after the upstream's FIN
  std::atomic<int> sessions_done{0};
  std::atomic<int> sessions_started{0};
  std::atomic<int> first_records{0};  // TLS records skipped at the start of sessions
  std::string error;

 private:
  void serve();
  void session(int fd);
  std::string name_;
  std::string prefix_;  // "198.18.<n>." — per process
  int subnet_lock_ = -1;
  pid_t dnsmasq_ = -1;
  int listen_fd_ = -1;
  bool ok_ = false;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stopping_{false};
};

// A UDP socket on 127.0.0.1 that reads DNS queries and never answers.
class SilentDns {
 public:
  SilentDns();
  ~SilentDns();
  std::uint16_t port = 0;

 private:
  int fd_ = -1;
};

}  // namespace gk_it
