// The relay: byte-exact in each direction and full duplex, half-close passed through both ways,
// a slow reader, an upstream that resets mid-stream, 32 parallel tunnels, the tunnel cap, slots
// freed at once, the idle limit.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;
using gk_it::TestNet;

constexpr std::uint64_t k64MiB = 64ull << 20;

std::string pattern_sha(std::uint32_t seed, std::uint64_t total) {
  gk_it::Sha256 sha;
  std::vector<char> buf(1 << 16);
  for (std::uint64_t at = 0; at < total; at += buf.size()) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), total - at));
    gk_it::fill_pattern(seed, at, buf.data(), n);
    sha.update(buf.data(), n);
  }
  return sha.hex();
}

bool send_pattern(int fd, std::uint32_t seed, std::uint64_t total) {
  std::vector<char> buf(1 << 16);
  for (std::uint64_t at = 0; at < total; at += buf.size()) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), total - at));
    gk_it::fill_pattern(seed, at, buf.data(), n);
    if (!gk_it::send_all(fd, std::string_view(buf.data(), n))) return false;
  }
  return true;
}

// Reads to EOF, hashing; returns (sha, count).
std::pair<std::string, std::uint64_t> hash_until_close(int fd) {
  gk_it::Sha256 sha;
  std::uint64_t count = 0;
  std::vector<char> buf(1 << 16);
  gk_it::set_timeout(fd, 60000);
  while (true) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    sha.update(buf.data(), static_cast<std::size_t>(n));
    count += static_cast<std::uint64_t>(n);
  }
  return {sha.hex(), count};
}

class RelayTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
               "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
    net = std::make_unique<TestNet>();
    ASSERT_TRUE(net->ok()) << net->error;
    extra.push_back("--dns-server");
    extra.push_back(net->dns());
    gk = std::make_unique<Gatekeeper>(extra);
    ASSERT_TRUE(gk->ready()) << gk->ready_line << gk->stderr_text();
    gk->allow({"public.test"});
  }
  std::string metric(const std::string& name) {
    const std::string text = gk->request("GET", "/metrics").body;
    const auto at = text.find("\n" + name + " ");
    if (at == std::string::npos) return "";
    const auto end = text.find('\n', at + 1);
    return text.substr(at + 2 + name.size(), end - at - 2 - name.size());
  }
  std::unique_ptr<TestNet> net;
  std::unique_ptr<Gatekeeper> gk;
};

TEST_F(RelayTest, ClientHalfClosePassesThroughAndAnswerStillArrives) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "SINK\n");
  ASSERT_EQ(t.head, gk_it::k200);
  ASSERT_TRUE(send_pattern(t.fd, 7, 1 << 20));
  shutdown(t.fd, SHUT_WR);  // the upstream answers only after it saw our FIN
  EXPECT_EQ(gk_it::read_until_close(t.fd, 10000), pattern_sha(7, 1 << 20) + "\n");
  close(t.fd);
}

TEST_F(RelayTest, UpstreamHalfClosePassesThroughAndClientCanStillSend) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "SEND 1000\n");
  ASSERT_EQ(t.head, gk_it::k200);
  bool eof = false;
  EXPECT_EQ(gk_it::read_until_close(t.fd, 10000, &eof).size(), 1000u);
  EXPECT_TRUE(eof) << "the upstream's FIN reaches the client";
  ASSERT_TRUE(gk_it::send_all(t.fd, "after"));
  shutdown(t.fd, SHUT_WR);
  for (int i = 0; i < 200 && net->bytes_after_fin < 5; ++i) usleep(10000);
  EXPECT_EQ(net->bytes_after_fin.load(), 5u);
  close(t.fd);
}

TEST_F(RelayTest, Downloads64MiBByteExact) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  auto t =
      gk_it::open_tunnel(gk->corridor, "public.test:443", "SEND " + std::to_string(k64MiB) + "\n");
  ASSERT_EQ(t.head, gk_it::k200);
  auto [sha, count] = hash_until_close(t.fd);
  close(t.fd);
  EXPECT_EQ(count, k64MiB);
  EXPECT_EQ(sha, pattern_sha(1, k64MiB));
}

TEST_F(RelayTest, Uploads64MiBByteExact) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "SINK\n");
  ASSERT_EQ(t.head, gk_it::k200);
  ASSERT_TRUE(send_pattern(t.fd, 3, k64MiB));
  shutdown(t.fd, SHUT_WR);
  EXPECT_EQ(gk_it::read_until_close(t.fd, 30000), pattern_sha(3, k64MiB) + "\n");
  close(t.fd);
}

TEST_F(RelayTest, FullDuplex64MiBEchoByteExact) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "ECHO\n");
  ASSERT_EQ(t.head, gk_it::k200);
  bool sent = false;
  std::thread writer([&] {
    sent = send_pattern(t.fd, 5, k64MiB);
    shutdown(t.fd, SHUT_WR);
  });
  auto [sha, count] = hash_until_close(t.fd);
  writer.join();
  close(t.fd);
  EXPECT_TRUE(sent);
  EXPECT_EQ(count, k64MiB);
  EXPECT_EQ(sha, pattern_sha(5, k64MiB));
}

TEST_F(RelayTest, SlowReaderGetsEveryByteOfADownload) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  constexpr std::uint64_t kTotal = 32ull << 20;
  auto t =
      gk_it::open_tunnel(gk->corridor, "public.test:443", "SEND " + std::to_string(kTotal) + "\n");
  ASSERT_EQ(t.head, gk_it::k200);
  // The client reads nothing for a while (every buffer on the way fills and the relay stops
  // reading the upstream), then reads in small pieces.
  usleep(500 * 1000);
  gk_it::Sha256 sha;
  std::uint64_t count = 0;
  std::vector<char> buf(4096);
  gk_it::set_timeout(t.fd, 60000);
  while (true) {
    const ssize_t n = recv(t.fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    sha.update(buf.data(), static_cast<std::size_t>(n));
    count += static_cast<std::uint64_t>(n);
    if (count < (1u << 20)) usleep(100);
  }
  close(t.fd);
  EXPECT_EQ(count, kTotal);
  EXPECT_EQ(sha.hex(), pattern_sha(1, kTotal));
}

TEST_F(RelayTest, UpstreamResetMidStreamEndsTheTunnelAndIsJournalled) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "RESET 4194304\n");
  ASSERT_EQ(t.head, gk_it::k200);
  gk_it::set_timeout(t.fd, 10000);
  std::vector<char> buf(1 << 16);
  std::vector<char> want(buf.size());
  std::uint64_t count = 0;
  bool intact = true;
  ssize_t n = 0;
  while ((n = recv(t.fd, buf.data(), buf.size(), 0)) > 0) {
    gk_it::fill_pattern(1, count, want.data(), static_cast<std::size_t>(n));
    intact = intact && std::equal(buf.begin(), buf.begin() + n, want.begin());
    count += static_cast<std::uint64_t>(n);
  }
  const int err = n < 0 ? errno : 0;
  close(t.fd);
  EXPECT_NE(err, EAGAIN) << "the tunnel was not closed";
  EXPECT_TRUE(intact) << "what arrived before the reset is a prefix of what was sent";
  EXPECT_LE(count, 4u << 20);
  bool journalled = false;
  for (int i = 0; i < 100 && !journalled; ++i) {
    journalled = gk->journal().back().decision == "failed:ECONNRESET";
    if (!journalled) usleep(20000);
  }
  EXPECT_TRUE(journalled) << gk->journal().back().decision;
  EXPECT_EQ(metric("gatekeeper_open_tunnels"), "0");
}

TEST_F(RelayTest, ThirtyTwoParallelTunnelsAreEachByteExact) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  constexpr std::uint64_t kEach = 4ull << 20;
  const std::string expected = pattern_sha(1, kEach);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&] {
      auto t = gk_it::open_tunnel(gk->corridor, "public.test:443",
                                  "SEND " + std::to_string(kEach) + "\n");
      if (t.head == gk_it::k200) {
        auto [sha, count] = hash_until_close(t.fd);
        if (sha == expected && count == kEach) ++good;
      }
      close(t.fd);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 32);
}

TEST_F(RelayTest, SixtyFifthTunnelGets503AndASlotFreesAtOnce) {
  start();
  if (HasFatalFailure() || IsSkipped()) return;
  std::vector<int> held;
  for (int i = 0; i < 64; ++i) {
    auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
    ASSERT_EQ(t.head, gk_it::k200) << "tunnel " << i + 1;
    held.push_back(t.fd);
  }
  auto t65 = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
  EXPECT_EQ(t65.head + gk_it::read_until_close(t65.fd, 5000), gk_it::k503);
  close(t65.fd);
  EXPECT_EQ(gk->journal().back().decision, "deny:too-many-tunnels");
  EXPECT_EQ(metric("gatekeeper_open_tunnels"), "64");
  // A client that goes away frees its slot at once (the reference held it 300 s).
  close(held.back());
  held.pop_back();
  bool reopened = false;
  for (int i = 0; i < 50 && !reopened; ++i) {
    auto again = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
    reopened = again.head == gk_it::k200;
    if (reopened) {
      held.push_back(again.fd);
    } else {
      close(again.fd);
    }
    if (!reopened) usleep(20000);
  }
  EXPECT_TRUE(reopened);
  for (int fd : held) close(fd);
}

TEST_F(RelayTest, IdleTunnelEndsAfterIdleSeconds) {
  start({"--idle-seconds", "1"});
  if (HasFatalFailure() || IsSkipped()) return;
  auto t = gk_it::open_tunnel(gk->corridor, "public.test:443", "HOLD\n");
  ASSERT_EQ(t.head, gk_it::k200);
  const auto start_at = std::chrono::steady_clock::now();
  bool eof = false;
  gk_it::read_until_close(t.fd, 5000, &eof);
  const auto took = std::chrono::steady_clock::now() - start_at;
  close(t.fd);
  EXPECT_TRUE(eof);
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::milliseconds(2500));
  EXPECT_EQ(metric("gatekeeper_open_tunnels"), "0");
}

}  // namespace
