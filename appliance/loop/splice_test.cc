// The relay in the kernel (SpliceRelay) on a real loop and real sockets on 127.0.0.1: large
// transfers exact both ways at once, the bytes held before the relay first, half-close each way,
// a reader that stops (backpressure), a peer that resets mid-stream, and the refusal to watch a
// descriptor its stream still watches. Every test ends with uv_loop_close() == 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>

#include "appliance/loop/address.h"
#include "appliance/loop/handle.h"
#include "appliance/loop/splice.h"
#include "appliance/loop/testing/loop_fixture.h"

namespace appliance::loop {
namespace {

using Side = SpliceRelay::Side;

using testing::connect_loopback;
using testing::Listener;

// A byte that depends on its position and the stream: a dropped, repeated or reordered block
// shows as a mismatch at its offset.
char pattern(std::uint32_t seed, std::uint64_t at) {
  const std::uint64_t x = (at ^ (at >> 11) ^ (at >> 23)) * 0x9E3779B97F4A7C15ull + seed;
  return static_cast<char>(x >> 56);
}

// One peer of the test: sends `total` pattern bytes (after `first`), checks every byte it reads
// against the other peer's pattern.
struct Peer {
  int fd = -1;
  std::uint32_t send_seed = 0;
  std::uint64_t total = 0;
  std::uint64_t sent = 0;
  std::uint32_t expect_seed = 0;
  std::uint64_t received = 0;
  std::uint64_t mismatches = 0;
  bool eof = false;
  int read_error = 0;

  void send_some() {
    char buf[65536];
    while (sent < total) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, total - sent));
      for (std::size_t i = 0; i < n; ++i) buf[i] = pattern(send_seed, sent + i);
      const ssize_t w = ::send(fd, buf, n, MSG_NOSIGNAL);
      if (w <= 0) return;
      sent += static_cast<std::uint64_t>(w);
    }
  }
  void read_some() {
    char buf[65536];
    while (!eof && read_error == 0) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n == 0) eof = true;
      if (n < 0 && errno != EAGAIN) read_error = errno;
      if (n <= 0) return;
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] != pattern(expect_seed, received + static_cast<std::uint64_t>(i))) ++mismatches;
      }
      received += static_cast<std::uint64_t>(n);
    }
  }
};

struct Outcome {
  std::uint64_t moved[2] = {0, 0};
  int finished[2] = {0, 0};
  int failures = 0;
  Side failed_side = Side::kA;
  int failed_status = 0;
  bool deleted = false;
};

// Two accepted sockets A and B relayed by a SpliceRelay; closes itself on a failure or once
// both directions finished, and deletes itself after its last close callback.
class SplicedTunnel final : public HandleOwner, private SpliceRelay::Events {
 public:
  SplicedTunnel(uv_loop_t* loop, Outcome& outcome) : loop_(loop), outcome_(outcome) {}
  ~SplicedTunnel() override { outcome_.deleted = true; }

  void accept(uv_stream_t* server) {
    uv_tcp_t& t = accepted_ == 0 ? a_ : b_;
    uv_tcp_init(loop_, &t);
    opened(as_handle(&t));
    ASSERT_EQ(uv_accept(server, as_stream(&t)), 0);
    ++accepted_;
  }
  [[nodiscard]] int accepted() const { return accepted_; }
  // Starts the relay: 0, or the error of the step that failed.
  int start(std::string first = {}) {
    if (const int rc = relay_.open_pipes(); rc != 0) return rc;
    if (const int rc = relay_.init_poll(Side::kA, loop_, as_stream(&a_)); rc != 0) return rc;
    opened(as_handle(relay_.poll(Side::kA)));
    if (const int rc = relay_.init_poll(Side::kB, loop_, as_stream(&b_)); rc != 0) return rc;
    opened(as_handle(relay_.poll(Side::kB)));
    relay_.start(*this, on_poll_a, on_poll_b, std::move(first));
    return 0;
  }
  uv_stream_t* a() { return as_stream(&a_); }
  [[nodiscard]] int pipe_capacity(Side from) const { return relay_.pipe_capacity(from); }
  void close_all() {
    if (!begin_closing()) return;
    relay_.stop();
    close_handle(as_handle(relay_.poll(Side::kA)));
    close_handle(as_handle(relay_.poll(Side::kB)));
    close_handle(as_handle(&a_));
    close_handle(as_handle(&b_));
  }

 private:
  static void on_poll_a(uv_poll_t* poll, int status, int events) noexcept {
    auto* self = owner_of<SplicedTunnel>(poll);
    if (!self->closing()) self->relay_.on_poll(Side::kA, status, events);
  }
  static void on_poll_b(uv_poll_t* poll, int status, int events) noexcept {
    auto* self = owner_of<SplicedTunnel>(poll);
    if (!self->closing()) self->relay_.on_poll(Side::kB, status, events);
  }
  void splice_moved(Side from, std::size_t bytes) noexcept override {
    outcome_.moved[static_cast<int>(from)] += bytes;
  }
  void splice_finished(Side from) noexcept override {
    ++outcome_.finished[static_cast<int>(from)];
    if (relay_.finished(Side::kA) && relay_.finished(Side::kB)) close_all();
  }
  void splice_failed(Side side, int status) noexcept override {
    ++outcome_.failures;
    outcome_.failed_side = side;
    outcome_.failed_status = status;
    close_all();
  }

  uv_loop_t* loop_;
  Outcome& outcome_;
  uv_tcp_t a_{};
  uv_tcp_t b_{};
  int accepted_ = 0;
  SpliceRelay relay_;
};

// The listener, the tunnel and the two peers a (→ A) and b (→ B).
struct Rig {
  Listener listener;
  Outcome outcome;
  SplicedTunnel* tunnel = nullptr;
  Peer a;
  Peer b;
};

// The shared loop fixture (testing/loop_fixture.h): ten seconds by default, the loop turned
// without a pause (the transfers are large).
class SpliceTest : public testing::LoopFixture {
 protected:
  SpliceTest() : LoopFixture(10000, 0) {}
  // The tunnel between two accepted sockets, and the peers a and b connected to them.
  void connect_pair(Rig& s) {
    s.tunnel = new SplicedTunnel(&loop_, s.outcome);
    s.listener.on_accept = [&s](uv_stream_t* server) { s.tunnel->accept(server); };
    s.listener.open(&loop_);
    s.a.fd = connect_loopback(s.listener.port);
    ASSERT_TRUE(run_until([&] { return s.tunnel->accepted() == 1; }));
    s.b.fd = connect_loopback(s.listener.port);
    ASSERT_TRUE(run_until([&] { return s.tunnel->accepted() == 2; }));
    ASSERT_GE(s.a.fd, 0);
    ASSERT_GE(s.b.fd, 0);
    s.a.send_seed = 1;
    s.b.expect_seed = 1;
    s.b.send_seed = 2;
    s.a.expect_seed = 2;
  }
  // Turns the loop while `from` sends and `to` reads, until `to` holds all `from` sends.
  bool deliver(Peer& from, Peer& to) {
    return run_until([&] {
      from.send_some();
      to.read_some();
      return to.received == from.total;
    });
  }
  static void close_peers(Rig& s) {
    ::close(s.a.fd);
    ::close(s.b.fd);
  }
};

TEST_F(SpliceTest, RelaysSixtyFourMiBEachWayAtOnceByteExact) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  ASSERT_EQ(s.tunnel->start(), 0);
  constexpr std::uint64_t kTotal = 64ull << 20;
  s.a.total = kTotal;
  s.b.total = kTotal;
  EXPECT_TRUE(run_until(
      [&] {
        s.a.send_some();
        s.b.send_some();
        s.a.read_some();
        s.b.read_some();
        return s.a.received == kTotal && s.b.received == kTotal;
      },
      120000));
  EXPECT_EQ(s.a.mismatches, 0u);
  EXPECT_EQ(s.b.mismatches, 0u);
  EXPECT_EQ(s.outcome.moved[0], kTotal);
  EXPECT_EQ(s.outcome.moved[1], kTotal);
  ::shutdown(s.a.fd, SHUT_WR);
  ::shutdown(s.b.fd, SHUT_WR);
  EXPECT_TRUE(run_until([&] {
    s.a.read_some();
    s.b.read_some();
    return s.a.eof && s.b.eof && s.outcome.deleted;
  }));
  EXPECT_EQ(s.outcome.failures, 0);
  close_peers(s);
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, BytesHeldBeforeTheRelaySetOffFirstAndInOrder) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  // a's first 100 KiB were read before the relay (the corridor's ClientHello): they are handed
  // over as user bytes and must reach b ahead of what a sends next.
  constexpr std::uint64_t kFirst = 100 * 1024;
  std::string first(kFirst, '\0');
  for (std::uint64_t i = 0; i < kFirst; ++i) first[i] = pattern(1, i);
  ASSERT_EQ(s.tunnel->start(std::move(first)), 0);
  s.a.sent = kFirst;
  s.a.total = kFirst + (4 << 20);
  EXPECT_TRUE(deliver(s.a, s.b));
  EXPECT_EQ(s.b.mismatches, 0u);
  EXPECT_EQ(s.outcome.moved[0], s.a.total - kFirst) << "held bytes are counted by the caller";
  close_peers(s);
  EXPECT_TRUE(run_until([&] { return s.outcome.deleted; }));
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, OnlyADirectionThatCarriesBulkGrowsItsPipe) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  ASSERT_EQ(s.tunnel->start(), 0);
  ASSERT_EQ(s.tunnel->pipe_capacity(Side::kA), static_cast<int>(kPipeDefaultBytes));
  ASSERT_EQ(s.tunnel->pipe_capacity(Side::kB), static_cast<int>(kPipeDefaultBytes));
  // a → b carries 16 MiB (a splice fills the pipe), b → a a few bytes at a time.
  constexpr std::uint64_t kBulk = 16ull << 20;
  s.a.total = kBulk;
  s.b.total = 100;
  EXPECT_TRUE(run_until([&] {
    s.a.send_some();
    s.b.send_some();
    s.a.read_some();
    s.b.read_some();
    return s.b.received == kBulk && s.a.received == 100;
  }));
  EXPECT_EQ(s.b.mismatches, 0u);
  EXPECT_EQ(s.a.mismatches, 0u);
  // (The growth is best effort: it would be refused only with this user's pipe budget spent.)
  EXPECT_EQ(s.tunnel->pipe_capacity(Side::kA), static_cast<int>(kPipeBytes));
  EXPECT_EQ(s.tunnel->pipe_capacity(Side::kB), static_cast<int>(kPipeDefaultBytes));
  ::close(s.a.fd);
  ::close(s.b.fd);
  EXPECT_TRUE(run_until([&] { return s.outcome.deleted; }));
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, HalfClosePassesThroughEachWayAndDataStillFlowsBack) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  ASSERT_EQ(s.tunnel->start(), 0);
  s.a.total = 1 << 20;
  EXPECT_TRUE(deliver(s.a, s.b));
  ASSERT_EQ(::shutdown(s.a.fd, SHUT_WR), 0);
  EXPECT_TRUE(run_until([&] {
    s.b.read_some();
    return s.b.eof;
  })) << "a's FIN reaches b";
  EXPECT_EQ(s.outcome.finished[0], 1);
  EXPECT_EQ(s.outcome.finished[1], 0);
  EXPECT_FALSE(s.outcome.deleted) << "the other direction still runs";
  // b still sends after a's FIN, then ends too.
  s.b.total = 3 << 20;
  EXPECT_TRUE(deliver(s.b, s.a));
  ASSERT_EQ(::shutdown(s.b.fd, SHUT_WR), 0);
  EXPECT_TRUE(run_until([&] {
    s.a.read_some();
    return s.a.eof && s.outcome.deleted;
  }));
  EXPECT_EQ(s.outcome.finished[1], 1);
  EXPECT_EQ(s.outcome.failures, 0);
  EXPECT_EQ(s.a.mismatches + s.b.mismatches, 0u);
  close_peers(s);
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, AReaderThatStopsHoldsTheSenderBackAndLosesNothing) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  ASSERT_EQ(s.tunnel->start(), 0);
  // a sends 64 MiB while b reads nothing: the relay must stop reading A once B's buffers are
  // full, so a's sends stall well before all of it left (loopback autotuning holds about 20 MiB
  // over the four sockets; the relay itself one pipe).
  constexpr std::uint64_t kTotal = 64ull << 20;
  s.a.total = kTotal;
  run_until(
      [&] {
        s.a.send_some();
        return s.a.sent == kTotal;
      },
      1500);
  EXPECT_LT(s.a.sent, kTotal) << "the sender was never held back";
  EXPECT_LT(s.outcome.moved[0], kTotal) << "the relay kept reading a stalled direction";
  // b reads slowly, a bit at a time: everything arrives exactly, and the sender finishes.
  EXPECT_TRUE(run_until(
      [&] {
        s.a.send_some();
        char buf[4096];
        const ssize_t n = ::read(s.b.fd, buf, sizeof buf);
        for (ssize_t i = 0; i < n; ++i) {
          if (buf[i] != pattern(1, s.b.received + static_cast<std::uint64_t>(i))) ++s.b.mismatches;
        }
        if (n > 0) s.b.received += static_cast<std::uint64_t>(n);
        if (s.b.received > kTotal / 2) s.b.read_some();  // then at full speed
        return s.b.received == kTotal;
      },
      120000));
  EXPECT_EQ(s.b.mismatches, 0u);
  EXPECT_EQ(s.outcome.failures, 0);
  close_peers(s);
  EXPECT_TRUE(run_until([&] { return s.outcome.deleted; }));
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, APeerThatResetsMidStreamFailsItsSideAndEndsTheTunnel) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  ASSERT_EQ(s.tunnel->start(), 0);
  s.a.total = 256ull << 20;
  EXPECT_TRUE(run_until([&] {
    s.a.send_some();
    s.b.read_some();
    return s.b.received >= (1 << 20);
  }));
  // b resets (RST, not FIN) while a keeps sending.
  const linger hard{1, 0};
  ASSERT_EQ(::setsockopt(s.b.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard), 0);
  ::close(s.b.fd);
  EXPECT_TRUE(run_until([&] {
    s.a.send_some();
    s.a.read_some();
    return s.outcome.deleted && (s.a.eof || s.a.read_error != 0);
  }));
  EXPECT_EQ(s.outcome.failures, 1);
  EXPECT_EQ(s.outcome.failed_side, Side::kB);
  EXPECT_TRUE(s.outcome.failed_status == UV_ECONNRESET || s.outcome.failed_status == UV_EPIPE)
      << uv_err_name(s.outcome.failed_status);
  EXPECT_LT(s.a.sent, s.a.total);
  ::close(s.a.fd);
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, ASourceThatResetsFailsItsOwnSide) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  ASSERT_EQ(s.tunnel->start(), 0);
  s.a.total = 1 << 20;
  EXPECT_TRUE(deliver(s.a, s.b));
  const linger hard{1, 0};
  ASSERT_EQ(::setsockopt(s.a.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard), 0);
  ::close(s.a.fd);
  EXPECT_TRUE(run_until([&] {
    s.b.read_some();
    return s.outcome.deleted && (s.b.eof || s.b.read_error != 0);
  }));
  EXPECT_EQ(s.outcome.failures, 1);
  EXPECT_EQ(s.outcome.failed_side, Side::kA);
  EXPECT_EQ(s.outcome.failed_status, UV_ECONNRESET) << uv_err_name(s.outcome.failed_status);
  EXPECT_EQ(s.b.mismatches, 0u);
  ::close(s.b.fd);
  s.listener.close(&loop_);
}

TEST_F(SpliceTest, RefusesToWatchADescriptorItsStreamStillReads) {
  Rig s;
  connect_pair(s);
  if (HasFatalFailure()) return;
  // A stream that reads keeps its descriptor in libuv's watcher table: a second watcher would
  // steal its events, so the caller must fall back to copying.
  ASSERT_EQ(uv_read_start(
                s.tunnel->a(), alloc_chunk,
                [](uv_stream_t*, ssize_t, const uv_buf_t* buf) noexcept { Chunk c(buf->base); }),
            0);
  uv_run(&loop_, UV_RUN_NOWAIT);  // libuv registers the watcher on the next turn
  EXPECT_EQ(s.tunnel->start(), UV_EEXIST);
  s.tunnel->close_all();
  EXPECT_TRUE(run_until([&] { return s.outcome.deleted; }));
  close_peers(s);
  s.listener.close(&loop_);
}

}  // namespace
}  // namespace appliance::loop
