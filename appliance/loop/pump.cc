#include "appliance/loop/pump.h"

#include <utility>

namespace appliance::loop {

void StreamReader::pause_reading() noexcept { uv_read_stop(stream_); }

void StreamReader::resume_reading() noexcept {
  // Fails only on a closing stream, whose owner is going away anyway.
  (void)uv_read_start(stream_, alloc_chunk, on_read_);
}

void Pump::start(Reader& from, uv_stream_t* to, Events& events) noexcept {
  from_ = &from;
  to_ = to;
  events_ = &events;
}

void Pump::push(Chunk chunk, std::size_t length) noexcept {
  if (failed_ || from_ended_) return;
  events_->pump_moved(*this, length);
  std::size_t offset = 0;
  if (uv_stream_get_write_queue_size(to_) == 0) {
    uv_buf_t buf = uv_buf_init(chunk.get(), static_cast<unsigned>(length));
    const int n = uv_try_write(to_, &buf, 1);
    if (n == static_cast<int>(length)) return;
    if (n < 0 && n != UV_EAGAIN) {
      failed_ = true;
      events_->pump_failed(*this, n);
      return;
    }
    if (n > 0) offset = static_cast<std::size_t>(n);
  }
  if (const int rc = write(to_, std::move(chunk), offset, length - offset, this); rc != 0) {
    failed_ = true;
    events_->pump_failed(*this, rc);
    return;
  }
  if (marks_.over(uv_stream_get_write_queue_size(to_))) from_->pause_reading();
}

void Pump::on_written(int status) noexcept {
  if (status == UV_ECANCELED || failed_) return;
  if (status < 0) {
    failed_ = true;
    events_->pump_failed(*this, status);
    return;
  }
  events_->pump_moved(*this, 0);
  if (marks_.under(uv_stream_get_write_queue_size(to_)) && !from_ended_) from_->resume_reading();
}

void Pump::end() noexcept {
  if (from_ended_ || failed_) return;
  from_ended_ = true;
  from_->pause_reading();
  // uv_shutdown waits for the queued writes, then sends FIN.
  shutdown_.data = this;
  if (const int rc = uv_shutdown(&shutdown_, to_, on_shutdown); rc != 0) {
    failed_ = true;
    events_->pump_failed(*this, rc);
  }
}

void Pump::on_shutdown(uv_shutdown_t* req, int status) noexcept {
  auto* self = static_cast<Pump*>(req->data);
  if (status == UV_ECANCELED || self->failed_) return;
  if (status < 0) {
    self->failed_ = true;
    self->events_->pump_failed(*self, status);
    return;
  }
  self->finished_ = true;
  self->events_->pump_finished(*self);
}

}  // namespace appliance::loop
