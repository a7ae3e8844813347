// The corridor relay (docs/reference-behaviour.md#relay-performance). In the kernel when it can:
// loop::SpliceRelay moves each direction with splice(2) through a pipe, no byte copied to user
// space; a side stops being read while its pipe holds bytes the other side cannot take yet; EOF
// on one side becomes FIN on the other once its pipe drained. When the pipes or the polls cannot
// be had (no descriptor left, or a stream still writing the 200), two loop::Pumps do the same
// with copies (uv_try_write first, the rest queued; a side stops being read while the other
// side's write queue is above loop::kHighWater and resumes below loop::kLowWater). The tunnel
// ends when both directions ended, on any error, or after --idle-seconds of silence.
#include "appliance/corridor/corridor.h"

namespace appliance::serve {

using Side = loop::SpliceRelay::Side;

void CorridorConnection::start_relay() {
  state_ = State::kRelaying;
  uv_timer_stop(&timer_);
  ctx_.metrics.tunnel_opened();
  uv_tcp_nodelay(&upstream_, 1);
  // From here the relay watches the client itself: libuv's reads of it stop.
  pause_client_reading();
  if (!held_.empty()) ctx_.metrics.relayed_up(held_.size());
  last_activity_ = uv_now(ctx_.loop);
  spliced_ = start_splice();
  if (!spliced_) start_pumps();
  if (closing()) return;
  uv_timer_start(&timer_, on_idle_check, ctx_.options.idle_seconds * 1000, 0);
}

bool CorridorConnection::start_splice() {
  if (splice_.open_pipes() != 0) return false;
  if (splice_.init_poll(Side::kA, ctx_.loop, loop::as_stream(&client_)) != 0) return false;
  opened(loop::as_handle(splice_.poll(Side::kA)));
  if (splice_.init_poll(Side::kB, ctx_.loop, loop::as_stream(&upstream_)) != 0) return false;
  opened(loop::as_handle(splice_.poll(Side::kB)));
  splice_.start(*this, on_client_poll, on_upstream_poll, std::move(held_));
  held_.clear();
  return true;
}

void CorridorConnection::start_pumps() {
  auto* client = loop::as_stream(&client_);
  auto* upstream = loop::as_stream(&upstream_);
  client_reader_.self = this;
  upstream_reader_ = loop::StreamReader(upstream, on_upstream_read);
  up_.start(client_reader_, upstream, *this);
  down_.start(upstream_reader_, client, *this);
  if (!held_.empty()) {
    write_text(upstream, std::move(held_));
    held_.clear();
  }
  if (closing()) return;
  upstream_reader_.resume_reading();
  resume_client_reading();
}

void CorridorConnection::on_client_poll(uv_poll_t* poll, int status, int events) noexcept {
  auto* self = owner_of<CorridorConnection>(poll);
  if (self->closing()) return;
  self->last_activity_ = uv_now(self->ctx_.loop);
  self->splice_.on_poll(Side::kA, status, events);
}

void CorridorConnection::on_upstream_poll(uv_poll_t* poll, int status, int events) noexcept {
  auto* self = owner_of<CorridorConnection>(poll);
  if (self->closing()) return;
  self->last_activity_ = uv_now(self->ctx_.loop);
  self->splice_.on_poll(Side::kB, status, events);
}

void CorridorConnection::splice_moved(Side from, std::size_t bytes) noexcept {
  switch (from) {
    case Side::kA:
      ctx_.metrics.relayed_up(bytes);
      return;
    case Side::kB:
      ctx_.metrics.relayed_down(bytes);
      return;
  }
}

void CorridorConnection::splice_finished(Side) noexcept {
  if (closing() || !splice_.finished(Side::kA) || !splice_.finished(Side::kB)) return;
  state_ = State::kDone;
  close_all();
}

void CorridorConnection::splice_failed(Side side, int status) noexcept {
  if (closing()) return;
  // Reading or writing the upstream failed: the upstream's failure; the client's, not.
  relay_failed(side == Side::kB, status);
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
