// Limits a space can push against from outside the policy: outstanding DNS queries, the process's
// descriptor limit, and secrets left behind in freed memory. The fixture is in window_fixture.h.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "policy/number.h"
#include "tests/integration/harness.h"
#include "tests/integration/window_fixture.h"

namespace gk_window_test {
namespace {

TEST_F(WindowTest, AConnectThenCloseLoopCannotGrowTheOutstandingDnsQueries) {
  // A name server that never answers: a UDP socket of this test that nobody reads, so every
  // query waits for its timeout.
  const int silent = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof sin;
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&sin), &length), 0);
  gk_ = std::make_unique<Gatekeeper>(std::vector<std::string>{
      "--dns-server", "127.0.0.1:" + std::to_string(ntohs(sin.sin_port)), "--max-tunnels", "1000",
      "--max-corridor-sockets", "1000"});
  ASSERT_TRUE(gk_->ready()) << gk_->stderr_text();
  ASSERT_EQ(gk_->request("POST", "/network", R"({"mode":"open","domains":[]})").status, 200);
  for (int i = 0; i < 400; ++i) {
    const int fd = gk_it::connect_tcp("127.0.0.1", gk_->corridor);
    ASSERT_GE(fd, 0);
    gk_it::send_all(fd, "CONNECT n" + std::to_string(i) + ".example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n");
    close(fd);
  }
  long long most = -1;
  bool busy = false;
  for (int i = 0; i < 40 && !busy; ++i) {
    most = std::max(most, metric(*gk_, "gatekeeper_dns_queries_outstanding"));
    for (const auto& r : gk_->journal()) busy = busy || r.decision == "deny:unresolved:busy";
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  most = std::max(most, metric(*gk_, "gatekeeper_dns_queries_outstanding"));
  ASSERT_TRUE(gk_->alive()) << gk_->stderr_text();
  EXPECT_TRUE(busy) << "no lookup was refused at the cap";
  EXPECT_GE(most, 200) << "the queries did not pile up: the test proves nothing";
  EXPECT_LE(most, 256);
  close(silent);
}

// utime + stime of a process, in clock ticks (proc(5) /proc/<pid>/stat fields 14 and 15).
long cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i < 14) continue;
    const std::optional<long> n = policy::parse_number<long>(field);
    if (!n) {
      ADD_FAILURE() << "/proc/" << pid << "/stat field " << i << ": '" << field
                    << "' is not a tick count";
      return -1;
    }
    ticks += *n;
  }
  return ticks;
}

TEST_F(WindowTest, TheDescriptorLimitRefusesConnectionsInsteadOfSpinning) {
  // RLIMIT_NOFILE 40 (test build only): the corridor runs out of descriptors after a few dozen
  // idle sockets. Every further connection must be refused (closed), the loop must keep running
  // and, once the sockets close, the control channel must answer.
  gk_ = std::make_unique<Gatekeeper>(std::vector<std::string>{"--dns-server", net_->dns(), "--test-descriptor-limit", "40"});
  ASSERT_TRUE(gk_->ready()) << gk_->stderr_text();
  // Wave one runs into the limit; libuv's own EMFILE trick refuses what waits in the backlog
  // then, once, and cannot take its reserve back under the filter. Wave two is the second EMFILE.
  std::vector<int> held;
  int closed_at_once = 0;
  for (int wave = 0; wave < 2; ++wave) {
    for (int i = 0; i < 60; ++i) {
      const int fd = gk_it::connect_tcp("127.0.0.1", gk_->corridor);
      if (fd >= 0) held.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  // The ones past the limit were accepted and closed: they read EOF (or a reset) quickly.
  for (int fd : held) {
    bool eof = false;
    gk_it::read_until_close(fd, 20, &eof);
    closed_at_once += eof ? 1 : 0;
  }
  EXPECT_GT(closed_at_once, 60) << "connections past the limit were not refused in both waves";
  ASSERT_TRUE(gk_->alive()) << gk_->stderr_text();
  // Not spinning: under a second of CPU in a second of waiting (a spin takes all of it).
  const long before = cpu_ticks(gk_->pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_LT(cpu_ticks(gk_->pid()) - before, sysconf(_SC_CLK_TCK) / 2) << "the loop spins at the descriptor limit";
  for (int fd : held) close(fd);
  // The loop is not stuck: the held sockets' ends are read, and the control channel answers.
  Gatekeeper::Answer health;
  for (int i = 0; i < 5 && health.status != 200; ++i) {
    health = gk_->request("GET", "/health");
    if (health.status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(health.status, 200) << gk_->stderr_text();
  bool noted = false;
  for (const auto& r : gk_->journal()) noted = noted || r.decision == "deny:too-many-connections";
  EXPECT_TRUE(noted);
}

// Every readable and writable mapping of the process, searched for `needle`.
bool process_memory_holds(pid_t pid, const std::string& needle) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::ifstream mem("/proc/" + std::to_string(pid) + "/mem", std::ios::binary);
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms;
    fields >> range >> perms;
    if (perms.size() < 2 || perms[0] != 'r' || perms[1] != 'w') continue;
    const auto dash = range.find('-');
    const std::optional<std::uint64_t> from =
        dash == std::string::npos ? std::nullopt
                                  : policy::parse_number<std::uint64_t>(range.substr(0, dash), 16);
    const std::optional<std::uint64_t> to =
        dash == std::string::npos ? std::nullopt
                                  : policy::parse_number<std::uint64_t>(range.substr(dash + 1), 16);
    if (!from || !to || *to < *from) {
      ADD_FAILURE() << "/proc/" << pid << "/maps: '" << line << "' has no address range";
      return false;
    }
    if (*to - *from > (1ull << 30)) continue;
    std::string bytes(*to - *from, '\0');
    mem.clear();
    mem.seekg(static_cast<std::streamoff>(*from));
    mem.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(mem.gcount()));
    if (bytes.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_F(WindowTest, ReplacedSecretsLeaveNoCopyInTheGatekeepersMemory) {
  start();
  const std::string tls_secret = "sk-wipe-TLS-" + std::string(40, 'q') + "-end";
  const std::string plain_secret = "sk-wipe-PLAIN-" + std::string(40, 'z') + "-end";
  const std::string old_key = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba98765432aa";
  // 16 KiB of padding before each secret: the later, short control requests reuse the freed
  // buffers but overwrite only their first bytes, so an unwiped copy would still be there.
  const std::string pad = R"("note":")" + std::string(16 * 1024, 'n') + R"(",)";
  grant(R"({"id":"wipe-tls",)" + pad + R"("upstream":"https://public.test:8443/","header":"x-api-key","secret":")" +
        tls_secret + R"("})");
  grant(R"({"id":"wipe-plain",)" + pad + R"("upstream":"http://)" + net_->prefix() +
        R"(2:8080/npm/","unsafe_private_upstream":true,"header":"x-api-key","secret":")" + plain_secret + R"("})");
  for (const char* id : {"wipe-tls", "wipe-plain"}) {
    const Answer a = send_raw(gk_->window, get(window_path(id, "/v1/messages")));
    ASSERT_EQ(a.status, 200) << id << "\n" << a.raw;
  }
  ASSERT_EQ(gk_->request("POST", "/window-key", "{" + pad + R"("key":")" + old_key + R"("})").status, 200);
  ASSERT_EQ(gk_->request("POST", "/window-key", R"({"key":")" + kKey + R"("})").status, 200);
  // Both grants replaced: the only copies left would be ones nobody wiped.
  grant(R"({"id":"wipe-tls","upstream":"https://public.test:8443/","header":"x-api-key","secret":"sk-new-1"})");
  grant(R"({"id":"wipe-plain","upstream":"https://public.test:8443/","header":"x-api-key","secret":"sk-new-2"})");
  const pid_t pid = gk_->pid();
  EXPECT_FALSE(process_memory_holds(pid, tls_secret)) << "the TLS grant's old secret";
  EXPECT_FALSE(process_memory_holds(pid, plain_secret)) << "the plain grant's old secret";
  EXPECT_FALSE(process_memory_holds(pid, old_key)) << "the replaced window key";
  // The probe finds what is there: the live key is in memory.
  EXPECT_TRUE(process_memory_holds(pid, kKey));
}

}  // namespace
}  // namespace gk_window_test
