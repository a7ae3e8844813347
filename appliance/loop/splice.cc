#include "appliance/loop/splice.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include "appliance/loop/handle.h"

namespace appliance::loop {
namespace {

constexpr unsigned kSpliceFlags = SPLICE_F_NONBLOCK | SPLICE_F_MOVE;

}  // namespace

int SpliceRelay::open_pipes() noexcept {
  int a_to_b[2];
  int b_to_a[2];
  if (::pipe2(a_to_b, O_NONBLOCK | O_CLOEXEC) != 0) return -errno;
  if (::pipe2(b_to_a, O_NONBLOCK | O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(a_to_b[0]);
    ::close(a_to_b[1]);
    return -err;
  }
  a_.pipe_read.reset(a_to_b[0]);
  a_.pipe_write.reset(a_to_b[1]);
  b_.pipe_read.reset(b_to_a[0]);
  b_.pipe_write.reset(b_to_a[1]);
  return 0;
}

int SpliceRelay::init_poll(Side side, uv_loop_t* loop, uv_stream_t* stream) noexcept {
  Direction& d = dir(side);
  uv_os_fd_t fd = -1;
  if (const int rc = uv_fileno(as_handle(stream), &fd); rc != 0) return rc;
  if (const int rc = uv_poll_init(loop, &d.poll, fd); rc != 0) return rc;
  d.fd = fd;
  return 0;
}

void SpliceRelay::start(Events& events, uv_poll_cb on_a, uv_poll_cb on_b,
                        std::string a_to_b_first) noexcept {
  events_ = &events;
  on_a_ = on_a;
  on_b_ = on_b;
  a_.first = std::move(a_to_b_first);
  run(Side::kA);  // the held bytes go first; reading waits for the polls
  rewatch();
}

void SpliceRelay::on_poll(Side side, int status, int poll_events) noexcept {
  if (stopped_) return;
  if (status < 0) {
    // libuv reports a socket's POLLERR as UV_EBADF: the socket's own error says what happened
    // (ECONNRESET, ETIMEDOUT...).
    int err = 0;
    socklen_t len = sizeof err;
    if (status == UV_EBADF && ::getsockopt(dir(side).fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
        err != 0) {
      status = -err;
    }
    fail(side, status);
    return;
  }
  // Errors and hang-ups arrive as the events asked for (libuv adds them): the next splice on
  // the socket reports the error or the EOF.
  if ((poll_events & UV_READABLE) != 0) {
    dir(side).source_idle = false;
    run(side);
  }
  if ((poll_events & UV_WRITABLE) != 0 && !stopped_) {
    dir(other(side)).sink_blocked = false;
    run(other(side));
  }
  rewatch();
}

void SpliceRelay::run(Side from) noexcept {
  Direction& d = dir(from);
  const Side to = other(from);
  const int out = dir(to).fd;
  std::size_t budget = kSpliceTurnBudget;
  while (!stopped_ && !d.finished) {
    if (d.first_sent < d.first.size()) {
      if (d.sink_blocked) return;
      const ssize_t n = ::send(out, d.first.data() + d.first_sent, d.first.size() - d.first_sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          d.sink_blocked = true;
        } else {
          fail(to, -errno);
        }
        return;
      }
      d.first_sent += static_cast<std::size_t>(n);
      if (d.first_sent == d.first.size()) {
        std::string().swap(d.first);
        d.first_sent = 0;
      }
      continue;
    }
    if (d.in_pipe > 0) {
      if (d.sink_blocked) return;
      const ssize_t n = ::splice(d.pipe_read.get(), nullptr, out, nullptr, d.in_pipe, kSpliceFlags);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || errno == EAGAIN) {
          d.sink_blocked = true;
        } else {
          fail(to, -errno);
        }
        return;
      }
      d.in_pipe -= static_cast<std::size_t>(n);
      continue;
    }
    if (d.source_ended) {
      // Everything read was written: pass the FIN on.
      if (::shutdown(out, SHUT_WR) != 0) {
        fail(to, -errno);
        return;
      }
      d.finished = true;
      events_->splice_finished(from);
      return;
    }
    if (d.source_idle || budget == 0) return;
    // The pipe is empty here, so EAGAIN can only mean the socket has nothing to read.
    const ssize_t n =
        ::splice(d.fd, nullptr, d.pipe_write.get(), nullptr, kSpliceRequest, kSpliceFlags);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        d.source_idle = true;
      } else {
        fail(from, -errno);
      }
      return;
    }
    if (n == 0) {
      d.source_ended = true;
      continue;
    }
    const auto moved = static_cast<std::size_t>(n);
    if (!d.grown && moved >= kPipeDefaultBytes) {
      // This direction carries bulk: a larger pipe moves it in fewer, larger splices (and wakes
      // both peers less often). Best effort and once: a refusal (the user's pipe budget is
      // spent) leaves the pipe as it is. The pipe holds `moved` bytes; growing keeps them.
      d.grown = true;
      (void)::fcntl(d.pipe_write.get(), F_SETPIPE_SZ, static_cast<int>(kPipeBytes));
    }
    d.in_pipe = moved;
    budget -= moved < budget ? moved : budget;
    events_->splice_moved(from, moved);
  }
}

int SpliceRelay::pipe_capacity(Side from) const noexcept {
  const int n = ::fcntl(dir(from).pipe_write.get(), F_GETPIPE_SZ);
  return n < 0 ? -errno : n;
}

void SpliceRelay::fail(Side side, int status) noexcept {
  if (stopped_) return;
  stopped_ = true;
  events_->splice_failed(side, status);
}

void SpliceRelay::rewatch() noexcept {
  rewatch(Side::kA);
  rewatch(Side::kB);
}

void SpliceRelay::rewatch(Side side) noexcept {
  if (stopped_) return;
  Direction& d = dir(side);
  const Direction& back = dir(other(side));
  int want = 0;
  if (!d.finished && !d.source_ended && !pending(d)) want |= UV_READABLE;
  if (pending(back) && back.sink_blocked) want |= UV_WRITABLE;
  if (want == d.watching) return;
  d.watching = want;
  if (want == 0) {
    (void)uv_poll_stop(&d.poll);
    return;
  }
  if (const int rc = uv_poll_start(&d.poll, want, side == Side::kA ? on_a_ : on_b_); rc != 0) {
    fail(side, rc);
  }
}

}  // namespace appliance::loop
