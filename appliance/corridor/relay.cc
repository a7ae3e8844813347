// The corridor relay (docs/reference-behaviour.md#relay-performance): two loop::Pumps, one each
// way (uv_try_write first, the rest queued; a side stops being read while the other side's write
// queue is above loop::kHighWater and resumes below loop::kLowWater; EOF on one side becomes FIN
// on the other once its queue drained). The tunnel ends when both directions ended, on any
// error, or after --idle-seconds of silence.
#include "appliance/corridor/corridor.h"

namespace appliance::serve {

void CorridorConnection::start_relay() {
  state_ = State::kRelaying;
  uv_timer_stop(&timer_);
  ctx_.metrics.tunnel_opened();
  auto* client = loop::as_stream(&client_);
  auto* upstream = loop::as_stream(&upstream_);
  uv_tcp_nodelay(&upstream_, 1);
  client_reader_.self = this;
  upstream_reader_ = loop::StreamReader(upstream, on_upstream_read);
  up_.start(client_reader_, upstream, *this);
  down_.start(upstream_reader_, client, *this);
  if (!held_.empty()) {
    ctx_.metrics.relayed_up(held_.size());
    write_text(upstream, std::move(held_));
    held_.clear();
  }
  if (closing()) return;
  last_activity_ = uv_now(ctx_.loop);
  upstream_reader_.resume_reading();
  resume_client_reading();
  uv_timer_start(&timer_, on_idle_check, ctx_.options.idle_seconds * 1000, 0);
}

void CorridorConnection::pump_moved(loop::Pump& pump, std::size_t bytes) noexcept {
  if (closing()) return;
  last_activity_ = uv_now(ctx_.loop);
  if (bytes == 0) return;
  if (&pump == &up_) {
    ctx_.metrics.relayed_up(bytes);
  } else {
    ctx_.metrics.relayed_down(bytes);
  }
}

void CorridorConnection::pump_finished(loop::Pump&) noexcept {
  if (closing() || !up_.finished() || !down_.finished()) return;
  state_ = State::kDone;
  close_all();
}

void CorridorConnection::pump_failed(loop::Pump& pump, int status) noexcept {
  if (closing()) return;
  // Writing (or half-closing) the upstream failed: the upstream's failure; the client's, not.
  relay_failed(&pump == &up_, status);
}

void CorridorConnection::on_upstream_read(uv_stream_t* stream, ssize_t nread,
                                          const uv_buf_t* buf) noexcept {
  auto* self = owner_of<CorridorConnection>(stream);
  Chunk chunk(buf->base);
  if (self->closing() || nread == 0) return;
  if (nread == UV_EOF) {
    self->down_.end();
    return;
  }
  if (nread < 0) {
    self->relay_failed(true, static_cast<int>(nread));
    return;
  }
  self->down_.push(std::move(chunk), static_cast<std::size_t>(nread));
}

void CorridorConnection::relay_failed(bool upstream_failed, int status) {
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
  auto* self = owner_of<CorridorConnection>(timer);
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
