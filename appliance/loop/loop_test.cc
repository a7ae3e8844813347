// The libuv layer on a real loop and real sockets on 127.0.0.1 (no root, no namespace). Every
// test ends with uv_loop_close() == 0: no handle is left open.
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
#include "appliance/loop/pump.h"
#include "appliance/loop/testing/loop_fixture.h"
#include "appliance/loop/unique_fd.h"
#include "appliance/loop/write.h"

namespace appliance::loop {
namespace {

// The shared loop fixture (testing/loop_fixture.h): five seconds by default, 200 us between turns.
class LoopTest : public testing::LoopFixture {
 protected:
  LoopTest() : LoopFixture(5000, 200) {}
};

// -------------------------------------------------------------------------------- HandleOwner
class TwoTimers final : public HandleOwner {
 public:
  TwoTimers(uv_loop_t* loop, bool* deleted, int* all_closed)
      : deleted_(deleted), all_closed_(all_closed) {
    uv_timer_init(loop, &a_);
    opened(as_handle(&a_));
    uv_timer_init(loop, &b_);
    opened(as_handle(&b_));
  }
  ~TwoTimers() override { *deleted_ = true; }
  void close_all() {
    if (!begin_closing()) return;
    close_handle(as_handle(&a_));
    close_handle(as_handle(&b_));
    close_handle(as_handle(&never_opened_));
  }

 private:
  void on_all_closed() noexcept override { ++*all_closed_; }
  uv_timer_t a_{};
  uv_timer_t b_{};
  uv_timer_t never_opened_{};
  bool* deleted_;
  int* all_closed_;
};

TEST_F(LoopTest, OwnerDeletesItselfAfterItsLastCloseCallbackOnly) {
  bool deleted = false;
  int all_closed = 0;
  auto* owner = new TwoTimers(&loop_, &deleted, &all_closed);
  EXPECT_EQ(owner->life(), HandleOwner::Life::kOpen);
  owner->close_all();
  EXPECT_EQ(owner->life(), HandleOwner::Life::kClosing);
  owner->close_all();  // a second close is nothing
  EXPECT_FALSE(deleted) << "freed before its close callbacks ran";
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_TRUE(deleted);
  EXPECT_EQ(all_closed, 1);
}

// ----------------------------------------------------------------------------- sockets helpers
using testing::connect_loopback;
using testing::Listener;

// Reads what is there; false once the peer ended (EOF).
bool drain(int fd, std::string& into) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    return n < 0;  // n == 0: EOF; n < 0: EAGAIN
  }
}

TEST_F(LoopTest, SocketAddressesRoundTrip) {
  IpBytes v4;
  v4.bytes = {192, 0, 2, 7};
  const sockaddr_storage a = socket_address(v4, 3128);
  EXPECT_EQ(a.ss_family, AF_INET);
  EXPECT_EQ(port_of(a), 3128);
  const auto back = ip_of(as_sockaddr(a));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->v4);
  EXPECT_EQ(std::memcmp(back->bytes.data(), v4.bytes.data(), 4), 0);
  IpBytes v6;
  v6.v4 = false;
  v6.bytes = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const sockaddr_storage b = socket_address(v6, 65535);
  EXPECT_EQ(b.ss_family, AF_INET6);
  EXPECT_EQ(port_of(b), 65535);
  const auto back6 = ip_of(as_sockaddr(b));
  ASSERT_TRUE(back6);
  EXPECT_FALSE(back6->v4);
  EXPECT_EQ(back6->bytes, v6.bytes);
  sockaddr_storage unix_family{};
  unix_family.ss_family = AF_UNIX;
  EXPECT_FALSE(ip_of(as_sockaddr(unix_family)));
  EXPECT_EQ(port_of(unix_family), 0);
}

TEST_F(LoopTest, AcceptAndCloseEndsTheSocketAndFreesItself) {
  Listener l;
  int accepted = 0;
  l.on_accept = [&](uv_stream_t* server) {
    EXPECT_EQ(accept_and_close(&loop_, server), 0);
    ++accepted;
  };
  l.open(&loop_);
  const int fd = connect_loopback(l.port);
  ASSERT_GE(fd, 0);
  std::string got;
  EXPECT_TRUE(run_until([&] { return accepted == 1 && !drain(fd, got); }));
  EXPECT_TRUE(got.empty());
  ::close(fd);
  l.close(&loop_);
}

// -------------------------------------------------------------------------------------- write
struct Outcome final : WriteListener {
  void on_written(int s) noexcept override {
    status = s;
    ++calls;
  }
  int status = 1;
  int calls = 0;
};

TEST_F(LoopTest, WriteOwnsItsBytesAndTellsTheOutcome) {
  Listener l;
  uv_tcp_t server_side{};
  bool have = false;
  l.on_accept = [&](uv_stream_t* server) {
    uv_tcp_init(&loop_, &server_side);
    ASSERT_EQ(uv_accept(server, as_stream(&server_side)), 0);
    have = true;
  };
  l.open(&loop_);
  const int fd = connect_loopback(l.port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(run_until([&] { return have; }));
  Outcome queued;
  Outcome sent;
  {
    std::string bytes = "secret-head";  // moved in: the request owns it from here
    ASSERT_EQ(write(as_stream(&server_side), std::move(bytes), &queued, Wipe::kYes), 0);
  }
  ASSERT_EQ(send(as_stream(&server_side), std::string(100, 'x'), &sent), 0);
  std::string got;
  EXPECT_TRUE(run_until([&] {
    drain(fd, got);
    return got.size() == 111 && queued.calls == 1;
  }));
  EXPECT_EQ(got, "secret-head" + std::string(100, 'x'));
  EXPECT_EQ(queued.status, 0);
  // A write queued on a stream closed before it went out is cancelled, and still told.
  Outcome cancelled;
  uv_read_stop(as_stream(&server_side));
  for (int i = 0; i < 64 && uv_stream_get_write_queue_size(as_stream(&server_side)) == 0; ++i) {
    ASSERT_EQ(send(as_stream(&server_side), std::string(1 << 20, 'y'), &cancelled), 0);
  }
  ASSERT_GT(uv_stream_get_write_queue_size(as_stream(&server_side)), 0u);
  uv_close(as_handle(&server_side), nullptr);  // on this stack: closed before the test returns
  EXPECT_TRUE(run_until([&] { return cancelled.calls == 1; }));
  EXPECT_EQ(cancelled.status, UV_ECANCELED);
  ::close(fd);
  l.close(&loop_);
}

TEST(UniqueFdTest, ClosesOnceWhenItsOwnerGoesAndMoves) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const int read_end = pipe_fds[0];
  {
    UniqueFd a(read_end);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is tested
    EXPECT_EQ(b.get(), read_end);
    EXPECT_NE(fcntl(read_end, F_GETFD), -1) << "open while owned";
  }
  EXPECT_EQ(fcntl(read_end, F_GETFD), -1) << "closed when its owner went";
  EXPECT_EQ(errno, EBADF);
  UniqueFd w(pipe_fds[1]);
  w.reset();
  EXPECT_EQ(fcntl(pipe_fds[1], F_GETFD), -1);
}

TEST_F(LoopTest, WipeBytesClearsEveryByte) {
  std::string s = "sk-grant-0123456789";
  wipe_bytes(s.data(), s.capacity());
  EXPECT_EQ(s, std::string(s.size(), '\0'));
}

// --------------------------------------------------------------------------------------- pump
// A tunnel in miniature: two accepted sockets A and B, a Pump each way, and the peers a and b.
class Tunnel final : public Pump::Events {
 public:
  explicit Tunnel(uv_loop_t* loop) : loop_(loop) {}
  void accept(uv_stream_t* server) {
    uv_tcp_t& t = accepted_ == 0 ? a_ : b_;
    uv_tcp_init(loop_, &t);
    t.data = this;
    ASSERT_EQ(uv_accept(server, as_stream(&t)), 0);
    if (++accepted_ == 2) start();
  }
  void start() {
    a_reader_ = StreamReader(as_stream(&a_), on_read);
    b_reader_ = StreamReader(as_stream(&b_), on_read);
    a_to_b_.start(a_reader_, as_stream(&b_), *this);
    b_to_a_.start(b_reader_, as_stream(&a_), *this);
    a_reader_.resume_reading();
    b_reader_.resume_reading();
  }
  void close() {
    uv_close(as_handle(&a_), nullptr);
    uv_close(as_handle(&b_), nullptr);
  }
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
    Chunk chunk(buf->base);
    auto* self = static_cast<Tunnel*>(stream->data);
    Pump& pump = stream == as_stream(&self->a_) ? self->a_to_b_ : self->b_to_a_;
    if (nread == UV_EOF) {
      pump.end();
    } else if (nread > 0) {
      pump.push(std::move(chunk), static_cast<std::size_t>(nread));
    }
  }
  void pump_moved(Pump&, std::size_t bytes) noexcept override { moved += bytes; }
  void pump_finished(Pump&) noexcept override { ++finished; }
  void pump_failed(Pump&, int) noexcept override { ++failed; }

  int accepted_ = 0;
  std::size_t moved = 0;
  int finished = 0;
  int failed = 0;
  Pump a_to_b_;
  Pump b_to_a_;

 private:
  uv_loop_t* loop_;
  uv_tcp_t a_{};
  uv_tcp_t b_{};
  StreamReader a_reader_;
  StreamReader b_reader_;
};

TEST_F(LoopTest, PumpRelaysBothWaysWithBackpressureAndHalfClose) {
  Listener l;
  Tunnel tunnel(&loop_);
  l.on_accept = [&](uv_stream_t* server) { tunnel.accept(server); };
  l.open(&loop_);
  const int a = connect_loopback(l.port);
  ASSERT_TRUE(run_until([&] { return tunnel.accepted_ == 1; }));
  const int b = connect_loopback(l.port);
  ASSERT_TRUE(run_until([&] { return tunnel.accepted_ == 2; }));
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  // a sends 48 MiB while b reads nothing: the pump must stop reading A, so a's writes stall once
  // the kernel's buffers (loopback autotuning: at most about 20 MiB over the four sockets) and
  // about kHighWater queued are full, well before all of it left.
  const std::string block(64 * 1024, 'z');
  std::size_t sent = 0;
  const std::size_t total = 48 * 1024 * 1024;
  run_until(
      [&] {
        const ssize_t n = ::write(a, block.data(), std::min(block.size(), total - sent));
        if (n > 0) sent += static_cast<std::size_t>(n);
        return sent == total;
      },
      1500);
  EXPECT_LT(sent, total) << "the sender was never held back";
  // b reads: everything arrives, in order, and the sender finishes.
  std::string at_b;
  EXPECT_TRUE(run_until(
      [&] {
        if (sent < total) {
          const ssize_t n = ::write(a, block.data(), std::min(block.size(), total - sent));
          if (n > 0) sent += static_cast<std::size_t>(n);
        }
        drain(b, at_b);
        return at_b.size() == total;
      },
      20000));
  EXPECT_EQ(at_b, std::string(total, 'z'));
  // The other way, then a half-close each side: FIN passes through, data still flows back.
  ASSERT_EQ(::write(b, "pong", 4), 4);
  ASSERT_EQ(::shutdown(a, SHUT_WR), 0);
  std::string at_a;
  bool b_saw_eof = false;
  EXPECT_TRUE(run_until([&] {
    drain(a, at_a);
    b_saw_eof = b_saw_eof || !drain(b, at_b);
    return at_a == "pong" && b_saw_eof;
  }));
  EXPECT_EQ(tunnel.finished, 1);
  ASSERT_EQ(::shutdown(b, SHUT_WR), 0);
  EXPECT_TRUE(run_until([&] { return !drain(a, at_a) && tunnel.finished == 2; }));
  EXPECT_EQ(tunnel.failed, 0);
  EXPECT_GE(tunnel.moved, total + 4);
  ::close(a);
  ::close(b);
  tunnel.close();
  l.close(&loop_);
}

}  // namespace
}  // namespace appliance::loop
