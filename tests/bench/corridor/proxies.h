// The CONNECT proxies under comparison, each our own child process on a 127.0.0.1 port:
//   gatekeeper  gatekeeper-test serve as uid/gid 65532, allowlist = the upstream's name (resolved per tunnel via
//               dnsmasq in the namespace; it refuses address literals by design)
//   squid       /usr/sbin/squid -N (no daemon, no SMP kids), CONNECT to 198.18.0.0/15:443 only
//   tinyproxy   /usr/bin/tinyproxy -d (foreground), ConnectPort 443
// Config files, logs and pid files live in one temp dir that the caller removes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace bench {

struct Proxy {
  std::string name;
  pid_t pid = -1;
  std::uint16_t port = 0;   // on 127.0.0.1
  std::string target;       // CONNECT authority for the upstream
  std::string error;        // why it did not start
  [[nodiscard]] bool up() const { return pid > 0 && error.empty(); }
};

struct ProxySetup {
  std::string workdir;      // temp dir for configs and logs
  std::string dns_server;   // dnsmasq inside the namespace
  std::string upstream_ip;  // address literal of the upstream
  std::string upstream_name;
  std::string gatekeeper_binary;
};

Proxy start_gatekeeper(const ProxySetup& setup);
Proxy start_squid(const ProxySetup& setup);
Proxy start_tinyproxy(const ProxySetup& setup);
void stop_proxy(Proxy& proxy);

}  // namespace bench
