// The positive controls shared by the network cases. Each is computed once per run; a denial case
// whose control does not work reports INCONCLUSIVE, because "refused" and "broken" look alike from
// inside (the Apple container isolation test passed only because DNS was down,
// apple/container#2062).
#include <sys/socket.h>
#include <unistd.h>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {

const std::string& gatekeeper_ip(Context& ctx) {
  if (ctx.gatekeeper_ip) return *ctx.gatekeeper_ip;
  if (const auto literal = parse_addr(ctx.opts.gatekeeper, 0)) {
    std::string host;
    std::uint16_t port = 0;
    split_host_port(literal->text, host, port);
    ctx.gatekeeper_ip = host;
    return *ctx.gatekeeper_ip;
  }
  ctx.gatekeeper_ip = std::string();
  if (hosts_file_names(ctx.opts)) {
    // The place names the gatekeeper in /etc/hosts only (--resolver none): the first IPv4 entry,
    // as the space's own libc would take it.
    const FileRead hosts = read_bounded("/etc/hosts");
    for (const std::string& a : hosts_file_addresses(hosts.data, ctx.opts.gatekeeper)) {
      if (const auto v4 = parse_addr(a, 0); v4 && v4->family() == AF_INET) {
        ctx.gatekeeper_ip = a;
        break;
      }
    }
  } else if (const auto resolver = parse_addr(ctx.opts.resolver, 53)) {
    const DnsAnswer a = dns_query(*resolver, ctx.opts.gatekeeper, kDnsTypeA, ctx.opts.timeout_ms);
    if (!a.addresses.empty()) ctx.gatekeeper_ip = a.addresses.front();
  }
  return *ctx.gatekeeper_ip;
}

const Control& dns_control(Context& ctx) {
  if (ctx.dns_control) return *ctx.dns_control;
  Control c;
  const auto resolver = parse_addr(ctx.opts.resolver, 53);
  if (hosts_file_names(ctx.opts)) {
    // No DNS server on this place: the control is the name the space's programs use, in the hosts
    // file the runtime wrote (read-only, root's).
    const std::string name =
        parse_addr(ctx.opts.gatekeeper, 0) ? "gatekeeper" : ctx.opts.gatekeeper;
    const FileRead hosts = read_bounded("/etc/hosts");
    const std::vector<std::string> a = hosts_file_addresses(hosts.data, name);
    c.works = !a.empty();
    c.evidence = c.works ? "name control: /etc/hosts names " + name + " " + a.front() +
                               " (the place runs no DNS server for the space)"
                         : "name control failed: /etc/hosts does not name " + name +
                               (hosts.ok ? std::string() : " (" + errno_name(hosts.err) + ")");
  } else if (!resolver) {
    c.evidence = "--resolver " + ctx.opts.resolver + " is not an address";
  } else {
    const std::string name = parse_addr(ctx.opts.gatekeeper, 0) ? "gatekeeper" : ctx.opts.gatekeeper;
    const DnsAnswer a = dns_query(*resolver, name, kDnsTypeA, ctx.opts.timeout_ms);
    c.works = !a.addresses.empty();
    c.evidence = c.works ? "dns control: " + name + " -> " + a.addresses.front()
                         : "dns control failed: " + name + " did not resolve (" +
                               (a.answered ? "rcode " + std::to_string(a.rcode) : errno_name(a.err)) +
                               ")";
  }
  ctx.dns_control = c;
  return *ctx.dns_control;
}

const Control& tcp_control(Context& ctx) {
  if (ctx.tcp_control) return *ctx.tcp_control;
  Control c;
  const std::string& ip = gatekeeper_ip(ctx);
  const auto to = ip.empty() ? std::nullopt : parse_addr(ip, ctx.opts.corridor_port);
  if (!to) {
    c.evidence = "tcp control: gatekeeper '" + ctx.opts.gatekeeper + "' has no address";
  } else {
    const ConnectResult r = tcp_connect(*to, ctx.opts.timeout_ms);
    c.works = r.fd >= 0;
    if (r.fd >= 0) ::close(r.fd);
    c.evidence = c.works ? "tcp control: connected to corridor " + to->text
                         : "tcp control failed: " + to->text + ": " + errno_name(r.err);
  }
  ctx.tcp_control = c;
  return *ctx.tcp_control;
}

HttpReply corridor_connect(Context& ctx, std::string_view authority) {
  HttpReply none;
  const std::string& ip = gatekeeper_ip(ctx);
  const auto to = ip.empty() ? std::nullopt : parse_addr(ip, ctx.opts.corridor_port);
  if (!to) {
    none.err = EHOSTUNREACH;
    return none;
  }
  std::string req = "CONNECT ";
  req.append(authority);
  req += " HTTP/1.1\r\nHost: ";
  req.append(authority);
  req += "\r\n\r\n";
  return http_exchange(*to, req, ctx.opts.timeout_ms);
}

const Control& corridor_control(Context& ctx) {
  if (ctx.corridor_control) return *ctx.corridor_control;
  Control c;
  if (ctx.opts.allowed_target.empty()) {
    c.evidence = "corridor control: the runner passed no --allowed-target";
  } else {
    const HttpReply r = corridor_connect(ctx, ctx.opts.allowed_target);
    c.works = r.got && r.status == 200;
    c.evidence = "corridor control: CONNECT " + ctx.opts.allowed_target + " -> " +
                 (r.got ? std::to_string(r.status) : errno_name(r.err));
  }
  ctx.corridor_control = c;
  return *ctx.corridor_control;
}

bool refusal_is_generic(const HttpReply& reply) {
  const std::size_t end = reply.head.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  if (end + 4 != reply.head.size()) return false;  // a body came with the refusal
  const std::string head = to_lower(reply.head);
  for (const char* word : {"deny", "blocked", "allowlist", "private", "address", "reason",
                           "metadata", "loopback", "journal"}) {
    if (head.find(word) != std::string::npos) return false;
  }
  return true;
}

}  // namespace escape
