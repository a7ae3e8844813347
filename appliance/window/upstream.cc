#include "appliance/window/upstream.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "appliance/loop/address.h"
#include "appliance/loop/limits.h"
#include "appliance/serve/connection.h"
#include "appliance/serve/context.h"
#include "appliance/serve/interfaces.h"
#include "policy/secret.h"

namespace appliance::serve {

using loop::as_handle;
using loop::as_stream;

UpstreamConnection::UpstreamConnection(UpstreamPool& pool, std::string key)
    : pool_(pool), key_(std::move(key)) {
  uv_tcp_init(pool_.ctx_.loop, &tcp_);
  opened(as_handle(&tcp_));
  uv_timer_init(pool_.ctx_.loop, &timer_);
  opened(as_handle(&timer_));
}

int UpstreamConnection::dial(const policy::WindowEndpoint& endpoint,
                             std::unique_ptr<TlsSession> tls) {
  tls_ = std::move(tls);
  endpoint_ = endpoint;
  // docs/decisions.md#dial-only-what-was-approved: the only address dialled is the one
  // decide_window_answers() checked.
  const sockaddr_storage storage = socket_address(endpoint.address(), endpoint.port());
  return uv_tcp_connect(&connect_req_, &tcp_, loop::as_sockaddr(storage), on_connected);
}

void UpstreamConnection::attach(UpstreamUser* user) { user_ = user; }

void UpstreamConnection::on_connected(uv_connect_t* req, int status) noexcept {
  auto* self = owner_of<UpstreamConnection>(req->handle);
  if (status == UV_ECANCELED || self->closing()) return;
  if (status < 0) {
    self->fail(uv_err_name(status));
    return;
  }
  self->connected_ = true;
  uv_tcp_nodelay(&self->tcp_, 1);
  self->resume_reading();
  if (!self->tls_) {
    self->became_ready();
    return;
  }
  std::string detail;
  if (self->tls_->handshake(detail) != TlsSession::Progress::kOk) {
    self->fail(detail);
    return;
  }
  self->flush_tls();
}

void UpstreamConnection::became_ready() {
  if (user_ != nullptr) user_->upstream_ready();
}

void UpstreamConnection::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* self = owner_of<UpstreamConnection>(stream);
  const loop::Chunk chunk(buf->base);
  if (self->closing() || nread == 0) return;
  if (self->idle_) {
    // An idle connection owes nothing: a byte is a protocol error, EOF is the server closing.
    self->close();
    return;
  }
  if (nread == UV_EOF) {
    if (self->user_ != nullptr) {
      UpstreamUser* user = self->user_;
      self->user_ = nullptr;
      user->upstream_ended();
    }
    self->close();
    return;
  }
  if (nread < 0) {
    self->fail(uv_err_name(static_cast<int>(nread)));
    return;
  }
  const auto length = static_cast<std::size_t>(nread);
  if (!self->tls_) {
    if (self->user_ != nullptr) self->user_->upstream_data(chunk.get(), length);
    return;
  }
  const bool was_done = self->tls_->handshake_done();
  std::string plaintext;
  std::string detail;
  const TlsSession::Progress p = self->tls_->receive(chunk.get(), length, plaintext, detail);
  self->flush_tls();
  if (self->closing()) return;
  if (!was_done && self->tls_->handshake_done() && p == TlsSession::Progress::kOk) {
    self->became_ready();
  }
  if (self->closing()) return;
  if (!plaintext.empty() && self->user_ != nullptr) {
    self->user_->upstream_data(plaintext.data(), plaintext.size());
  }
  if (self->closing()) return;
  switch (p) {
    case TlsSession::Progress::kOk:
      return;
    case TlsSession::Progress::kClosed:
      if (self->user_ != nullptr) {
        UpstreamUser* user = self->user_;
        self->user_ = nullptr;
        user->upstream_ended();
      }
      self->close();
      return;
    case TlsSession::Progress::kFailed:
      self->fail(detail);
      return;
  }
}

void UpstreamConnection::flush_tls() {
  if (!tls_ || closing()) return;
  std::string out = tls_->take_output();
  if (!out.empty()) write_raw(std::move(out));
}

void UpstreamConnection::send(std::string_view plaintext) {
  if (closing()) return;
  if (!tls_) {
    if (!connected_) {
      write_raw(std::string(plaintext));  // the copy is wiped by write_raw's paths
      return;
    }
    // What the socket takes now is written from the caller's buffer (the request head is wiped
    // by its owner, the exchange); only a rest is copied, into a write request wiped when done.
    const int rc = loop::send(as_stream(&tcp_), plaintext, this, loop::Wipe::kYes);
    if (rc != 0) fail(uv_err_name(rc));
    return;
  }
  std::string detail;
  if (tls_->send(plaintext, detail) != TlsSession::Progress::kOk) {
    fail(detail);
    return;
  }
  flush_tls();
}

void UpstreamConnection::write_raw(std::string bytes) {
  // A plain-http request head holds the grant's secret: every write buffer is wiped before it is
  // freed (what was written, and the stale bytes uv_try_write leaves past the end). Before the
  // connection is up, everything is queued (uv_try_write needs a connected socket).
  auto* stream = as_stream(&tcp_);
  const int rc = connected_ ? loop::send(stream, std::move(bytes), this, loop::Wipe::kYes)
                            : loop::write(stream, std::move(bytes), this, loop::Wipe::kYes);
  if (rc != 0) fail(uv_err_name(rc));
}

void UpstreamConnection::on_written(int status) noexcept {
  if (status == UV_ECANCELED || closing()) return;
  if (status < 0) {
    fail(uv_err_name(status));
    return;
  }
  if (user_ != nullptr && queued() < loop::kLowWater) user_->upstream_drained();
}

std::size_t UpstreamConnection::queued() const noexcept {
  return uv_stream_get_write_queue_size(loop::as_stream(&tcp_));
}

void UpstreamConnection::pause_reading() {
  if (!reading_ || closing()) return;
  uv_read_stop(loop::as_stream(&tcp_));
  reading_ = false;
}

void UpstreamConnection::resume_reading() {
  if (reading_ || closing() || !connected_) return;
  if (uv_read_start(as_stream(&tcp_), loop::alloc_chunk, on_read) == 0) reading_ = true;
}

void UpstreamConnection::release(bool reusable) {
  user_ = nullptr;
  if (closing()) return;
  if (!reusable || !connected_ || queued() != 0 || pool_.shut_) {
    close();
    return;
  }
  resume_reading();  // an idle connection still notices the upstream closing it
  pool_.make_idle(this);
}

void UpstreamConnection::fail(std::string_view detail) {
  if (closing()) return;
  UpstreamUser* user = user_;
  user_ = nullptr;
  close();
  if (user != nullptr) user->upstream_failed(detail);
}

void UpstreamConnection::on_idle_timeout(uv_timer_t* timer) noexcept {
  auto* self = owner_of<UpstreamConnection>(timer);
  if (self->idle_) self->close();
}

void UpstreamConnection::close() {
  if (!begin_closing()) return;
  user_ = nullptr;
  pool_.closing(this);
  close_handle(as_handle(&tcp_));
  close_handle(as_handle(&timer_));
}

// ------------------------------------------------------------------------------------- pool
UpstreamPool::UpstreamPool(ServeContext& ctx, std::size_t max_total)
    : ctx_(ctx), max_total_(max_total) {}

UpstreamConnection* UpstreamPool::acquire(const std::string& key,
                                          const policy::WindowEndpoint& endpoint,
                                          const TlsContext* tls_context,
                                          const policy::UpstreamUrl& upstream, UpstreamUser* user,
                                          bool fresh_only, std::string& error) {
  if (shut_) {
    error = "shutting-down";
    return nullptr;
  }
  if (!fresh_only) {
    // Most recently idle first: the least likely to be closing on the other side.
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
      if ((*it)->key_ == key) return take_idle(*it, user);
    }
  }
  if (all_.size() >= max_total_ && !idle_.empty()) {
    idle_.front()->close();  // oldest idle makes room
  }
  if (all_.size() >= max_total_) return nullptr;
  std::unique_ptr<TlsSession> tls;
  if (upstream.scheme == "https") {
    auto session = TlsSession::start(*tls_context, upstream.host,
                                     policy::upstream_literal(upstream).has_value());
    if (!session) {
      error = "tls-setup";
      return nullptr;
    }
    tls = std::move(session.value());
  }
  auto* c = new UpstreamConnection(*this, key);
  all_.push_back(c);
  c->all_position_ = std::prev(all_.end());
  ++dialled_;
  if (const int rc = c->dial(endpoint, std::move(tls)); rc != 0) {
    c->close();
    error = uv_err_name(rc);
    return nullptr;
  }
  c->attach(user);
  return c;
}

UpstreamConnection* UpstreamPool::reuse_idle(std::string_view route, UpstreamUser* user) {
  if (shut_) return nullptr;
  for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
    if (std::string_view((*it)->key_).substr(0, route.size()) == route) return take_idle(*it, user);
  }
  return nullptr;
}

UpstreamConnection* UpstreamPool::take_idle(UpstreamConnection* c, UpstreamUser* user) {
  leave_idle(c);
  c->reused_ = true;
  c->attach(user);
  ++reused_count_;
  return c;
}

void UpstreamPool::make_idle(UpstreamConnection* c) {
  // No cap per key: as many idle as were busy at once (a burst of N requests keeps N connections
  // for the next burst), within --max-upstream-sockets in all.
  idle_.push_back(c);
  c->idle_position_ = std::prev(idle_.end());
  c->idle_ = true;
  uv_timer_start(&c->timer_, UpstreamConnection::on_idle_timeout, kPoolIdleMs, 0);
  wake_one();
}

void UpstreamPool::leave_idle(UpstreamConnection* c) {
  if (!c->idle_) return;
  idle_.erase(c->idle_position_);
  c->idle_ = false;
  uv_timer_stop(&c->timer_);
}

void UpstreamPool::closing(UpstreamConnection* c) {
  leave_idle(c);
  all_.erase(c->all_position_);
  wake_one();
}

void UpstreamPool::wake_one() {
  if (waiters_.empty() || shut_) return;
  PoolWaiter* w = waiters_.front();
  waiters_.pop_front();
  w->waiting = false;
  w->pool_has_room();
}

void UpstreamPool::wait(PoolWaiter* waiter) {
  if (waiter->waiting) return;
  waiters_.push_back(waiter);
  waiter->position = std::prev(waiters_.end());
  waiter->waiting = true;
}

void UpstreamPool::cancel(PoolWaiter* waiter) {
  if (!waiter->waiting) return;
  waiters_.erase(waiter->position);
  waiter->waiting = false;
}

std::size_t UpstreamPool::close_grant(std::string_view grant_id, std::string_view detail) {
  // Pool keys start with "<grant id>\n" (WindowConnection::pool_route); ids hold no '\n'.
  const std::string prefix = std::string(grant_id) + "\n";
  const std::list<UpstreamConnection*> every = all_;  // fail() erases from all_
  std::size_t closed = 0;
  for (UpstreamConnection* c : every) {
    if (c->key().starts_with(prefix)) {
      c->fail(detail);
      ++closed;
    }
  }
  return closed;
}

void UpstreamPool::shut_down() {
  shut_ = true;
  for (PoolWaiter* w : waiters_) w->waiting = false;
  waiters_.clear();
  // close() erases from all_: walk a copy.
  const std::list<UpstreamConnection*> every = all_;
  for (UpstreamConnection* c : every) c->close();
}

}  // namespace appliance::serve
