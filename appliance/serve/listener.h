// A TCP listener with a socket cap. At the cap, the oldest connection idle between two requests
// (window keep-alive) is closed to make room; with none idle, the socket accepted past the cap is
// closed at once with no byte and leaves a rate-limited deny:too-many-connections note
// (docs/reference-behaviour.md#listeners). The listener knows every
// live connection (for SIGTERM) and the refused ones still lingering (capped, oldest evicted).
// At the descriptor limit (EMFILE, ENFILE) the pending connection is refused the same way: the
// listener's reserve descriptor makes room to accept it and close it at once.
#pragma once

#include <uv.h>

#include <cstdint>
#include <list>
#include <string>

#include "appliance/loop/unique_fd.h"
#include "appliance/serve/context.h"
#include "policy/address.h"
#include "policy/journal_record.h"
#include "policy/result.h"

namespace appliance::serve {

class Connection;

class TcpListener {
 public:
  using Factory = Connection* (*)(ServeContext& ctx, TcpListener& listener);

  TcpListener(ServeContext& ctx, policy::Listener which, std::size_t cap, Factory factory);
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  // Binds address:port and listens. Returns the bound port (port 0 picks one).
  policy::Result<std::uint16_t> listen_on(const policy::Address& address, std::uint16_t port);
  // Stops accepting and closes every connection (SIGTERM).
  void shut_down();

  [[nodiscard]] policy::Listener which() const noexcept { return which_; }
  [[nodiscard]] std::size_t open_sockets() const noexcept { return all_.size(); }

  // Called by Connection.
  void forget(Connection* connection);
  void start_lingering(Connection* connection);
  void stop_lingering(Connection* connection);
  void note_closing() noexcept { ++closing_; }  // close_all() began; forget() follows
  void start_idle(Connection* connection);
  void stop_idle(Connection* connection);
  // Closes one live connection (the longest idle, else the oldest) to free its descriptor at
  // once. False when there is none.
  bool evict_one();

  ~TcpListener();

 private:
  static void on_connection(uv_stream_t* server, int status) noexcept;
  void accept_one();
  void refuse_at_descriptor_limit();
  static void on_retake_reserve(uv_timer_t* timer) noexcept;
  [[nodiscard]] std::size_t closing_count() const noexcept { return closing_; }

  ServeContext& ctx_;
  policy::Listener which_;
  std::size_t cap_;
  Factory factory_;
  uv_tcp_t handle_{};
  bool initialised_ = false;
  std::list<Connection*> all_;
  std::list<Connection*> lingering_;
  std::list<Connection*> idle_;  // oldest first
  std::size_t closing_ = 0;      // in all_, closing, not yet forgotten
  // A descriptor held in reserve (an unconnected TCP socket): at EMFILE it is closed so the
  // pending connection can be accepted and closed at once, then taken again.
  loop::UniqueFd reserve_;
  uv_timer_t retake_{};  // takes the reserve again on the next loop turn
  bool retake_initialised_ = false;
};

}  // namespace appliance::serve
