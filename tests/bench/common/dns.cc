#include "tests/bench/common/dns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tests/bench/common/process.h"
#include "tests/bench/common/report.h"

namespace bench {

std::optional<double> dns_query_ms(const std::string& server, const std::string& name, int timeout_ms) {
  // RFC 1035 §4.1: header (id, RD, one question), QNAME as labels, QTYPE A, QCLASS IN.
  std::string query = {'\x12', '\x34', '\x01', '\x00', '\x00', '\x01', '\x00', '\x00',
                       '\x00', '\x00', '\x00', '\x00'};
  std::string_view rest = name;
  while (!rest.empty()) {
    const auto dot = rest.find('.');
    const std::string_view label = rest.substr(0, dot);
    query.push_back(static_cast<char>(label.size()));
    query.append(label);
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  }
  query.append({'\x00', '\x00', '\x01', '\x00', '\x01'});

  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(53);
  inet_pton(AF_INET, server.c_str(), &sin.sin_addr);
  const auto start = std::chrono::steady_clock::now();
  std::optional<double> result;
  if (sendto(fd, query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&sin), sizeof sin) ==
      static_cast<ssize_t>(query.size())) {
    pollfd p{fd, POLLIN, 0};
    char answer[512];
    if (poll(&p, 1, timeout_ms) == 1 && recv(fd, answer, sizeof answer, 0) >= 12 &&
        answer[0] == '\x12' && answer[1] == '\x34') {
      result = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
  }
  close(fd);
  return result;
}

pid_t start_dnsmasq(const TestNetwork& net, const std::string& name, const std::string& domain, std::string* error) {
  const std::string ip = net.inside_ip();
  SpawnOptions in_ns;
  in_ns.netns_fd = net.fd();
  // --local + --host-record: AAAA gets NOERROR with no answer, as from a real zone. (An --address=
  // name without --local answers AAAA with REFUSED, which c-ares retries: one more DNS round trip
  // per lookup that no real resolver would cost.)
  const Child dnsmasq = spawn({"/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--no-resolv",
                               "--no-hosts", "--listen-address=" + ip, "--bind-interfaces", "--pid-file=",
                               "--user=root", "--local=/" + domain + "/", "--host-record=" + name + "," + ip},
                              in_ns);
  bool up = false;
  for (int i = 0; i < 100 && !up && dnsmasq.pid > 0; ++i) up = dns_query_ms(ip, name, 50).has_value();
  if (dnsmasq.pid > 0 && up) return dnsmasq.pid;
  *error = "dnsmasq did not answer on " + ip + ":53";
  stop(dnsmasq.pid, 2000);
  return -1;
}

double dns_median_ms(const std::string& server, const std::string& name) {
  std::vector<double> samples;
  for (int i = 0; i < kDnsSamples; ++i) {
    if (auto ms = dns_query_ms(server, name, 1000)) samples.push_back(*ms);
  }
  if (samples.empty()) return -1;
  std::sort(samples.begin(), samples.end());
  return percentile(samples, 0.50);
}

}  // namespace bench
