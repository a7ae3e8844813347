#include "tests/integration/harness.h"

#ifdef GK_HARNESS_GTEST
#include <gtest/gtest.h>
#endif

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "policy/json.h"
#include "tests/support/tls_hello.h"

namespace gk_it {

// ---------------------------------------------------------------- sockets
void set_timeout(int fd, int timeout_ms) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int connect_tcp(const std::string& ip, std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &sin.sin_addr);
  set_timeout(fd, 10000);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string read_until_close(int fd, int timeout_ms, bool* eof, std::size_t max) {
  std::string out;
  if (eof) *eof = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[65536];
  while (out.size() < max) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = recv(fd, buf, std::min(sizeof buf, max - out.size()), 0);  // never past max
    if (n == 0) {
      if (eof) *eof = true;
      break;
    }
    if (n < 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string read_head(int fd, int timeout_ms) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out.size() < 65536) {
    if (out.size() >= 4 && out.compare(out.size() - 4, 4, "\r\n\r\n") == 0) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char c;
    if (recv(fd, &c, 1, 0) != 1) break;
    out.push_back(c);
  }
  return out;
}

// ---------------------------------------------------------------- sha256
Sha256::Sha256() { SHA256_Init(&ctx_); }

void Sha256::update(const void* data, std::size_t length) { SHA256_Update(&ctx_, data, length); }

std::string Sha256::hex() {
  std::uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, &ctx_);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xf]);
  }
  return out;
}

void fill_pattern(std::uint32_t seed, std::uint64_t offset, char* out, std::size_t length) {
  for (std::size_t i = 0; i < length; ++i) {
    std::uint64_t x = (offset + i) * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 29;
    out[i] = static_cast<char>(x & 0xff);
  }
}

// ---------------------------------------------------------------- gatekeeper child
namespace {

// In the forked child, before exec. False (errno set) when a step failed.
bool drop_to_gatekeeper_user() {
  if (getuid() != 0) return true;
  constexpr unsigned kAmbient[] = {CAP_SETPCAP, CAP_NET_BIND_SERVICE};
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setgroups(0, nullptr) != 0 ||
      setresgid(kGatekeeperUid, kGatekeeperUid, kGatekeeperUid) != 0 ||
      setresuid(kGatekeeperUid, kGatekeeperUid, kGatekeeperUid) != 0) {
    return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  for (unsigned cap : kAmbient) {
    data[cap / 32].permitted |= 1u << (cap % 32);
    data[cap / 32].effective |= 1u << (cap % 32);
    data[cap / 32].inheritable |= 1u << (cap % 32);
  }
  if (syscall(SYS_capset, &header, data) != 0) return false;
  for (unsigned cap : kAmbient) {
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return false;
  }
  return true;
}

}  // namespace

Gatekeeper::Gatekeeper(std::vector<std::string> extra) {
  std::vector<std::string> args = {GK_BINARY_DIR "/bin/gatekeeper-test", "serve", "--bind", "127.0.0.1",
                                   "--corridor-port", "0", "--window-port", "0", "--control-port", "0"};
  for (auto& e : extra) args.push_back(std::move(e));
  // Sanitizer builds: LeakSanitizer's exit check uses ptrace and clone, which the gatekeeper's
  // own seccomp filter kills (and a non-dumpable process cannot be traced), so a confined
  // gatekeeper runs without it. A gatekeeper started with --unsafe-test-no-confinement (sanitizer
  // test build only; shutdown_test.cc) runs with it, and any leak fails its exit. Release builds
  // ignore this variable.
  const bool unconfined =
      std::find(args.begin(), args.end(), "--unsafe-test-no-confinement") != args.end();
  setenv("ASAN_OPTIONS", unconfined ? "detect_leaks=1:halt_on_error=1" : "detect_leaks=0", 1);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return;
  err_path_ = "/tmp/gk-it-" + std::to_string(getpid()) + "-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".err";
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], 1);
    const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) dup2(err, 2);
    if (!drop_to_gatekeeper_user()) {
      const char message[] = "harness: dropping to the gatekeeper user failed\n";
      (void)!write(2, message, sizeof message - 1);
      _exit(126);
    }
    // After the uid change (which clears it): the gatekeeper dies with a test process that was
    // killed before its destructor ran, instead of serving on loopback forever.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  stdout_fd_ = out[0];
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{stdout_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char c;
    if (read(stdout_fd_, &c, 1) != 1) break;
    if (c == '\n') break;
    line.push_back(c);
  }
  ready_line = line;
  auto port_of = [&](const std::string& key) -> std::uint16_t {
    const auto at = line.find(key + "=");
    if (at == std::string::npos) return 0;
    const auto colon = line.find(':', at);
    const int port = gk_test::leading_decimal(std::string_view(line).substr(colon + 1));
    return port > 0 && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
  };
  corridor = port_of("corridor");
  window = port_of("window");
  control = port_of("control");
  ready_ = line.rfind("gatekeeper: ready ", 0) == 0 && corridor && window && control;
}

namespace {

// A failure of the gatekeeper's own shutdown: the test fails (GoogleTest), or, in the benchmarks
// that share this file, a line on stderr.
void shutdown_failure(const std::string& what) {
#ifdef GK_HARNESS_GTEST
  ADD_FAILURE() << what;
#else
  std::fprintf(stderr, "gatekeeper harness: %s\n", what.c_str());
#endif
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

Gatekeeper::~Gatekeeper() {
  if (pid_ > 0) stop();
  if (stdout_fd_ >= 0) close(stdout_fd_);
  if (!err_path_.empty()) unlink(err_path_.c_str());
}

void Gatekeeper::stop() {
  // Every test ends the gatekeeper as the place does, with SIGTERM, and requires exit 0: serve
  // exits 1 when a handle is still open after the loop (appliance/README.md). SIGKILL only once
  // that failure is on record.
  int status = 0;
  if (!ready_) {
    // It never became ready (a start-up problem the test expects, exit 2): its exit status is
    // the test's business; it is only reaped here.
    kill(pid_, SIGTERM);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return;
  }
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    shutdown_failure("the gatekeeper ended before the test stopped it (" + exit_text(status) +
                     "): " + stderr_text());
    return;
  }
  kill(pid_, SIGTERM);
  for (int waited = 0; waited < 10000; waited += 20) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        shutdown_failure("the gatekeeper did not exit 0 after SIGTERM (" + exit_text(status) +
                         "): " + stderr_text());
      }
      return;
    }
    usleep(20000);
  }
  shutdown_failure("the gatekeeper did not exit within 10 s of SIGTERM; killed: " + stderr_text());
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool Gatekeeper::alive() { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

std::string Gatekeeper::stderr_text() {
  std::ifstream in(err_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int Gatekeeper::wait_for_signal(int timeout_ms) {
  if (pid_ <= 0) return -1;
  int status = 0;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    usleep(20000);
  }
  return -1;
}

int Gatekeeper::terminate(int timeout_ms) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    usleep(20000);
  }
  return -1;
}

Gatekeeper::Answer Gatekeeper::request(const std::string& method, const std::string& path,
                                       const std::string& body) {
  Answer a;
  const int fd = connect_tcp("127.0.0.1", control);
  if (fd < 0) return a;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  send_all(fd, req);
  const std::string answer = read_until_close(fd, 10000, nullptr, 16 << 20);
  close(fd);
  if (answer.size() < 12) return a;
  a.status = std::max(0, gk_test::leading_decimal(std::string_view(answer).substr(9)));
  const auto at = answer.find("\r\n\r\n");
  if (at != std::string::npos) a.body = answer.substr(at + 4);
  return a;
}

void Gatekeeper::allow(const std::vector<std::string>& domains, const std::string& mode) {
  std::string body = "{\"mode\":\"" + mode + "\",\"domains\":[";
  for (std::size_t i = 0; i < domains.size(); ++i) body += (i ? ",\"" : "\"") + domains[i] + "\"";
  body += "]}";
  request("POST", "/network", body);
}

std::vector<Gatekeeper::Record> Gatekeeper::journal() {
  std::vector<Record> out;
  const Answer a = request("GET", "/journal");
  auto parsed = policy::json::parse(a.body, policy::json::Limits{16 << 20, 16, 100000});
  if (!parsed) return out;
  const policy::json::Value* records = parsed->find("records");
  if (records == nullptr) return out;
  for (const auto& r : records->items()) {
    Record rec;
    if (auto* v = r.find("listener")) rec.listener = v->as_string();
    if (auto* v = r.find("host")) rec.host = v->as_string();
    if (auto* v = r.find("decision")) rec.decision = v->as_string();
    if (auto* v = r.find("port")) rec.port = static_cast<long>(v->as_int().value_or(-1));
    if (auto* v = r.find("count")) rec.count = static_cast<long>(v->as_int().value_or(-1));
    out.push_back(rec);
  }
  return out;
}

std::string server_name_of(const std::string& target) {
  std::string host = target.substr(0, target.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

Tunnel open_raw_tunnel(std::uint16_t corridor, const std::string& target, const std::string& after_head) {
  Tunnel t;
  t.fd = connect_tcp("127.0.0.1", corridor);
  if (t.fd < 0) return t;
  send_all(t.fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n" + after_head);
  t.head = read_head(t.fd, 15000);
  return t;
}

Tunnel open_tunnel(std::uint16_t corridor, const std::string& target, const std::string& extra) {
  return open_raw_tunnel(corridor, target, gk_test::client_hello(server_name_of(target)) + extra);
}

// ---------------------------------------------------------------- test network
namespace {

bool run(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }

// A test process killed before its destructor ran (a ctest timeout, a crash) leaves its
// namespace behind, with a host veth holding 198.18.<n>.1/24, which would shadow the route of a
// later process with the same <n>. Namespaces "gkit<pid>" whose process is gone are removed here;
// a live process's namespace is never touched.
void sweep_stale_namespaces() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/var/run/netns", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("gkit", 0) != 0 || name.size() == 4 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos) {
      continue;
    }
    const long pid = std::strtol(name.c_str() + 4, nullptr, 10);
    if (pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    run("ip netns pids " + name + " | xargs -r kill -9");
    run("ip netns del " + name);
  }
}

}  // namespace

// One /24 per test process, so tests may run in parallel (ctest -j): the first n from pid % 199
// whose lock file this process can flock. Returns the lock's fd (kept open) or -1.
int lock_subnet(int& n) {
  for (int i = 0; i < 199; ++i) {
    const int candidate = 1 + (getpid() + i) % 199;
    const std::string path = "/tmp/gk-it-subnet-" + std::to_string(candidate) + ".lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      n = candidate;
      return fd;
    }
    close(fd);
  }
  return -1;
}

TestNet::TestNet() : name_("gkit" + std::to_string(getpid())) {
  int n = 0;
  subnet_lock_ = lock_subnet(n);
  if (subnet_lock_ < 0) {
    error = "no free test subnet in 198.18.1-199 (every /tmp/gk-it-subnet-*.lock is held)";
    return;
  }
  prefix_ = "198.18." + std::to_string(n) + ".";
  const std::string ns = name_;
  const std::string host_if = "gkh" + std::to_string(getpid());
  const std::string ns_if = "gkn" + std::to_string(getpid());
  sweep_stale_namespaces();
  run("ip netns del " + ns);
  if (!run("ip netns add " + ns) ||
      !run("ip link add " + host_if + " type veth peer name " + ns_if + " netns " + ns) ||
      !run("ip addr add " + prefix_ + "1/24 dev " + host_if) || !run("ip link set " + host_if + " up") ||
      !run("ip -n " + ns + " addr add " + prefix_ + "2/24 dev " + ns_if) ||
      !run("ip -n " + ns + " addr add " + prefix_ + "4/24 dev " + ns_if) ||
      !run("ip -n " + ns + " link set " + ns_if + " up") || !run("ip -n " + ns + " link set lo up")) {
    error = "ip netns/veth setup failed";
    return;
  }
  // dnsmasq inside the namespace: the test DNS server.
  dnsmasq_ = fork();
  if (dnsmasq_ == 0) {
    // `ip netns exec` execs dnsmasq in this process: it dies with the test process, even one
    // killed by a ctest timeout (the fork is on the main thread, which lives as long).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 1);
    dup2(null, 2);
    const std::string listen = "--listen-address=" + prefix_ + "2";
    const std::string pub = "--address=/public.test/" + prefix_ + "2";
    const std::string mixed = "--host-record=mixed.test," + prefix_ + "2,fd00::1";
    const std::string refused = "--address=/refused.test/" + prefix_ + "4";
    const std::string slow = "--address=/slow.test/" + prefix_ + "77";
    const std::string tls = "--address=/tls.test/" + prefix_ + "4";
    const std::string alias = "--address=/alias.test/" + prefix_ + "2";
    execl("/usr/sbin/ip", "ip", "netns", "exec", ns.c_str(), "/usr/sbin/dnsmasq", "--no-daemon",
          "--conf-file=/dev/null", "--no-resolv", "--no-hosts", listen.c_str(), "--bind-interfaces",
          "--pid-file=", "--user=root", pub.c_str(), mixed.c_str(), "--address=/loop.test/127.0.0.1",
          refused.c_str(), slow.c_str(), tls.c_str(), alias.c_str(), "--address=/meta.test/169.254.169.254",
          "--address=/nx.test/", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The upstream socket is created inside the namespace (setns on this thread, then back).
  const int self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int target_ns = open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
  if (self_ns < 0 || target_ns < 0 || setns(target_ns, CLONE_NEWNET) != 0) {
    error = "setns into " + ns + " failed";
    return;
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(443);
  inet_pton(AF_INET, (prefix_ + "2").c_str(), &sin.sin_addr);
  const bool bound = bind(listen_fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0 &&
                     listen(listen_fd_, 512) == 0;
  setns(self_ns, CLONE_NEWNET);
  close(self_ns);
  close(target_ns);
  if (!bound) {
    error = "bind " + prefix_ + "2:443 in the namespace failed";
    return;
  }
  acceptor_ = std::thread([this] { serve(); });
  // Wait until dnsmasq answers (it binds within a few ms).
  for (int i = 0; i < 100; ++i) {
    if (run("ip netns exec " + ns + " sh -c 'ss -lun | grep -q " + prefix_ + "2:53'")) {
      ok_ = true;
      return;
    }
    usleep(50000);
  }
  error = "dnsmasq did not start in " + ns;
}

TestNet::~TestNet() {
  stopping_ = true;
  if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& w : workers_) w.join();
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  if (dnsmasq_ > 0) {
    kill(dnsmasq_, SIGTERM);
    waitpid(dnsmasq_, nullptr, 0);
  }
  run("ip netns pids " + name_ + " | xargs -r kill");
  run("ip netns del " + name_);
  if (subnet_lock_ >= 0) close(subnet_lock_);  // after the veth with P.1 is gone
}

int TestNet::listen_in_namespace(std::uint16_t port, int last_octet) {
  const int self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int target_ns = open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
  int fd = -1;
  if (self_ns >= 0 && target_ns >= 0 && setns(target_ns, CLONE_NEWNET) == 0) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    inet_pton(AF_INET, (prefix_ + std::to_string(last_octet)).c_str(), &sin.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || listen(fd, 512) != 0) {
      close(fd);
      fd = -1;
    }
    setns(self_ns, CLONE_NEWNET);
  }
  if (self_ns >= 0) close(self_ns);
  if (target_ns >= 0) close(target_ns);
  return fd;
}

void TestNet::serve() {
  while (!stopping_) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_ || errno == EINVAL) return;
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    workers_.emplace_back([this, fd] { session(fd); });
  }
}

void TestNet::session(int fd) {
  ++sessions_started;
  set_timeout(fd, 60000);
  std::string line;
  char c;
  // A tunnel starts with the client's ClientHello (in one record or several): skip it.
  std::string header(5, '\0');
  while (recv(fd, header.data(), 1, MSG_PEEK) == 1 && header[0] == 0x16 &&
         recv(fd, header.data(), 5, MSG_WAITALL) == 5) {
    std::size_t left = (static_cast<std::size_t>(static_cast<std::uint8_t>(header[3])) << 8) |
                       static_cast<std::uint8_t>(header[4]);
    while (left > 0 && recv(fd, &c, 1, 0) == 1) --left;
    first_records += 1;
  }
  while (line.size() < 64 && recv(fd, &c, 1, 0) == 1 && c != '\n') line.push_back(c);
  std::vector<char> buf(1 << 16);
  if (line == "ECHO") {
    while (true) {
      const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      if (!send_all(fd, std::string_view(buf.data(), static_cast<std::size_t>(n)))) break;
    }
    shutdown(fd, SHUT_WR);
    read_until_close(fd, 5000);
  } else if (line.rfind("SEND ", 0) == 0) {
    const std::uint64_t total = std::strtoull(line.c_str() + 5, nullptr, 10);
    std::uint64_t sent = 0;
    while (sent < total) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), total - sent));
      fill_pattern(1, sent, buf.data(), n);
      if (!send_all(fd, std::string_view(buf.data(), n))) break;
      sent += n;
    }
    shutdown(fd, SHUT_WR);
    while (true) {
      const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      bytes_after_fin += static_cast<std::uint64_t>(n);
    }
  } else if (line == "SINK") {
    Sha256 sha;
    while (true) {
      const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      sha.update(buf.data(), static_cast<std::size_t>(n));
    }
    send_all(fd, sha.hex() + "\n");
  } else if (line.rfind("RESET ", 0) == 0) {
    // n pattern bytes, then an RST instead of a FIN (SO_LINGER 0).
    const std::uint64_t total = std::strtoull(line.c_str() + 6, nullptr, 10);
    std::uint64_t sent = 0;
    while (sent < total) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), total - sent));
      fill_pattern(1, sent, buf.data(), n);
      if (!send_all(fd, std::string_view(buf.data(), n))) break;
      sent += n;
    }
    const linger hard{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  } else if (line == "HOLD") {
    read_until_close(fd, 120000);
  }
  close(fd);
  ++sessions_done;
}

SilentDns::SilentDns() {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
  bind(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  socklen_t len = sizeof sin;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&sin), &len);
  port = ntohs(sin.sin_port);
}

SilentDns::~SilentDns() { close(fd_); }

}  // namespace gk_it
