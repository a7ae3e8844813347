// The corridor relay (docs/reference-behaviour.md#relay-performance): uv_try_write first, the rest
// queued; a side stops being read while the other side's write queue is above kRelayHighWater and
// resumes below kRelayLowWater; EOF on one side becomes uv_shutdown (FIN) on the other once its
// queue drained; the tunnel ends when both directions ended, on any error, or after --idle-seconds
// of silence.
#include "appliance/serve/corridor.h"

namespace appliance::serve {

struct CorridorConnection::RelayWrite {
  uv_write_t req{};
  Chunk chunk;
  CorridorConnection* self = nullptr;
  Direction* direction = nullptr;
};

namespace {

struct RelayShutdown {
  uv_shutdown_t req{};
  void* self = nullptr;
  void* direction = nullptr;
};

}  // namespace

void CorridorConnection::start_relay() {
  state_ = State::kRelaying;
  uv_timer_stop(&timer_);
  ctx_.metrics.tunnel_opened();
  auto* client = reinterpret_cast<uv_stream_t*>(&client_);
  auto* upstream = reinterpret_cast<uv_stream_t*>(&upstream_);
  uv_tcp_nodelay(&upstream_, 1);
  up_ = Direction{client, upstream, false, false, false, true};
  down_ = Direction{upstream, client, false, false, false, false};
  if (!held_.empty()) {
    ctx_.metrics.relayed_up(held_.size());
    write_text(upstream, std::move(held_));
    held_.clear();
  }
  if (closing()) return;
  last_activity_ = uv_now(ctx_.loop);
  uv_read_start(upstream, alloc_chunk, on_upstream_read);
  resume_client_reading();
  uv_timer_start(&timer_, on_idle_check, ctx_.options.idle_seconds * 1000, 0);
}

void CorridorConnection::relay(Direction& d, Chunk chunk, std::size_t length) {
  last_activity_ = uv_now(ctx_.loop);
  if (d.upstream_side) {
    ctx_.metrics.relayed_up(length);
  } else {
    ctx_.metrics.relayed_down(length);
  }
  uv_buf_t buf = uv_buf_init(chunk.get(), static_cast<unsigned>(length));
  if (uv_stream_get_write_queue_size(d.to) == 0) {
    const int n = uv_try_write(d.to, &buf, 1);
    if (n == static_cast<int>(length)) return;
    if (n < 0 && n != UV_EAGAIN) {
      relay_failed(d, d.upstream_side, n);
      return;
    }
    if (n > 0) {
      buf.base += n;
      buf.len -= static_cast<std::size_t>(n);
    }
  }
  auto* w = new RelayWrite;
  w->chunk = std::move(chunk);
  w->self = this;
  w->direction = &d;
  w->req.data = w;
  const int rc = uv_write(&w->req, d.to, &buf, 1, on_relay_written);
  if (rc != 0) {
    delete w;
    relay_failed(d, d.upstream_side, rc);
    return;
  }
  if (!d.paused && uv_stream_get_write_queue_size(d.to) > kRelayHighWater) {
    uv_read_stop(d.from);
    d.paused = true;
  }
}

void CorridorConnection::on_relay_written(uv_write_t* req, int status) noexcept {
  auto* w = static_cast<RelayWrite*>(req->data);
  CorridorConnection* self = w->self;
  Direction& d = *w->direction;
  delete w;
  if (status == UV_ECANCELED || self->closing()) return;
  if (status < 0) {
    self->relay_failed(d, d.upstream_side, status);
    return;
  }
  self->last_activity_ = uv_now(self->ctx_.loop);
  if (d.paused && !d.from_ended && uv_stream_get_write_queue_size(d.to) < kRelayLowWater) {
    d.paused = false;
    if (d.upstream_side) {
      self->resume_client_reading();
    } else {
      uv_read_start(d.from, alloc_chunk, on_upstream_read);
    }
  }
}

void CorridorConnection::on_upstream_read(uv_stream_t* stream, ssize_t nread,
                                          const uv_buf_t* buf) noexcept {
  auto* self = static_cast<CorridorConnection*>(stream->data);
  Chunk chunk(buf->base);
  if (self->closing() || nread == 0) return;
  if (nread == UV_EOF) {
    self->end_of(self->down_);
    return;
  }
  if (nread < 0) {
    self->relay_failed(self->down_, true, static_cast<int>(nread));
    return;
  }
  self->relay(self->down_, std::move(chunk), static_cast<std::size_t>(nread));
}

void CorridorConnection::end_of(Direction& d) {
  if (d.from_ended) return;
  d.from_ended = true;
  uv_read_stop(d.from);
  // Half-close passed through: uv_shutdown waits for the queued writes, then sends FIN.
  auto* s = new RelayShutdown;
  s->self = this;
  s->direction = &d;
  s->req.data = s;
  const int rc = uv_shutdown(&s->req, d.to, on_relay_shutdown);
  if (rc != 0) {
    delete s;
    relay_failed(d, d.upstream_side, rc);
  }
}

void CorridorConnection::on_relay_shutdown(uv_shutdown_t* req, int status) noexcept {
  auto* s = static_cast<RelayShutdown*>(req->data);
  auto* self = static_cast<CorridorConnection*>(s->self);
  auto* d = static_cast<Direction*>(s->direction);
  delete s;
  if (status == UV_ECANCELED || self->closing()) return;
  if (status < 0) {
    self->relay_failed(*d, d->upstream_side, status);
    return;
  }
  self->finish_direction(*d);
}

void CorridorConnection::finish_direction(Direction& d) {
  d.done = true;
  if (up_.done && down_.done) {
    state_ = State::kDone;
    close_all();
  }
}

void CorridorConnection::relay_failed(Direction&, bool upstream_failed, int status) {
  // Never a 502 into a live stream: bytes already flowed. The upstream's error is journalled;
  // the client's own going away is not a failure of the connection out.
  if (upstream_failed && status != UV_EOF) {
    ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port,
                        policy::Decision::with_detail(policy::Word::kFailed, uv_err_name(status)));
  }
  state_ = State::kDone;
  close_all();
}

void CorridorConnection::on_idle_check(uv_timer_t* timer) noexcept {
  auto* self = static_cast<CorridorConnection*>(timer->data);
  if (self->closing() || self->state_ != State::kRelaying) return;
  const std::uint64_t idle_ms = self->ctx_.options.idle_seconds * 1000;
  const std::uint64_t quiet = uv_now(self->ctx_.loop) - self->last_activity_;
  if (quiet >= idle_ms) {
    self->state_ = State::kDone;
    self->close_all();
    return;
  }
  uv_timer_start(timer, on_idle_check, idle_ms - quiet, 0);
}

}  // namespace appliance::serve
