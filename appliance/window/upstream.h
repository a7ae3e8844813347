// Connections from the window to grant upstreams, and their keep-alive pool.
//
// An UpstreamConnection owns its TCP handle (and a TLS session for https). It is a
// loop::HandleOwner: its memory lives until the last close callback
// (docs/decisions.md#handle-lifetime); it outlives the window request
// that dialled it when it goes back to the pool. A connection serves one key (grant id + upstream +
// the address decide_window_answers() checked when it was dialled). The pool is bounded: at most
// --max-upstream-sockets connections in all, idle or busy, whatever their keys (idle ones are
// closed first to make room; past that, requests wait in order). An idle connection is closed
// after kPoolIdleMs, on any byte or EOF from the upstream, and at shutdown.
#pragma once

#include <uv.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "appliance/loop/handle.h"
#include "appliance/loop/write.h"
#include "appliance/tls/tls_client.h"
#include "policy/window.h"

namespace appliance::serve {

struct ServeContext;
class UpstreamPool;

// Shorter than common server keep-alive timeouts (nginx 75 s, Node 5 s) so the window rarely
// sends on a connection the upstream is closing.
inline constexpr std::uint64_t kPoolIdleMs = 4'000;

// The window side of one exchange.
class UpstreamUser {
 public:
  virtual ~UpstreamUser() = default;
  virtual void upstream_ready() = 0;  // connected (and TLS verified)
  virtual void upstream_data(const char* data, std::size_t length) = 0;  // plaintext
  virtual void upstream_ended() = 0;                                     // FIN or close_notify
  virtual void upstream_failed(std::string_view detail) = 0;             // errno name or tls-* word
  virtual void upstream_drained() = 0;  // write queue below kLowWater
};

class UpstreamConnection final : public loop::HandleOwner, private loop::WriteListener {
 public:
  // Writes plaintext (encrypted first for https). Errors reach the user as upstream_failed.
  void send(std::string_view plaintext);
  [[nodiscard]] std::size_t queued() const noexcept;
  void pause_reading();
  void resume_reading();
  // The user is done. Reusable: back to the pool (idle), else closed.
  void release(bool reusable);
  [[nodiscard]] bool reused() const noexcept { return reused_; }
  [[nodiscard]] const std::string& key() const noexcept { return key_; }
  // The address and port this connection was dialled to, as decide_window_answers() chose them.
  [[nodiscard]] const policy::WindowEndpoint& endpoint() const noexcept { return *endpoint_; }

 private:
  friend class UpstreamPool;
  UpstreamConnection(UpstreamPool& pool, std::string key);
  int dial(const policy::WindowEndpoint& endpoint, std::unique_ptr<TlsSession> tls);
  void attach(UpstreamUser* user);
  void close();
  void fail(std::string_view detail);
  void write_raw(std::string bytes);
  void flush_tls();
  void became_ready();
  void on_written(int status) noexcept override;
  static void on_connected(uv_connect_t* req, int status) noexcept;
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_idle_timeout(uv_timer_t* timer) noexcept;

  UpstreamPool& pool_;
  std::string key_;
  uv_tcp_t tcp_{};
  uv_timer_t timer_{};
  uv_connect_t connect_req_{};
  std::unique_ptr<TlsSession> tls_;
  std::optional<policy::WindowEndpoint> endpoint_;
  UpstreamUser* user_ = nullptr;
  bool connected_ = false;
  bool idle_ = false;
  bool reading_ = false;
  bool reused_ = false;
  std::list<UpstreamConnection*>::iterator idle_position_;
  std::list<UpstreamConnection*>::iterator all_position_;
};

// A request that waits for room in the pool.
class PoolWaiter {
 public:
  virtual ~PoolWaiter() = default;
  virtual void pool_has_room() = 0;
  bool waiting = false;
  std::list<PoolWaiter*>::iterator position;
};

class UpstreamPool {
 public:
  UpstreamPool(ServeContext& ctx, std::size_t max_total);
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // An idle connection for `key`, attached to `user` (the caller then sends at once), or a new
  // one being dialled (upstream_ready follows). nullptr with `error` empty: the pool is full
  // (then wait()); with `error` set: the dial failed at once (an errno name).
  UpstreamConnection* acquire(const std::string& key, const policy::WindowEndpoint& endpoint,
                              const TlsContext* tls_context, const policy::UpstreamUrl& upstream,
                              UpstreamUser* user, bool fresh_only, std::string& error);
  // An idle connection whose key starts with `route` (grant id + upstream, ending in '\n'), most
  // recently idle first, attached to `user`; nullptr when there is none. Its endpoint was checked
  // when it was dialled, so a request that takes it needs no DNS answer of its own.
  UpstreamConnection* reuse_idle(std::string_view route, UpstreamUser* user);
  void wait(PoolWaiter* waiter);
  void cancel(PoolWaiter* waiter);
  void shut_down();
  // Closes every connection of `grant_id`, idle or busy (a busy one fails with `detail`).
  // Returns how many.
  std::size_t close_grant(std::string_view grant_id, std::string_view detail);

  [[nodiscard]] std::size_t open() const noexcept { return all_.size(); }
  [[nodiscard]] std::size_t idle() const noexcept { return idle_.size(); }
  [[nodiscard]] std::uint64_t dialled() const noexcept { return dialled_; }
  [[nodiscard]] std::uint64_t reused() const noexcept { return reused_count_; }

 private:
  friend class UpstreamConnection;
  UpstreamConnection* take_idle(UpstreamConnection* c, UpstreamUser* user);
  void make_idle(UpstreamConnection* c);
  void leave_idle(UpstreamConnection* c);
  void closing(UpstreamConnection* c);
  void wake_one();

  ServeContext& ctx_;
  std::size_t max_total_;
  std::list<UpstreamConnection*> all_;
  std::list<UpstreamConnection*> idle_;  // oldest first, every key (a scan of ≤ max_total_)
  std::list<PoolWaiter*> waiters_;
  std::uint64_t dialled_ = 0;
  std::uint64_t reused_count_ = 0;
  bool shut_ = false;
};

}  // namespace appliance::serve
