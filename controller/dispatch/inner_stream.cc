// The byte stream into a space: the place's connect argv as a child of ours.
#include <signal.h>

#include <cstring>

#include "controller/dispatch/internal.h"

namespace controller::dispatch {

namespace {

struct WriteReq {
  uv_write_t req{};
  std::string bytes;
};

}  // namespace

InnerStream::InnerStream(DispatcherImpl& d, std::string space_id) : d_(d), space_(std::move(space_id)) {
  idle_timer.data = this;
}

bool InnerStream::spawn(const std::vector<std::string>& argv, std::string& why) {
  uv_pipe_init(d_.loop, &in_, 0);
  uv_pipe_init(d_.loop, &out_, 0);
  uv_pipe_init(d_.loop, &err_, 0);
  uv_timer_init(d_.loop, &idle_timer);
  in_.data = out_.data = err_.data = this;
  open_handles_ = 4;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  uv_stdio_container_t stdio[3];
  stdio[0].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_READABLE_PIPE);
  stdio[0].data.stream = reinterpret_cast<uv_stream_t*>(&in_);
  stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&out_);
  stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(&err_);
  uv_process_options_t o{};
  o.file = args.empty() || args[0] == nullptr ? "" : args[0];
  o.args = args.data();
  o.exit_cb = &InnerStream::on_exit;
  o.stdio_count = 3;
  o.stdio = stdio;
  // A session of its own: the whole group (docker exec and what it starts) dies on close().
  o.flags = UV_PROCESS_DETACHED;
  proc_.data = this;
  const int rc = argv.empty() ? UV_EINVAL : uv_spawn(d_.loop, &proc_, &o);
  if (rc != 0) {
    why = "spawn " + (argv.empty() ? std::string("(no argv)") : argv[0]) + ": " + uv_strerror(rc);
    broken_ = true;
    exited_ = true;
    // uv_spawn failed: the process handle still has to be closed (libuv initialised it).
    uv_close(reinterpret_cast<uv_handle_t*>(&proc_), &InnerStream::on_closed);
    ++open_handles_;
    close();
    return false;
  }
  spawned_ = true;
  ++open_handles_;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&err_), &InnerStream::on_alloc, &InnerStream::on_err_read);
  return true;
}

void InnerStream::attach(Sink* sink) {
  sink_ = sink;
  uv_timer_stop(&idle_timer);
  if (!reading_ && !closing_) {
    reading_ = true;
    paused_ = false;
    uv_read_start(reinterpret_cast<uv_stream_t*>(&out_), &InnerStream::on_alloc, &InnerStream::on_read);
  } else if (paused_) {
    resume();  // paused for the exchange before (a slow client): the next one starts reading
  }
}

void InnerStream::detach() {
  sink_ = nullptr;
  exited_cb_ = nullptr;
}

void InnerStream::when_exited(std::function<void(bool ok)> exited) {
  if (closing_) return;
  if (exited_) return exited(exited_ok_);
  exited_cb_ = std::move(exited);
}

bool InnerStream::write(std::string bytes) {
  if (closing_ || broken_) return false;
  auto* w = new WriteReq;
  w->bytes = std::move(bytes);
  w->req.data = this;
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  if (uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&in_), &buf, 1, &InnerStream::on_written) != 0) {
    delete w;
    broken_ = true;
    return false;
  }
  return true;
}

void InnerStream::end_input() {
  if (closing_) return;
  auto* req = new uv_shutdown_t;
  if (uv_shutdown(req, reinterpret_cast<uv_stream_t*>(&in_), [](uv_shutdown_t* r, int) noexcept { delete r; }) != 0)
    delete req;
}

std::size_t InnerStream::queued() const {
  return uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&in_));
}

void InnerStream::pause() {
  if (reading_ && !paused_ && !closing_) {
    paused_ = true;
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&out_));
  }
}

void InnerStream::resume() {
  if (reading_ && paused_ && !closing_) {
    paused_ = false;
    uv_read_start(reinterpret_cast<uv_stream_t*>(&out_), &InnerStream::on_alloc, &InnerStream::on_read);
  }
}

void InnerStream::close() {
  if (closing_) return;
  closing_ = true;
  sink_ = nullptr;
  exited_cb_ = nullptr;
  broken_ = true;
  // SIGKILL to the group: docker exec and anything it started on this host.
  if (spawned_ && !exited_) uv_kill(-proc_.pid, SIGKILL);
  for (uv_handle_t* h : {reinterpret_cast<uv_handle_t*>(&in_), reinterpret_cast<uv_handle_t*>(&out_),
                         reinterpret_cast<uv_handle_t*>(&err_), reinterpret_cast<uv_handle_t*>(&idle_timer)})
    uv_close(h, &InnerStream::on_closed);
  // The process handle closes after its exit was seen, so libuv reaps the child.
  if (spawned_ && exited_) uv_close(reinterpret_cast<uv_handle_t*>(&proc_), &InnerStream::on_closed);
}

void InnerStream::on_exit(uv_process_t* p, std::int64_t status, int signal) noexcept {
  auto* self = static_cast<InnerStream*>(p->data);
  self->exited_ = true;
  self->exited_ok_ = status == 0 && signal == 0;
  if (self->closing_) {
    uv_close(reinterpret_cast<uv_handle_t*>(&self->proc_), &InnerStream::on_closed);
    return;
  }
  if (self->exited_cb_) {
    std::function<void(bool)> cb = std::move(self->exited_cb_);
    self->exited_cb_ = nullptr;
    cb(self->exited_ok_);
  }
}

void InnerStream::on_alloc(uv_handle_t* h, std::size_t, uv_buf_t* buf) noexcept {
  auto* self = static_cast<InnerStream*>(h->data);
  if (h == reinterpret_cast<uv_handle_t*>(&self->err_)) *buf = uv_buf_init(self->err_buffer_, sizeof self->err_buffer_);
  else *buf = uv_buf_init(self->buffer_, sizeof self->buffer_);
}

void InnerStream::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept {
  auto* self = static_cast<InnerStream*>(s->data);
  if (n == 0 || self->closing_) return;
  if (n < 0) {
    uv_read_stop(s);
    self->reading_ = false;
    self->broken_ = true;
    if (self->sink_ != nullptr) self->sink_->on_inner_end(n == UV_EOF);
    else self->d_.stream_gone(self);
    return;
  }
  if (self->sink_ == nullptr) {
    // Bytes nobody asked for (an idle pooled stream): the stream is out of step; drop it.
    self->broken_ = true;
    uv_read_stop(s);
    self->reading_ = false;
    self->d_.stream_gone(self);
    return;
  }
  self->sink_->on_inner_data(buf->base, static_cast<std::size_t>(n));
}

void InnerStream::on_err_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept {
  auto* self = static_cast<InnerStream*>(s->data);
  if (n <= 0) {
    if (n < 0) uv_read_stop(s);
    return;
  }
  self->err_text_.append(buf->base, static_cast<std::size_t>(n));
  if (self->err_text_.size() > kStderrKept) self->err_text_.erase(0, self->err_text_.size() - kStderrKept);
}

void InnerStream::on_written(uv_write_t* w, int status) noexcept {
  auto* req = reinterpret_cast<WriteReq*>(w);
  auto* self = static_cast<InnerStream*>(w->data);
  if (status != 0) self->broken_ = true;
  delete req;
  if (self->sink_ != nullptr && !self->closing_ && self->queued() < kHighWater / 2) self->sink_->on_inner_drained();
}

void InnerStream::on_closed(uv_handle_t* h) noexcept {
  InnerStream* self = nullptr;
  if (h->type == UV_TIMER) self = static_cast<InnerStream*>(h->data);
  else self = static_cast<InnerStream*>(h->data);
  if (--self->open_handles_ == 0) {
    DispatcherImpl& d = self->d_;
    delete self;
    d.stream_gone(nullptr);  // lets close_all finish
  }
}

}  // namespace controller::dispatch
