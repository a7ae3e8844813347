#include "appliance/serve/connection.h"

#include "appliance/serve/listener.h"

namespace appliance::serve {

using loop::as_handle;
using loop::as_stream;

Connection::Connection(ServeContext& ctx, TcpListener& listener) : ctx_(ctx), listener_(listener) {
  uv_tcp_init(ctx_.loop, &client_);
  opened(as_handle(&client_));
}

void Connection::on_all_closed() noexcept { listener_.forget(this); }

void Connection::start() {
  uv_tcp_nodelay(&client_, 1);
  resume_client_reading();
  on_started();
}

void Connection::pause_client_reading() { uv_read_stop(as_stream(&client_)); }

void Connection::resume_client_reading() {
  // Fails only on a closing stream, whose connection is going away anyway.
  (void)uv_read_start(as_stream(&client_), loop::alloc_chunk, on_client_read);
}

void Connection::mark_idle(bool between_requests) {
  if (between_requests) {
    listener_.start_idle(this);
  } else {
    listener_.stop_idle(this);
  }
}

void Connection::close_all() {
  if (!begin_closing()) return;
  listener_.note_closing();
  if (lingering) listener_.stop_lingering(this);
  if (idle) listener_.stop_idle(this);
  close_own_handles();
  close_handle(as_handle(&client_));
}

void Connection::on_client_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* self = owner_of<Connection>(stream);
  Chunk chunk(buf->base);
  if (self->closing()) return;
  if (nread == 0) return;  // EAGAIN
  if (self->draining_) {
    // Refused: discard what still arrives; the peer's FIN or error ends the socket.
    if (nread < 0) self->close_all();
    return;
  }
  if (nread < 0) {
    self->on_client_end(static_cast<int>(nread));
    return;
  }
  self->on_read(std::move(chunk), static_cast<std::size_t>(nread));
}

void Connection::write_text(uv_stream_t* stream, std::string bytes) {
  if (loop::write(stream, std::move(bytes), this) != 0) close_all();
}

void Connection::on_written(int status) noexcept {
  if (status < 0 && status != UV_ECANCELED) close_all();
}

void Connection::finish_with(std::string bytes) {
  if (closing() || draining_) return;
  draining_ = true;
  auto* stream = as_stream(&client_);
  write_text(stream, std::move(bytes));
  if (closing()) return;
  finish_shutdown_.data = this;
  if (uv_shutdown(&finish_shutdown_, stream, on_finish_shutdown) != 0) {
    close_all();
    return;
  }
  // Keep reading (and discarding) even if the handler had paused the client.
  resume_client_reading();
  listener_.start_lingering(this);
}

void Connection::on_finish_shutdown(uv_shutdown_t* req, int status) noexcept {
  auto* self = static_cast<Connection*>(req->data);
  if (status < 0 && status != UV_ECANCELED) self->close_all();
}

}  // namespace appliance::serve
