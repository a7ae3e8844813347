#include "appliance/serve/listener.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "appliance/loop/address.h"
#include "appliance/loop/handle.h"
#include "appliance/serve/connection.h"
#include "appliance/serve/interfaces.h"

namespace appliance::serve {

TcpListener::TcpListener(ServeContext& ctx, policy::Listener which, std::size_t cap, Factory factory)
    : ctx_(ctx), which_(which), cap_(cap), factory_(factory) {}

TcpListener::~TcpListener() = default;

policy::Result<std::uint16_t> TcpListener::listen_on(const policy::Address& address,
                                                     std::uint16_t port) {
  const sockaddr_storage storage = socket_address(address, port);
  const std::string where = std::string(policy::listener_text(which_)) + " listener on " +
                            address.to_string() + ":" + std::to_string(port);
  uv_tcp_init(ctx_.loop, &handle_);
  handle_.data = this;
  initialised_ = true;
  int rc = uv_tcp_bind(&handle_, loop::as_sockaddr(storage), address.is_v4() ? 0 : UV_TCP_IPV6ONLY);
  if (rc == 0) rc = uv_listen(loop::as_stream(&handle_), 511, on_connection);
  if (rc != 0) return policy::Error{"bind " + where + ": " + uv_err_name(rc)};
  // Taken now, before any descriptor pressure; socket(2) stays allowed under the filter.
  reserve_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!reserve_) {
    return policy::Error{"socket (reserve descriptor of the " + where +
                         "): " + std::strerror(errno)};
  }
  uv_timer_init(ctx_.loop, &retake_);
  retake_.data = this;
  retake_initialised_ = true;
  std::uint16_t real_port = 0;
  if (const int got = loop::local_port(&handle_, real_port); got != 0) {
    return policy::Error{"getsockname " + where + ": " + uv_err_name(got)};
  }
  return real_port;
}

void TcpListener::on_connection(uv_stream_t* server, int status) noexcept {
  auto* self = static_cast<TcpListener*>(server->data);
  if (status == UV_EMFILE || status == UV_ENFILE) {
    self->refuse_at_descriptor_limit();
    return;
  }
  // Another accept error (ENOBUFS, ENOMEM) must not end the listener; libuv retries later.
  if (status < 0) return;
  self->accept_one();
}

void TcpListener::refuse_at_descriptor_limit() {
  // accept4(2) fails with EMFILE before it looks at the backlog, so at the limit libuv's accept
  // loop can only end when a descriptor is free. libuv answers the first EMFILE with its own
  // reserve (uv__emfile_trick) and then reopens it with openat, which the filter refuses
  // (serve/confine.cc): from the second EMFILE on it calls back and retries at once, for ever.
  // So: free a descriptor (our reserve, else one of our connections), accept every pending
  // connection and close it at once (the space sees the connection closed, like any socket over
  // the cap), and return with the descriptor still free, so libuv's next accept4 sees EAGAIN and
  // its loop ends. The reserve is taken again on the next loop turn.
  if (reserve_) {
    reserve_.reset();
  } else if (!evict_one()) {
    for (TcpListener* other : ctx_.listeners) {
      if (other != nullptr && other != this && other->evict_one()) break;
    }
  }
  int listen_fd = -1;
  if (uv_fileno(loop::as_handle(&handle_), &listen_fd) == 0) {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;  // EAGAIN: the backlog is empty
      ::close(fd);
      ctx_.metrics.dropped_over_cap(which_);
      ctx_.journal.note(which_, policy::Word::kDenyTooManyConnections);
    }
  }
  if (retake_initialised_) uv_timer_start(&retake_, on_retake_reserve, 0, 0);
}

void TcpListener::on_retake_reserve(uv_timer_t* timer) noexcept {
  auto* self = static_cast<TcpListener*>(timer->data);
  if (!self->reserve_) self->reserve_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
}

bool TcpListener::evict_one() {
  Connection* victim = !idle_.empty() ? idle_.front() : nullptr;
  for (Connection* c : all_) {
    if (victim != nullptr) break;
    if (!c->closing()) victim = c;
  }
  if (victim == nullptr) return false;
  if (victim->idle) stop_idle(victim);
  victim->close_all();  // uv_close closes a stream's descriptor at once
  return true;
}

void TcpListener::accept_one() {
  auto* server = loop::as_stream(&handle_);
  // An evicted connection leaves all_ in its close callback, a loop turn later: the cap counts
  // the sockets not yet closing.
  if (all_.size() - closing_count() >= cap_ && !idle_.empty()) {
    Connection* oldest = idle_.front();
    stop_idle(oldest);
    oldest->close_all();
  }
  if (all_.size() - closing_count() >= cap_) {
    if (loop::accept_and_close(ctx_.loop, server) == 0) {
      ctx_.metrics.dropped_over_cap(which_);
      ctx_.journal.note(which_, policy::Word::kDenyTooManyConnections);
    }
    return;
  }
  Connection* connection = factory_(ctx_, *this);
  if (uv_accept(server, loop::as_stream(connection->client())) != 0) {
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
  if (initialised_ && !uv_is_closing(loop::as_handle(&handle_))) {
    uv_close(loop::as_handle(&handle_), nullptr);
  }
  if (retake_initialised_ && !uv_is_closing(loop::as_handle(&retake_))) {
    uv_close(loop::as_handle(&retake_), nullptr);
  }
  // close_all() only schedules closes; the list changes in close callbacks, later.
  for (Connection* connection : all_) connection->close_all();
}

}  // namespace appliance::serve
