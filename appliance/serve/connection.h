// One accepted socket and whatever handles its handler adds (upstream socket, timers). Handle
// memory lives inside this object, a loop::HandleOwner: it never moves and deletes itself after
// the last close callback (docs/decisions.md#handle-lifetime). A refusal is sent with
// finish_with(): the status line, then FIN (uv_shutdown), then every byte still arriving is read
// and discarded until the peer ends, so the close is never an RST that destroys the unread status
// line (docs/reference-behaviour.md#corridor-refusals). At most kMaxLingering such sockets per
// listener linger; the next one evicts the oldest.
#pragma once

#include <uv.h>

#include <cstddef>
#include <list>
#include <memory>
#include <string>

#include "appliance/loop/handle.h"
#include "appliance/loop/write.h"
#include "appliance/serve/context.h"

namespace appliance::serve {

class TcpListener;

inline constexpr std::size_t kMaxLingering = 16;

using loop::Chunk;

class Connection : public loop::HandleOwner, private loop::WriteListener {
 public:
  Connection(ServeContext& ctx, TcpListener& listener);

  uv_tcp_t* client() noexcept { return &client_; }
  // After uv_accept: start reading and let the handler arm its deadlines.
  void start();
  // Closes every handle; the object deletes itself after the last close callback.
  void close_all();

  // Listener bookkeeping (intrusive positions in the listener's lists).
  std::list<Connection*>::iterator all_position;
  std::list<Connection*>::iterator linger_position;
  bool lingering = false;
  // Kept alive between requests (the window): the first evicted when the socket cap is reached.
  std::list<Connection*>::iterator idle_position;
  bool idle = false;

 protected:
  virtual void on_started() {}
  virtual void on_read(Chunk chunk, std::size_t length) = 0;
  // UV_EOF or an error on the client socket (not called while draining).
  virtual void on_client_end(int status) = 0;
  // Close the handler's own handles with close_handle(); called once from close_all().
  virtual void close_own_handles() {}

  // Sends `bytes` on the client socket, then FIN, then drains and lingers (see above).
  void finish_with(std::string bytes);
  // Writes `bytes` on `stream`; a failed write closes everything.
  void write_text(uv_stream_t* stream, std::string bytes);
  // Stops reading the client (backpressure).
  void pause_client_reading();
  // Restarts reading the client after a pause (backpressure).
  void resume_client_reading();
  // Between two requests (keep-alive): evictable when the listener's socket cap is reached.
  void mark_idle(bool between_requests);

  ServeContext& ctx_;
  TcpListener& listener_;
  uv_tcp_t client_{};
  bool draining_ = false;

 private:
  static void on_client_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_finish_shutdown(uv_shutdown_t* req, int status) noexcept;
  void on_written(int status) noexcept override;
  void on_all_closed() noexcept override;

  uv_shutdown_t finish_shutdown_{};
};

}  // namespace appliance::serve
