#include "appliance/serve/listener.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "appliance/serve/connection.h"

namespace appliance::serve {

TcpListener::TcpListener(ServeContext& ctx, policy::Listener which, std::size_t cap, Factory factory)
    : ctx_(ctx), which_(which), cap_(cap), factory_(factory) {}

policy::Result<std::uint16_t> TcpListener::listen_on(const policy::Address& address,
                                                     std::uint16_t port) {
  sockaddr_storage storage{};
  if (address.is_v4()) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&storage);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    std::memcpy(&sin->sin_addr, address.bytes().data(), 4);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&storage);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    std::memcpy(&sin6->sin6_addr, address.bytes().data(), 16);
  }
  const std::string where = std::string(policy::listener_text(which_)) + " listener on " +
                            address.to_string() + ":" + std::to_string(port);
  uv_tcp_init(ctx_.loop, &handle_);
  handle_.data = this;
  initialised_ = true;
  int rc = uv_tcp_bind(&handle_, reinterpret_cast<const sockaddr*>(&storage),
                       address.is_v4() ? 0 : UV_TCP_IPV6ONLY);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&handle_), 511, on_connection);
  if (rc != 0) return policy::Error{"bind " + where + ": " + uv_err_name(rc)};
  sockaddr_storage bound{};
  int length = sizeof bound;
  uv_tcp_getsockname(&handle_, reinterpret_cast<sockaddr*>(&bound), &length);
  const std::uint16_t real_port =
      bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                 : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return real_port;
}

void TcpListener::on_connection(uv_stream_t* server, int status) noexcept {
  auto* self = static_cast<TcpListener*>(server->data);
  // An accept error (EMFILE, ENOBUFS) must not end the listener; libuv retries later.
  if (status < 0) return;
  self->accept_one();
}

void TcpListener::accept_one() {
  auto* server = reinterpret_cast<uv_stream_t*>(&handle_);
  // An evicted connection leaves all_ in its close callback, a loop turn later: the cap counts
  // the sockets not yet closing.
  if (all_.size() - closing_count() >= cap_ && !idle_.empty()) {
    Connection* oldest = idle_.front();
    stop_idle(oldest);
    oldest->close_all();
  }
  if (all_.size() - closing_count() >= cap_) {
    auto* dropped = new uv_tcp_t;
    uv_tcp_init(ctx_.loop, dropped);
    if (uv_accept(server, reinterpret_cast<uv_stream_t*>(dropped)) == 0) {
      ctx_.metrics.dropped_over_cap(which_);
      ctx_.journal.note(which_, policy::Word::kDenyTooManyConnections);
    }
    uv_close(reinterpret_cast<uv_handle_t*>(dropped),
             [](uv_handle_t* h) noexcept { delete reinterpret_cast<uv_tcp_t*>(h); });
    return;
  }
  Connection* connection = factory_(ctx_, *this);
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(connection->client())) != 0) {
    all_.push_front(connection);
    connection->all_position = all_.begin();
    connection->close_all();
    return;
  }
  all_.push_back(connection);
  connection->all_position = std::prev(all_.end());
  ctx_.metrics.accepted(which_);
  connection->start();
}

void TcpListener::forget(Connection* connection) {
  if (connection->lingering) stop_lingering(connection);
  if (connection->idle) stop_idle(connection);
  if (connection->closing()) --closing_;
  all_.erase(connection->all_position);
}

void TcpListener::start_lingering(Connection* connection) {
  if (connection->lingering) return;
  lingering_.push_back(connection);
  connection->linger_position = std::prev(lingering_.end());
  connection->lingering = true;
  if (lingering_.size() > kMaxLingering) {
    Connection* oldest = lingering_.front();
    stop_lingering(oldest);
    oldest->close_all();
  }
}

void TcpListener::stop_lingering(Connection* connection) {
  if (!connection->lingering) return;
  lingering_.erase(connection->linger_position);
  connection->lingering = false;
}

void TcpListener::start_idle(Connection* connection) {
  if (connection->idle) return;
  idle_.push_back(connection);
  connection->idle_position = std::prev(idle_.end());
  connection->idle = true;
}

void TcpListener::stop_idle(Connection* connection) {
  if (!connection->idle) return;
  idle_.erase(connection->idle_position);
  connection->idle = false;
}

void TcpListener::shut_down() {
  if (initialised_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&handle_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&handle_), nullptr);
  }
  // close_all() only schedules closes; the list changes in close callbacks, later.
  for (Connection* connection : all_) connection->close_all();
}

}  // namespace appliance::serve
