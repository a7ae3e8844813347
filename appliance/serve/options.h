// `gatekeeper serve` command line. Every number is strict decimal within its
// named bounds; anything else is a start-up problem (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/ranges.h"
#include "policy/result.h"

namespace appliance::serve {

struct DnsServer {
  std::string address;  // strict IPv4 or IPv6 text
  std::uint16_t port = 53;
};

struct ServeOptions {
  std::optional<std::string> inner_subnet;  // CIDR; exactly one of inner_subnet / bind
  std::optional<std::string> bind;
  std::uint16_t corridor_port = 3128;
  std::uint16_t window_port = 8080;
  std::uint16_t control_port = 9099;
  std::size_t max_corridor_sockets = 128;
  std::size_t max_window_sockets = 64;
  std::size_t max_control_sockets = 8;
  std::size_t max_tunnels = 64;
  std::uint64_t idle_seconds = 300;
  std::uint64_t connect_seconds = 10;
  std::vector<DnsServer> dns_servers;
  std::string ca_file = "/etc/ssl/certs/ca-certificates.crt";  // the bundle the image ships
  std::size_t max_upstream_sockets = 64;                         // window → upstream connections
  std::vector<policy::Range> blocked;  // --block: refused like the table's rows
};

inline constexpr std::string_view kServeUsage =
    "usage: gatekeeper serve (--inner-subnet CIDR | --bind ADDRESS) [--corridor-port 3128]\n"
    "       [--window-port 8080] [--control-port 9099] [--max-corridor-sockets 128]\n"
    "       [--max-window-sockets 64] [--max-control-sockets 8] [--max-tunnels 64]\n"
    "       [--idle-seconds 300] [--connect-seconds 10] [--dns-server ADDRESS[:PORT]]...\n"
    "       [--ca-file /etc/ssl/certs/ca-certificates.crt] [--max-upstream-sockets 64]\n"
    "       [--block CIDR]...\n";

// args: everything after "serve". The error names the option and the value.
policy::Result<ServeOptions> parse_serve_options(const std::vector<std::string>& args);

// "ADDRESS", "IPv4:PORT", "[IPv6]:PORT".
policy::Result<DnsServer> parse_dns_server(std::string_view text);

}  // namespace appliance::serve
