// A TCP listener with a socket cap. Sockets accepted past the cap are closed at once with no byte
// and leave a rate-limited deny:too-many-connections note (reference §1). The listener knows every
// live connection (for SIGTERM) and the refused ones still lingering (capped, oldest evicted).
#pragma once

#include <uv.h>

#include <cstdint>
#include <list>
#include <string>

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

 private:
  static void on_connection(uv_stream_t* server, int status) noexcept;
  void accept_one();

  ServeContext& ctx_;
  policy::Listener which_;
  std::size_t cap_;
  Factory factory_;
  uv_tcp_t handle_{};
  bool initialised_ = false;
  std::list<Connection*> all_;
  std::list<Connection*> lingering_;
};

}  // namespace appliance::serve
