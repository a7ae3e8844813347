// Test-only, what the loop tests share (loop_test.cc, splice_test.cc): a loop that must end with
// no handle open (uv_loop_close() == 0), turning it until a condition holds, a listener on
// 127.0.0.1:0, and a client socket connected to it. Real sockets on loopback; no root, no
// namespace. Header-only.
#pragma once

#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>

#include <gtest/gtest.h>

#include "appliance/loop/address.h"
#include "appliance/loop/handle.h"
#include "tests/support/loopback.h"

namespace appliance::loop::testing {

class LoopFixture : public ::testing::Test {
 protected:
  // run_until waits `default_ms` unless told otherwise, and pauses `pause_us` between turns
  // (0: it spins, for transfers whose speed the test measures).
  LoopFixture(int default_ms, useconds_t pause_us) : default_ms_(default_ms), pause_us_(pause_us) {}
  void SetUp() override { ASSERT_EQ(uv_loop_init(&loop_), 0); }
  void TearDown() override {
    // Whatever the test left closing gets its close callbacks; then nothing may be open.
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle was left open";
  }
  // Turns the loop until `done` holds or `ms` (0: the default) pass.
  bool run_until(const std::function<bool()>& done, int ms = 0) {
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(ms != 0 ? ms : default_ms_);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      uv_run(&loop_, UV_RUN_NOWAIT);
      if (pause_us_ != 0) usleep(pause_us_);
    }
    return true;
  }
  uv_loop_t loop_{};

 private:
  int default_ms_;
  useconds_t pause_us_;
};

// A listener on 127.0.0.1:0 whose accepted stream goes to `on_accept`.
struct Listener {
  uv_tcp_t tcp{};
  std::uint16_t port = 0;
  std::function<void(uv_stream_t*)> on_accept;
  void open(uv_loop_t* loop) {
    ASSERT_EQ(uv_tcp_init(loop, &tcp), 0);
    tcp.data = this;
    IpBytes ip;
    ip.bytes = {127, 0, 0, 1};
    const sockaddr_storage where = socket_address(ip, 0);
    ASSERT_EQ(uv_tcp_bind(&tcp, as_sockaddr(where), 0), 0);
    ASSERT_EQ(uv_listen(as_stream(&tcp), 8,
                        [](uv_stream_t* server, int status) {
                          ASSERT_EQ(status, 0);
                          static_cast<Listener*>(server->data)->on_accept(server);
                        }),
              0);
    ASSERT_EQ(local_port(&tcp, port), 0);
    ASSERT_NE(port, 0);
  }
  // Closes and runs the loop until the close callback ran: the handle lives on the test's stack.
  void close(uv_loop_t* loop) {
    uv_close(as_handle(&tcp), nullptr);
    uv_run(loop, UV_RUN_DEFAULT);
  }
};

// A client socket connected to 127.0.0.1:port, then made non-blocking; -1 when the connect failed.
inline int connect_loopback(std::uint16_t port) { return gk_test::connect_loopback(port, true); }

}  // namespace appliance::loop::testing
