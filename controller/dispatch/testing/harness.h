// Test-only: a minimal acceptor that hands /api/spaces/ requests to a Dispatcher on a loop
// thread of its own (standing in for `spacectl serve`), and blocking clients for the tests.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/dispatch/dispatcher.h"

namespace controller::dispatch::testing {

class Acceptor {
 public:
  // `configure` fills everything but the loop.
  explicit Acceptor(std::function<void(controller::dispatch::DispatcherConfig&)> configure);
  ~Acceptor();  // stops: close_all, then the loop must end with no handle open
  [[nodiscard]] int port() const { return port_; }
  // True when the loop closed with no handle left (checked by the destructor's caller via stop()).
  bool stop();
  std::atomic<int> givebacks_keep{0}, givebacks_close{0};

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  int port_ = 0;
  bool stopped_ = false;
};

struct Answer {
  bool ok = false;  // a whole answer arrived
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  [[nodiscard]] std::string header(const std::string& name) const;  // "" when absent
  [[nodiscard]] bool has(const std::string& name) const;
};

// The word of a refusal's JSON body (`"code":"<word>"`); "" when the body holds none.
std::string code_of(const Answer& a);

// One blocking TCP client to 127.0.0.1:port.
class Client {
 public:
  // rcvbuf > 0: a small receive buffer (set before connect), so a slow reader backs up into the
  // dispatcher's queue at once instead of into the kernel's.
  explicit Client(int port, int rcvbuf = 0);
  explicit Client(const std::string& unix_path);  // serve's unix socket
  ~Client();
  [[nodiscard]] bool connected() const { return fd_ >= 0; }
  bool send(const std::string& bytes);
  // Reads one answer (its body decoded from Content-Length or chunked framing).
  Answer read_answer(bool head_request = false, int timeout_ms = 60000);
  // A WebSocket handshake answer: its head only (the one HTTP adapter refuses 101 by design, so
  // this reads to the empty line and splits status and fields itself).
  Answer read_upgrade(int timeout_ms = 60000);
  // Reads until `n` bytes or the peer closes; returns what came.
  std::string read_bytes(std::size_t n, int timeout_ms = 60000);
  // True when the peer closed (EOF) within the time.
  bool closed_within(int timeout_ms);
  void close_write();
  int fd() const { return fd_; }

 private:
  bool readable_within(int timeout_ms);
  ssize_t receive(char* into, std::size_t size);
  bool fill(int timeout_ms);
  int fd_ = -1;
  std::string buf_;
};

// A GET (or other bodyless request) with extra header lines ("Name: value\r\n" each).
std::string get(const std::string& target, const std::string& extra = {},
                const std::string& method = "GET");

// WebSocket client pieces: the upgrade request, a masked client frame, one server frame read.
std::string ws_upgrade(const std::string& target);
std::string ws_frame(int opcode, const std::string& payload);
struct Frame {
  bool ok = false;
  int opcode = 0;
  std::string payload;
};
Frame read_frame(Client& c, int timeout_ms = 60000);

// Starts `argv` with stdout on a pipe, returns its first line; pid for kill.
struct Child {
  int pid = -1;
  std::string first_line;
};
Child start_child(const std::vector<std::string>& argv);
void kill_child(Child& c);

}  // namespace controller::dispatch::testing
