// The test network of the integration harness (harness.h TestNet, SilentDns): a network
// namespace with dnsmasq and upstream hosts, one subnet lock per test.
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
#include <optional>
#include <sstream>
#include <string_view>

#include "policy/json.h"
#include "policy/number.h"
#include "tests/support/tls_hello.h"

namespace gk_it {

// ---------------------------------------------------------------- test network
namespace {

bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

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
    const std::optional<pid_t> pid = policy::parse_number<pid_t>(std::string_view(name).substr(4));
    if (!pid || *pid <= 0 || kill(*pid, 0) == 0 || errno != ESRCH) continue;
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
      !run("ip addr add " + prefix_ + "1/24 dev " + host_if) ||
      !run("ip link set " + host_if + " up") ||
      !run("ip -n " + ns + " addr add " + prefix_ + "2/24 dev " + ns_if) ||
      !run("ip -n " + ns + " addr add " + prefix_ + "4/24 dev " + ns_if) ||
      !run("ip -n " + ns + " link set " + ns_if + " up") ||
      !run("ip -n " + ns + " link set lo up")) {
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
          "--pid-file=", "--user=root", pub.c_str(), mixed.c_str(),
          "--address=/loop.test/127.0.0.1", refused.c_str(), slow.c_str(), tls.c_str(),
          alias.c_str(), "--address=/meta.test/169.254.169.254", "--address=/nx.test/",
          static_cast<char*>(nullptr));
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
  } else if (line.rfind("SEND ", 0) == 0 && policy::parse_number<std::uint64_t>(line.substr(5))) {
    const std::uint64_t total = *policy::parse_number<std::uint64_t>(line.substr(5));
    std::uint64_t sent = 0;
    while (sent < total) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), total - sent));
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
  } else if (line.rfind("RESET ", 0) == 0 && policy::parse_number<std::uint64_t>(line.substr(6))) {
    // n pattern bytes, then an RST instead of a FIN (SO_LINGER 0).
    const std::uint64_t total = *policy::parse_number<std::uint64_t>(line.substr(6));
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
  }  // anything else, a count that does not read included: closed without an answer
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
