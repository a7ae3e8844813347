// Runs a few harmless cases in the test process's own environment (not a space): they must run,
// give bounded evidence, and never PASS a network denial without a working control. A fake
// corridor on loopback (port 0) checks the corridor judging end to end: the generic 403 passes, a
// 403 that names its reason fails, and without the allowed-target control nothing passes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "escape-suite/case.h"
#include "policy/client_hello.h"

namespace escape {
namespace {

Outcome run_one(Context& ctx, const std::string& id) {
  for (const Case& c : all_cases()) {
    if (c.id == id) return c.run(ctx);
  }
  ADD_FAILURE() << "no case " << id;
  return {};
}

TEST(SmokeTest, WritableTmpControlPasses) {
  Context ctx;
  const Outcome o = run_one(ctx, "fs.writable-tmp");
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.evidence;
}

TEST(SmokeTest, HarmlessCasesRunAndGiveEvidence) {
  Context ctx;
  for (const char* id : {"identity.uid-not-root", "identity.seccomp-filter-mode", "identity.cap-effective-zero",
                         "leak.cwd-inside-root", "proc.kallsyms-no-addresses", "net.family-alg",
                         "syscall.keyctl", "syscall.userfaultfd", "dns.resolv-conf-embedded-only",
                         "fs.no-runtime-socket-run-containerd-containerd-sock"}) {
    const Outcome o = run_one(ctx, id);
    EXPECT_FALSE(o.evidence.empty()) << id;
    EXPECT_LE(o.evidence.size(), kMaxEvidenceBytes) << id;
  }
}

TEST(SmokeTest, NetworkDenialWithoutControlIsNeverPass) {
  Context ctx;
  ctx.opts.gatekeeper = "127.0.0.1";
  ctx.opts.corridor_port = 1;  // nothing listens: the TCP control fails
  ctx.opts.timeout_ms = 200;
  for (const char* id : {"net.tcp-test-net-1", "net.udp-test-net", "corridor.metadata-ipv4",
                         "net.control-channel-tcp"}) {
    const Outcome o = run_one(ctx, id);
    EXPECT_NE(o.verdict, Verdict::kPass) << id << ": " << o.evidence;
  }
}

// What the fake corridor does after its 200: close at once, relay blindly (echo everything, as a
// corridor without the first-flight check), or echo only a ClientHello that names the approved
// host (policy::decide_client_hello, as the gatekeeper does).
enum class AfterOk : std::uint8_t { kClose, kBlindEcho, kCheckedEcho };

// A one-thread fake corridor: answers 200 to CONNECT of `allowed`, else `refusal`.
class FakeCorridor {
 public:
  FakeCorridor(std::string allowed, std::string refusal, AfterOk after = AfterOk::kClose)
      : allowed_(std::move(allowed)), refusal_(std::move(refusal)), after_(after) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeCorridor() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void serve() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[2048];
      std::string req;
      while (req.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      const bool ok = req.rfind("CONNECT " + allowed_ + " ", 0) == 0;
      const std::string answer = ok ? "HTTP/1.1 200 Connection established\r\n\r\n" : refusal_;
      (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      if (ok && after_ != AfterOk::kClose) relay(c, req.substr(req.find("\r\n\r\n") + 4));
      ::close(c);
    }
  }
  // Reads the first flight (bounded by a short timeout), then echoes it or not.
  void relay(int c, std::string first) {
    timeval tv{0, 300000};
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    while (policy::parse_client_hello(first).status == policy::HelloStatus::kNeedMore) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      first.append(buf, static_cast<std::size_t>(n));
    }
    const std::string host = allowed_.substr(0, allowed_.rfind(':'));
    const bool pass = after_ == AfterOk::kBlindEcho ||
                      policy::decide_client_hello(policy::parse_client_hello(first), host).allowed();
    if (pass) (void)::send(c, first.data(), first.size(), MSG_NOSIGNAL);
  }
  std::string allowed_, refusal_;
  AfterOk after_ = AfterOk::kClose;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Context corridor_context(std::uint16_t port, std::string allowed) {
  Context ctx;
  ctx.opts.gatekeeper = "127.0.0.1";
  ctx.opts.corridor_port = port;
  ctx.opts.allowed_target = std::move(allowed);
  ctx.opts.timeout_ms = 2000;
  return ctx;
}

TEST(SmokeTest, CorridorGenericRefusalWithWorkingControlPasses) {
  FakeCorridor fake("example.com:443", "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
  Context ctx = corridor_context(fake.port(), "example.com:443");
  EXPECT_EQ(run_one(ctx, "corridor.allowed-target-works").verdict, Verdict::kPass);
  const Outcome o = run_one(ctx, "corridor.metadata-hex");
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.evidence;
}

TEST(SmokeTest, CorridorRefusalThatNamesItsReasonFails) {
  FakeCorridor fake("example.com:443", "HTTP/1.1 403 Forbidden\r\nX-Reason: deny:blocked-address\r\n\r\n");
  Context ctx = corridor_context(fake.port(), "example.com:443");
  EXPECT_EQ(run_one(ctx, "corridor.metadata-ipv4").verdict, Verdict::kFail);
}

TEST(SmokeTest, CorridorThatOpensTheTunnelFails) {
  FakeCorridor fake("169.254.169.254:443", "HTTP/1.1 403 Forbidden\r\n\r\n");
  Context ctx = corridor_context(fake.port(), "169.254.169.254:443");
  EXPECT_EQ(run_one(ctx, "corridor.metadata-ipv4").verdict, Verdict::kFail);
}

TEST(SmokeTest, TlsFirstFlightCasesFailBehindABlindRelay) {
  FakeCorridor fake("example.com:443", "HTTP/1.1 403 Forbidden\r\n\r\n", AfterOk::kBlindEcho);
  Context ctx = corridor_context(fake.port(), "example.com:443");
  for (const char* id : {"corridor.tls-other-server-name", "corridor.tls-no-server-name",
                         "corridor.tls-encrypted-client-hello", "corridor.tls-not-tls"}) {
    const Outcome o = run_one(ctx, id);
    EXPECT_EQ(o.verdict, Verdict::kFail) << id << ": " << o.evidence;
  }
}

TEST(SmokeTest, TlsFirstFlightCasesPassBehindACheckingCorridor) {
  FakeCorridor fake("example.com:443", "HTTP/1.1 403 Forbidden\r\n\r\n", AfterOk::kCheckedEcho);
  Context ctx = corridor_context(fake.port(), "example.com:443");
  for (const char* id : {"corridor.tls-other-server-name", "corridor.tls-no-server-name",
                         "corridor.tls-encrypted-client-hello", "corridor.tls-not-tls"}) {
    const Outcome o = run_one(ctx, id);
    EXPECT_EQ(o.verdict, Verdict::kPass) << id << ": " << o.evidence;
  }
}

TEST(SmokeTest, TlsFirstFlightCasesAreInconclusiveWhenTheCorridorRefusesTheConnect) {
  FakeCorridor fake("other.example:443", "HTTP/1.1 403 Forbidden\r\n\r\n", AfterOk::kCheckedEcho);
  Context ctx = corridor_context(fake.port(), "example.com:443");
  const Outcome o = run_one(ctx, "corridor.tls-other-server-name");
  EXPECT_EQ(o.verdict, Verdict::kInconclusive) << o.evidence;
  EXPECT_NE(o.evidence.find(" -> 403"), std::string::npos) << o.evidence;  // the runner's refusal_seen
}

TEST(SmokeTest, CorridorRefusalWithoutControlIsInconclusive) {
  FakeCorridor fake("example.com:443", "HTTP/1.1 403 Forbidden\r\n\r\n");
  Context ctx = corridor_context(fake.port(), "");  // the runner passed no --allowed-target
  EXPECT_EQ(run_one(ctx, "corridor.metadata-ipv4").verdict, Verdict::kInconclusive);
}

}  // namespace
}  // namespace escape
