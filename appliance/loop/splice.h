// Relaying a tunnel inside the kernel: each direction is splice(2) from one socket into a pipe
// and from the pipe into the other socket, so no byte is copied to or from user space and the
// loop thread does nothing per byte but the two system calls.
//
// Each side is watched by a uv_poll_t on the socket's own descriptor. libuv allows that only
// while the uv_tcp_t of the same descriptor watches nothing (no read started, no write queued):
// init_polls() refuses otherwise (UV_EEXIST), and the caller then relays with Pumps instead. The
// uv_tcp_t keeps owning the descriptor; its owner closes the polls before the streams.
//
// Backpressure: a direction reads its source only while its pipe is empty, so the bytes held in
// the kernel for one direction never exceed one pipe's capacity (64 KiB, kPipeBytes once the
// direction carried bulk, less when the kernel's per-user pipe budget shrank it), no more than
// the Pump's kHighWater; the rest waits in the source socket's receive buffer, and TCP slows the
// sender. Half-close: the source's EOF becomes
// shutdown(SHUT_WR) on the destination once the pipe drained.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "appliance/loop/unique_fd.h"

namespace appliance::loop {

// Bytes one splice into a pipe may take: more than a pipe holds, so the kernel stops at the
// pipe's capacity or at what the socket has, whichever is less.
inline constexpr std::size_t kSpliceRequest = 1024 * 1024;
// A pipe starts at the kernel's default capacity (kPipeDefaultBytes). The first splice that
// fills it shows the direction carries bulk: its pipe is then asked for kPipeBytes (fcntl
// F_SETPIPE_SZ), once. Measured on 2 vCPUs (tests/bench/README.md, bench_corridor): a quarter
// fewer CPU seconds per GiB relayed at 256 KiB, and nothing more worth having at 1 MiB. The
// kernel counts every pipe's capacity against its user's budget (fs.pipe-user-pages-soft), shared
// by every gatekeeper of a host running as the same uid: only tunnels that move bulk spend four
// times the default, and a refusal (budget spent, or above fs.pipe-max-size) keeps the pipe as
// it was. Worst case per tunnel: 2 × kPipeBytes of kernel memory held in its pipes.
inline constexpr std::size_t kPipeDefaultBytes = 64 * 1024;
inline constexpr std::size_t kPipeBytes = 256 * 1024;
// Bytes one direction moves per readiness event before it yields to the rest of the loop (a
// level-triggered poll reports the socket again at once); the same share as libuv's 32 reads of
// kReadChunk.
inline constexpr std::size_t kSpliceTurnBudget = 2 * 1024 * 1024;

class SpliceRelay {
 public:
  // a: the side that opened the tunnel (the client), b: the other (the upstream).
  enum class Side : std::uint8_t { kA = 0, kB };

  class Events {
   public:
    // `bytes` were read from `from` (counted once, when they entered the pipe).
    virtual void splice_moved(Side from, std::size_t bytes) noexcept = 0;
    // The direction out of `from` passed its FIN on (shutdown of the other side).
    virtual void splice_finished(Side from) noexcept = 0;
    // Reading or writing `side`'s socket failed (a uv error code); nothing more moves.
    virtual void splice_failed(Side side, int status) noexcept = 0;

   protected:
    ~Events() = default;
  };

  SpliceRelay() = default;
  SpliceRelay(const SpliceRelay&) = delete;
  SpliceRelay& operator=(const SpliceRelay&) = delete;

  // One pipe per direction (pipe2, non-blocking): 0, or a uv error (UV_EMFILE...) with nothing
  // held.
  [[nodiscard]] int open_pipes() noexcept;
  // uv_poll_init on the descriptor of `side`'s stream: 0, or a uv error with the poll not
  // initialised (UV_EEXIST: the stream still watches its descriptor). After 0 the caller counts
  // the poll as its handle (HandleOwner::opened) and closes it before the stream.
  [[nodiscard]] int init_poll(Side side, uv_loop_t* loop, uv_stream_t* stream) noexcept;
  [[nodiscard]] uv_poll_t* poll(Side side) noexcept { return &dir(side).poll; }

  // Starts both directions; `a_to_b_first`: bytes already read from a (held before the relay
  // began), written to b ahead of anything spliced. The caller's poll callbacks hand every event
  // to on_poll().
  void start(Events& events, uv_poll_cb on_a, uv_poll_cb on_b, std::string a_to_b_first) noexcept;
  void on_poll(Side side, int status, int poll_events) noexcept;

  // Nothing moves and no poll is restarted after this (the owner is closing the polls).
  void stop() noexcept { stopped_ = true; }
  [[nodiscard]] bool finished(Side from) const noexcept { return dir(from).finished; }
  // The capacity of the pipe of the direction out of `from` (fcntl F_GETPIPE_SZ), or a negative
  // errno.
  [[nodiscard]] int pipe_capacity(Side from) const noexcept;

 private:
  // One side: its socket, and the direction that reads it (named by the side it reads).
  struct Direction {
    uv_poll_t poll{};  // watches this side's socket, for both directions' needs
    int fd = -1;       // this side's socket (owned by its uv_tcp_t)
    UniqueFd pipe_read;
    UniqueFd pipe_write;
    std::string first;           // user-space bytes to send before the pipe (a → b only)
    std::size_t first_sent = 0;  //
    std::size_t in_pipe = 0;     // spliced in, not yet out
    bool source_idle = true;     // the last splice in found nothing (EAGAIN): wait for readable
    bool sink_blocked = false;   // the last write out found no room (EAGAIN): wait for writable
    bool source_ended = false;   // EOF read
    bool finished = false;       // FIN passed on
    bool grown = false;          // asked for kPipeBytes already (carries bulk)
    int watching = 0;            // UV_READABLE | UV_WRITABLE as last given to uv_poll_start
  };

  Direction& dir(Side side) noexcept { return side == Side::kA ? a_ : b_; }
  const Direction& dir(Side side) const noexcept { return side == Side::kA ? a_ : b_; }
  static Side other(Side side) noexcept { return side == Side::kA ? Side::kB : Side::kA; }
  [[nodiscard]] static bool pending(const Direction& d) noexcept {
    return d.in_pipe > 0 || d.first_sent < d.first.size();
  }
  // Moves what the kernel lets move now out of `from`, within one turn's budget.
  void run(Side from) noexcept;
  void fail(Side side, int status) noexcept;
  // uv_poll_start / uv_poll_stop on each side whose wanted events changed.
  void rewatch() noexcept;
  void rewatch(Side side) noexcept;

  Direction a_;
  Direction b_;
  Events* events_ = nullptr;
  uv_poll_cb on_a_ = nullptr;
  uv_poll_cb on_b_ = nullptr;
  bool stopped_ = false;  // failed, or the owner closes
};

}  // namespace appliance::loop
