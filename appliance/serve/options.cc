#include "appliance/serve/options.h"

#include <string_view>

#include "policy/address.h"
#include "policy/number.h"

namespace appliance::serve {
namespace {

using policy::Error;
using policy::Result;

// Strict decimal (policy::parse_number): 1..10 digits, no leading zero (except "0"), within
// [min, max].
std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t min,
                                          std::uint64_t max) {
  if (text.size() > 10 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  const std::optional<std::uint64_t> value = policy::parse_number<std::uint64_t>(text);
  if (!value || *value < min || *value > max) return std::nullopt;
  return value;
}

Error bad_value(std::string_view option, std::string_view value, std::string_view expected) {
  return Error{"option " + std::string(option) + ": '" + std::string(value) + "' is not " +
               std::string(expected)};
}

}  // namespace

Result<DnsServer> parse_dns_server(std::string_view text) {
  DnsServer server;
  std::string_view address = text;
  std::optional<std::string_view> port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return Error{"--dns-server '" + std::string(text) + "': no closing ]"};
    address = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Error{"--dns-server '" + std::string(text) + "': junk after ]"};
      port_text = rest.substr(1);
    }
    if (!policy::parse_ipv6_strict(address)) {
      return Error{"--dns-server '" + std::string(text) + "': not an IPv6 address"};
    }
  } else if (text.find(':') != std::string_view::npos &&
             text.find(':') == text.rfind(':')) {
    address = text.substr(0, text.find(':'));
    port_text = text.substr(text.find(':') + 1);
  }
  if (!policy::parse_answer(address)) {
    return Error{"--dns-server '" + std::string(text) + "': not an IP address"};
  }
  server.address = std::string(address);
  if (port_text) {
    auto port = parse_number(*port_text, 1, 65535);
    if (!port) return Error{"--dns-server '" + std::string(text) + "': bad port"};
    server.port = static_cast<std::uint16_t>(*port);
  }
  return server;
}

Result<ServeOptions> parse_serve_options(const std::vector<std::string>& args) {
  ServeOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i];
    if (i + 1 >= args.size()) return Error{"option " + name + " needs a value (or is unknown)"};
    const std::string& value = args[++i];
    auto port = [&](std::uint16_t& out) -> Result<void> {
      auto n = parse_number(value, 0, 65535);
      if (!n) return bad_value(name, value, "a port 0..65535");
      out = static_cast<std::uint16_t>(*n);
      return {};
    };
    auto count = [&](std::size_t& out, std::uint64_t max) -> Result<void> {
      auto n = parse_number(value, 1, max);
      if (!n) return bad_value(name, value, "a count 1.." + std::to_string(max));
      out = static_cast<std::size_t>(*n);
      return {};
    };
    auto seconds = [&](std::uint64_t& out) -> Result<void> {
      auto n = parse_number(value, 1, 86400);
      if (!n) return bad_value(name, value, "a number of seconds 1..86400");
      out = *n;
      return {};
    };
    Result<void> r;
    if (name == "--inner-subnet") {
      options.inner_subnet = value;
    } else if (name == "--bind") {
      options.bind = value;
    } else if (name == "--corridor-port") {
      r = port(options.corridor_port);
    } else if (name == "--window-port") {
      r = port(options.window_port);
    } else if (name == "--control-port") {
      r = port(options.control_port);
    } else if (name == "--max-corridor-sockets") {
      r = count(options.max_corridor_sockets, 100000);
    } else if (name == "--max-window-sockets") {
      r = count(options.max_window_sockets, 100000);
    } else if (name == "--max-control-sockets") {
      r = count(options.max_control_sockets, 1000);
    } else if (name == "--max-tunnels") {
      r = count(options.max_tunnels, 100000);
    } else if (name == "--idle-seconds") {
      r = seconds(options.idle_seconds);
    } else if (name == "--connect-seconds") {
      r = seconds(options.connect_seconds);
    } else if (name == "--ca-file") {
      if (value.empty()) return bad_value(name, value, "a file path");
      options.ca_file = value;
    } else if (name == "--max-upstream-sockets") {
      r = count(options.max_upstream_sockets, 100000);
    } else if (name == "--block") {
      auto range = policy::parse_operator_range(value);
      if (!range) return bad_value(name, value, "ADDRESS/LENGTH with no host bit set past LENGTH");
      if (options.blocked.size() >= policy::kMaxOperatorRanges) {
        return bad_value(name, value, "at most " + std::to_string(policy::kMaxOperatorRanges) + " ranges");
      }
      options.blocked.push_back(*range);
    } else if (name == "--dns-server") {
      auto server = parse_dns_server(value);
      if (!server) return server.error();
      options.dns_servers.push_back(std::move(server.value()));
    } else {
      return Error{"unknown option " + name};
    }
    if (!r) return r.error();
  }
  if (options.inner_subnet.has_value() == options.bind.has_value()) {
    return Error{"give exactly one of --inner-subnet CIDR or --bind ADDRESS"};
  }
  return options;
}

}  // namespace appliance::serve
