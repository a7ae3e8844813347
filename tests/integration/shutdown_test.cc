// A clean shutdown frees every handle and every allocation. The gatekeeper carries a tunnel,
// answers control and window requests, holds connections that are half-way through a head, a
// tunnel that is still open, and is then told SIGTERM: it must exit 0. Exit 0 means uv_loop_close
// found no handle open (serve_main.cc says "N handles still open at exit" and exits 1 otherwise);
// in the asan preset the gatekeeper runs unconfined (--unsafe-test-no-confinement, sanitizer test
// build only) with LeakSanitizer on, so exit 0 also means no allocation was left behind (LSan
// exits 23 and prints its report otherwise).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/support/environment.h"

namespace {

using gk_it::Gatekeeper;

std::vector<std::string> leak_checked(std::vector<std::string> args) {
#if defined(GK_SANITIZER_BUILD)
  args.push_back("--unsafe-test-no-confinement");
#endif
  return args;
}

void send_text(int fd, const std::string& text) { ASSERT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size())); }

TEST(CleanShutdownTest, SigtermWithOpenConnectionsAndATunnelFreesEverything) {
  GK_REQUIRE(gk_test::running_as_root() && gk_test::can_use_network_namespaces(),
             "root and network namespaces (ip netns) for the 198.18.0.x test hosts");
  gk_it::TestNet net;
  ASSERT_TRUE(net.ok()) << net.error;
  Gatekeeper gk(leak_checked({"--dns-server", net.dns()}));
  ASSERT_TRUE(gk.ready()) << gk.ready_line << gk.stderr_text();
#if defined(GK_SANITIZER_BUILD)
  ASSERT_NE(gk.stderr_text().find("UNSAFE: --unsafe-test-no-confinement"), std::string::npos)
      << "the leak-checked gatekeeper did not start unconfined: " << gk.stderr_text();
#endif
  gk.allow({"public.test"});
  // A finished tunnel, a refused one, and one left open through the shutdown.
  auto done = gk_it::open_tunnel(gk.corridor, "public.test:443", "ECHO\nround trip");
  ASSERT_EQ(done.head, gk_it::k200) << gk.stderr_text();
  shutdown(done.fd, SHUT_WR);
  EXPECT_EQ(gk_it::read_until_close(done.fd, 5000), "round trip");
  close(done.fd);
  EXPECT_EQ(gk_it::open_tunnel(gk.corridor, "loop.test:443").head.substr(0, 12), "HTTP/1.1 403");
  auto open = gk_it::open_tunnel(gk.corridor, "public.test:443", "ECHO\nstill open");
  ASSERT_EQ(open.head, gk_it::k200);
  // Control and window answers, then connections stopped half-way through a head on each listener.
  EXPECT_EQ(gk.request("GET", "/health").status, 200);
  EXPECT_EQ(gk.request("GET", "/metrics").status, 200);
  const int window = gk_it::connect_tcp("127.0.0.1", gk.window);
  ASSERT_GE(window, 0);
  send_text(window, "GET /k/wrong/model/x/y HTTP/1.1\r\nHost: gatekeeper\r\n\r\nGET /k/");
  const std::string refused = gk_it::read_head(window, 5000);
  EXPECT_EQ(refused.substr(0, 12), "HTTP/1.1 403") << refused;
  std::vector<int> partial;
  for (std::uint16_t port : {gk.corridor, gk.window, gk.control}) {
    const int fd = gk_it::connect_tcp("127.0.0.1", port);
    ASSERT_GE(fd, 0);
    send_text(fd, "CONNECT public.te");
    partial.push_back(fd);
  }
  ASSERT_TRUE(gk.alive());

  EXPECT_EQ(gk.terminate(), 0) << gk.stderr_text();
  const std::string err = gk.stderr_text();
  EXPECT_EQ(err.find("handles still open"), std::string::npos) << err;
  EXPECT_EQ(err.find("LeakSanitizer"), std::string::npos) << err;
  EXPECT_EQ(err.find("AddressSanitizer"), std::string::npos) << err;
  for (int fd : partial) close(fd);
  close(window);
  close(open.fd);
}

}  // namespace
