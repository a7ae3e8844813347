#include "appliance/serve/connection.h"

#include <cstdlib>

#include "appliance/serve/listener.h"

namespace appliance::serve {
namespace {

struct TextWrite {
  uv_write_t req{};
  std::string bytes;
  Connection* owner = nullptr;
};

}  // namespace

int write_what_fits(uv_stream_t* stream, std::string& bytes) {
  if (bytes.empty()) return 0;
  uv_buf_t buf = uv_buf_init(bytes.data(), static_cast<unsigned>(bytes.size()));
  const int n = uv_try_write(stream, &buf, 1);
  if (n == UV_EAGAIN) return 0;  // also when writes are queued: the order is kept
  if (n < 0) return n;
  bytes.erase(0, static_cast<std::size_t>(n));
  return 0;
}

Connection::Connection(ServeContext& ctx, TcpListener& listener) : ctx_(ctx), listener_(listener) {
  uv_tcp_init(ctx_.loop, &client_);
  client_.data = this;
  opened(reinterpret_cast<uv_handle_t*>(&client_));
}

void Connection::opened(uv_handle_t* handle) {
  handle->data = this;
  ++open_handles_;
}

void Connection::close_handle(uv_handle_t* handle) {
  if (handle->data == nullptr || uv_is_closing(handle)) return;
  uv_close(handle, on_handle_closed);
}

void Connection::on_handle_closed(uv_handle_t* handle) noexcept {
  auto* self = static_cast<Connection*>(handle->data);
  handle->data = nullptr;
  if (--self->open_handles_ == 0) {
    self->listener_.forget(self);
    delete self;
  }
}

void Connection::start() {
  uv_tcp_nodelay(&client_, 1);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&client_), alloc_chunk, on_client_read);
  on_started();
}

void Connection::resume_client_reading() {
  uv_read_start(reinterpret_cast<uv_stream_t*>(&client_), alloc_chunk, on_client_read);
}

void Connection::mark_idle(bool between_requests) {
  if (between_requests) {
    listener_.start_idle(this);
  } else {
    listener_.stop_idle(this);
  }
}

void Connection::close_all() {
  if (closing_) return;
  closing_ = true;
  listener_.note_closing();
  if (lingering) listener_.stop_lingering(this);
  if (idle) listener_.stop_idle(this);
  close_own_handles();
  close_handle(reinterpret_cast<uv_handle_t*>(&client_));
}

void Connection::alloc_chunk(uv_handle_t*, std::size_t, uv_buf_t* buf) noexcept {
  buf->base = static_cast<char*>(std::malloc(kReadChunk));
  buf->len = buf->base == nullptr ? 0 : kReadChunk;
}

void Connection::on_client_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* self = static_cast<Connection*>(stream->data);
  Chunk chunk(buf->base);
  if (self->closing_) return;
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
  auto* w = new TextWrite;
  w->bytes = std::move(bytes);
  w->owner = this;
  w->req.data = w;
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  if (uv_write(&w->req, stream, &buf, 1, on_text_written) != 0) {
    delete w;
    close_all();
  }
}

void Connection::on_text_written(uv_write_t* req, int status) noexcept {
  auto* w = static_cast<TextWrite*>(req->data);
  Connection* owner = w->owner;
  delete w;
  if (status < 0 && status != UV_ECANCELED) owner->close_all();
}

void Connection::finish_with(std::string bytes) {
  if (closing_ || draining_) return;
  draining_ = true;
  auto* stream = reinterpret_cast<uv_stream_t*>(&client_);
  write_text(stream, std::move(bytes));
  if (closing_) return;
  auto* req = new uv_shutdown_t;
  req->data = this;
  if (uv_shutdown(req, stream, on_finish_shutdown) != 0) {
    delete req;
    close_all();
    return;
  }
  // Keep reading (and discarding) even if the handler had paused the client.
  uv_read_start(stream, alloc_chunk, on_client_read);
  listener_.start_lingering(this);
}

void Connection::on_finish_shutdown(uv_shutdown_t* req, int status) noexcept {
  auto* self = static_cast<Connection*>(req->data);
  delete req;
  if (status < 0 && status != UV_ECANCELED) self->close_all();
}

}  // namespace appliance::serve
