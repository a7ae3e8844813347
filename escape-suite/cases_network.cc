// Direct network access: the space's only way out is the corridor. Network rule of this suite:
// no case sends traffic to a non-test address. "Direct internet" is tried only against RFC 5737
// (192.0.2/24, 198.51.100/24, 203.0.113/24), RFC 2544 (198.18/15) and RFC 3849 (2001:db8::/32)
// addresses, which go nowhere in a test network, and against addresses the runner passes; what is
// asserted is the *local* failure (ENETUNREACH, EACCES, EPERM at connect/sendto time), which proves
// the space has no route. Each denial needs the TCP control (the corridor port connects) to count.
// Docker Engine 20.10 gives a container on an --internal network a default route via the IPAM
// gateway even though no host interface holds that address: there the kernel's verdict is
// EHOSTUNREACH after its ARP probes for the gateway go unanswered (~3 s), which counts only with
// the runner's proof that the gateway is unowned (--gateway-unowned) and an unresolved ARP entry.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "escape-suite/proc_net.h"

namespace escape {
namespace {

// EHOSTUNREACH is not here: it is also what a remote router's ICMP says, so it needs the
// gateway evidence of judge_offlink.
bool local_failure(int err) {
  return err == ENETUNREACH || err == EACCES || err == EPERM || err == EADDRNOTAVAIL ||
         err == EAFNOSUPPORT || err == EOPNOTSUPP || err == ENETDOWN;
}

// ARP probes: mcast_solicit 3 x retrans_time 1 s, then the neighbour layer fails the queue.
// Five seconds lets that verdict arrive with slack; only the off-link probes wait this long.
constexpr int kVerdictWaitMs = 5000;

// IPv4 default routes and gateway routes of /proc/net/route: "default via GW dev DEV" each.
struct GatewayRoute {
  std::string gateway;  // dotted quad ("" for a default route without a gateway)
  std::string text;
};
std::vector<GatewayRoute> gateway_routes(std::string& error) {
  std::vector<GatewayRoute> out;
  const FileRead f = read_bounded("/proc/net/route");
  if (!f.ok) error = "read /proc/net/route: " + errno_name(f.err);
  const auto lines = split_lines(f.data);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    // A line the kernel did not print as it does leaves the table unproved, not partly read.
    const policy::Result<RouteRow> row = parse_route_line(lines[i]);
    if (!row) {
      error = row.error().message;
      return {};
    }
    if (row->destination != 0 && (row->flags & kRouteFlagGateway) == 0) continue;
    // The kernel prints the network-order word as a host integer: reading it back restores it.
    in_addr a{};
    a.s_addr = row->gateway;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &a, text, sizeof text);
    const std::string g = a.s_addr == 0 ? "" : text;
    char dest[9] = {};
    std::snprintf(dest, sizeof dest, "%08X", row->destination);
    out.push_back({g, std::string(row->destination == 0 ? "default" : dest) + " via " +
                          (g.empty() ? "-" : g) + " dev " + row->device});
  }
  return out;
}

// /proc/net/arp flags of `ip`: -1 absent, else the flags (kArpFlagComplete: someone answered).
// A line the kernel did not print as it does sets `error`: the entry sought may be that line.
int arp_flags(const std::string& ip, std::string& error) {
  const FileRead f = read_bounded("/proc/net/arp");
  const auto lines = split_lines(f.data);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const policy::Result<ArpRow> row = parse_arp_line(lines[i]);
    if (!row) {
      error = row.error().message;
      return -1;
    }
    if (row->address == ip) return static_cast<int>(row->flags);
  }
  return -1;
}

// ARP gives up after mcast_solicit 3 x retrans_time 1 s; half a second more for the table.
constexpr int kArpSettleMs = 3500;
constexpr int kArpSampleMs = 250;
constexpr std::uint32_t kMaxSweptPerSubnet = 254;

// Sends one UDP datagram (port 9, discard) to each of the first addresses of every on-link IPv4
// subnet in /proc/net/route: each unknown neighbour makes the kernel ask ARP. Returns the targets.
std::vector<std::string> sweep_on_link_subnets(std::string* send_errors, std::string* route_error) {
  std::vector<std::string> swept;
  int failed = 0, first_errno = 0;
  const FileRead f = read_bounded("/proc/net/route");
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return swept;
  const auto lines = split_lines(f.data);
  for (std::size_t i = 1; i < lines.size() && swept.size() < 4 * kMaxSweptPerSubnet; ++i) {
    const policy::Result<RouteRow> row = parse_route_line(lines[i]);
    if (!row) {
      *route_error = row.error().message;
      break;
    }
    if (row->gateway != 0 || row->mask == 0 || row->device == "lo") {
      continue;  // on-link routes only
    }
    const std::uint32_t net = ntohl(row->destination), size = ~ntohl(row->mask) + 1u;
    if (size < 4) continue;
    for (std::uint32_t h = 1; h < size - 1 && h <= kMaxSweptPerSubnet; ++h) {
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(9);
      to.sin_addr.s_addr = htonl(net + h);
      if (::sendto(fd, "", 0, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) < 0 && failed++ == 0) first_errno = errno;
      char text[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &to.sin_addr, text, sizeof text);
      swept.emplace_back(text);
    }
  }
  ::close(fd);
  if (failed > 0) *send_errors = "; " + std::to_string(failed) + " sends failed, first " + errno_name(first_errno);
  return swept;
}

// Why a route via a gateway goes nowhere; `ok` false with the reason when that is not proved.
struct GatewayProof {
  bool ok = false;
  bool answered_arp = false;  // a FAIL: something holds the gateway address on the link
  std::string evidence;
};
GatewayProof gateway_unowned(const Context& ctx) {
  GatewayProof p;
  std::string error;
  const std::vector<GatewayRoute> routes = gateway_routes(error);
  std::string ev = error;
  for (const GatewayRoute& r : routes) {
    ev += r.text;
    std::string arp_error;
    const int flags = r.gateway.empty() ? -1 : arp_flags(r.gateway, arp_error);
    if (!arp_error.empty()) {
      p.evidence = ev + ": " + arp_error;
      return p;
    }
    if (flags >= 0 && (flags & kArpFlagComplete) != 0) p.answered_arp = true;
    ev += flags < 0                         ? " (no ARP entry)"
          : (flags & kArpFlagComplete) != 0 ? " (ARP answered!)"
                                            : " (ARP unanswered)";
    ev += "; ";
  }
  if (!error.empty()) {
    p.evidence = ev;  // the route table did not read: nothing is proved
    return p;
  }
  if (p.answered_arp) {
    p.evidence = ev + "a neighbour answered ARP for the gateway: packets can leave through it";
    return p;
  }
  if (!ctx.opts.gateway_unowned) {
    p.evidence = ev + "the runner did not prove the gateway unowned (--gateway-unowned)";
    return p;
  }
  p.ok = true;
  p.evidence = ev + "runner: no host address on the inner bridge (verify network_host_isolation)";
  return p;
}

std::string probe_key(ProbeKind kind, const Addr& to) {
  switch (kind) {
    case ProbeKind::kTcp: return "tcp " + to.text;
    case ProbeKind::kUdp: return "udp " + to.text;
    case ProbeKind::kIcmpEcho: return "icmp " + to.text;
  }
  return to.text;
}

std::vector<ProbeSpec> offlink_probe_list(const Context& ctx);

// The verdict for one off-link probe; the first call runs every probe of the run at once.
ProbeVerdict offlink(Context& ctx, ProbeKind kind, const Addr& to) {
  if (!ctx.offlink) {
    const std::vector<ProbeSpec> list = offlink_probe_list(ctx);
    const std::vector<ProbeVerdict> v = probe_all(list, std::max(kVerdictWaitMs, ctx.opts.timeout_ms));
    ctx.offlink.emplace();
    for (std::size_t i = 0; i < list.size(); ++i) (*ctx.offlink)[probe_key(list[i].kind, list[i].to)] = v[i];
  }
  const auto it = ctx.offlink->find(probe_key(kind, to));
  if (it != ctx.offlink->end()) return it->second;
  return probe_all({ProbeSpec{kind, to}}, std::max(kVerdictWaitMs, ctx.opts.timeout_ms)).front();
}

// Judges the kernel's verdict on a probe that must go nowhere. A connection or reply is a FAIL;
// so is ECONNREFUSED (an ICMP port-unreachable: the datagram reached a host) and a plain timeout
// (no verdict in 5 s: the packet may have left). EHOSTUNREACH passes only when the ICMP error came
// from this space's own address (or none was queued) and the gateway is proved unowned.
Outcome judge_offlink(Context& ctx, const std::string& what, const ProbeVerdict& v) {
  const Control& control = tcp_control(ctx);
  std::string ev = what + ": ";
  if (v.answered) return fail(ev + "answered (connected, or a reply came back)");
  ev += errno_name(v.err);
  if (!v.icmp_from.empty()) {
    ev += " (ICMP from " + v.icmp_from + (v.icmp_is_local() ? ", this space's own address" : "") + ")";
  }
  if (v.err == ETIMEDOUT) return fail(ev + ": no local verdict within 5 s, a packet may have left");
  if (v.err == ECONNREFUSED) return fail(ev + ": a host answered port-unreachable, the datagram arrived");
  if (v.err == EHOSTUNREACH) {
    if (!v.icmp_from.empty() && !v.icmp_is_local()) return fail(ev + ": a remote host reported it, the packet left");
    const GatewayProof g = gateway_unowned(ctx);
    if (g.answered_arp) return fail(ev + "; " + g.evidence);
    if (!g.ok) return inconclusive(ev + "; " + g.evidence);
    ev += " after ARP for the gateway failed; " + g.evidence;
  } else if (!local_failure(v.err) && !is_refusal(ctx.opts, v.err)) {  // is_refusal: the profile's errno
    return fail(ev + " (not a local refusal)");
  }
  if (!control.works) return inconclusive(ev + "; " + control.evidence);
  return pass(ev + "; " + control.evidence);
}

// A connect/sendto that must fail before any packet leaves.
Outcome expect_local_failure(Context& ctx, const std::string& what, bool connected, int err) {
  const Control& control = tcp_control(ctx);
  if (connected) return fail(what + ": connected");
  if (!local_failure(err)) {
    return fail(what + ": " + errno_name(err) + " (not a local refusal: packets left the space)");
  }
  if (!control.works) return inconclusive(what + ": " + errno_name(err) + "; " + control.evidence);
  return pass(what + ": " + errno_name(err) + "; " + control.evidence);
}

Outcome offlink_case(Context& ctx, ProbeKind kind, std::string_view host, std::uint16_t port) {
  const auto to = parse_addr(host, port);
  if (!to) return inconclusive("bad address " + std::string(host));
  return judge_offlink(ctx, probe_key(kind, *to), offlink(ctx, kind, *to));
}

Outcome udp_local(Context& ctx, std::string_view host, std::uint16_t port) {
  const auto to = parse_addr(host, port);
  if (!to) return inconclusive("bad address " + std::string(host));
  const int err = udp_send(*to, "openchamber-escape-probe");
  return expect_local_failure(ctx, "udp " + to->text, err == 0, err);
}

// Any failure counts for runner-given addresses (host listeners, the other space): a timeout also
// means "cannot", and the runner proved from outside that each one answers.
Outcome all_unreachable(Context& ctx, const std::vector<std::string>& targets, std::uint16_t default_port,
                        bool udp, const char* flag) {
  if (targets.empty()) return inconclusive(std::string("the runner passed no ") + flag);
  const Control& control = tcp_control(ctx);
  std::string ev;
  for (const std::string& t : targets) {
    std::string host;
    std::uint16_t port = 0;
    if (!split_host_port(t, host, port)) return inconclusive("bad " + std::string(flag) + " " + t);
    const auto to = parse_addr(host, port == 0 ? default_port : port);
    if (!to) return inconclusive("bad " + std::string(flag) + " " + t);
    if (udp) {
      // sendto() only queues while ARP runs; the kernel's verdict comes later (judge_offlink).
      const Outcome o = judge_offlink(ctx, probe_key(ProbeKind::kUdp, *to), offlink(ctx, ProbeKind::kUdp, *to));
      if (o.verdict != Verdict::kPass) return o;
      ev += to->text + " " + errno_name(offlink(ctx, ProbeKind::kUdp, *to).err) + "; ";
    } else {
      const ConnectResult r = tcp_connect(*to, ctx.opts.timeout_ms);
      if (r.fd >= 0) {
        ::close(r.fd);
        return fail("tcp " + to->text + ": connected");
      }
      ev += to->text + " " + errno_name(r.err) + "; ";
    }
  }
  if (udp) ev += gateway_unowned(ctx).evidence + "; ";
  if (!control.works) return inconclusive(ev + control.evidence);
  return pass(ev + control.evidence);
}

struct Target {
  const char* id;
  const char* host;
  std::uint16_t port;
  bool udp;
  const char* why;
};
constexpr Target kTargets[] = {
    {"net.tcp-test-net-1", "192.0.2.1", 443, false, "bypass the corridor by address (RFC 5737)"},
    {"net.tcp-test-net-2", "198.51.100.1", 443, false, "bypass the corridor (RFC 5737)"},
    {"net.tcp-test-net-3", "203.0.113.1", 80, false, "plain HTTP out (RFC 5737)"},
    {"net.tcp-benchmark-net", "198.18.0.1", 443, false, "reach the CI's stand-in public upstream directly (RFC 2544)"},
    {"net.tcp-ipv6-doc-net", "2001:db8::1", 443, false, "bypass over IPv6 (RFC 3849)"},
    {"net.udp-test-net", "192.0.2.1", 443, true, "QUIC/UDP out"},
    {"net.udp-ipv6-doc-net", "2001:db8::1", 443, true, "UDP over IPv6"},
    {"net.tcp-metadata", "169.254.169.254", 80, false, "cloud metadata credentials (IMDS)"},
    {"net.tcp-metadata-ipv6", "fd00:ec2::254", 80, false, "AWS IMDS over IPv6"},
    {"net.tcp-metadata-alibaba", "100.100.100.200", 80, false, "Alibaba metadata"},
    {"net.tcp-metadata-azure-wireserver", "168.63.129.16", 80, false, "Azure WireServer"},
    {"dns.direct-resolver-udp", "192.0.2.53", 53, true, "own DNS straight to a resolver (exfiltration)"},
    {"dns.direct-resolver-tcp", "198.51.100.53", 53, false, "DNS over TCP to a resolver"},
    {"dns.direct-dot", "203.0.113.53", 853, false, "DNS over TLS"},
    {"dns.direct-resolver-ipv6", "2001:db8::53", 53, true, "DNS over IPv6"},
};
std::vector<ProbeSpec> offlink_probe_list(const Context& ctx) {
  std::vector<ProbeSpec> out;
  for (const Target& t : kTargets) {
    if (const auto to = parse_addr(t.host, t.port)) out.push_back({t.udp ? ProbeKind::kUdp : ProbeKind::kTcp, *to});
  }
  if (const auto to = parse_addr("192.0.2.1", 0)) out.push_back({ProbeKind::kIcmpEcho, *to});
  for (const std::string& p : ctx.opts.probe_addresses) {
    std::string host;
    std::uint16_t port = 0;
    if (!split_host_port(p, host, port)) continue;
    if (const auto to = parse_addr(host, port == 0 ? 53 : port)) out.push_back({ProbeKind::kUdp, *to});
  }
  return out;
}

std::string first_interface() {
  for (const std::string& name : list_dir("/sys/class/net")) {
    if (name != "lo") return name;
  }
  return "eth0";
}

struct Family {
  const char* id;
  int domain;
  int type;
  int protocol;
  const char* why;
};

const Family kFamilies[] = {
    {"net.raw-socket-ipv4", AF_INET, SOCK_RAW, IPPROTO_RAW, "forge IPv4 packets, bypass the corridor"},
    {"net.raw-socket-tcp", AF_INET, SOCK_RAW, IPPROTO_TCP, "forge TCP segments"},
    {"net.raw-socket-icmp", AF_INET, SOCK_RAW, IPPROTO_ICMP, "ICMP tunnels"},
    {"net.raw-socket-ipv6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, "forge router advertisements"},
    {"net.packet-socket-raw", AF_PACKET, SOCK_RAW, htons(ETH_P_ALL),
     "sniff and forge frames, ARP spoofing (packet-socket UAF CVEs)"},
    {"net.packet-socket-dgram", AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL), "layer-2 frames"},
    {"net.sock-packet", AF_INET, SOCK_PACKET, htons(ETH_P_ALL), "obsolete layer-2 sockets"},
    {"net.family-vsock", 40, SOCK_STREAM, 0, "talk to the hypervisor host (AF_VSOCK)"},
    {"net.family-alg", 38, SOCK_SEQPACKET, 0, "kernel crypto API LPEs (AF_ALG)"},
    {"net.family-key", 15, SOCK_RAW, 2, "IPsec key management (AF_KEY)"},
    {"net.family-tipc", 30, SOCK_RDM, 0, "rare family: module autoload, LPE history"},
    {"net.family-rds", 21, SOCK_SEQPACKET, 0, "rare family: LPE history (CVE-2010-3904)"},
    {"net.family-can", 29, SOCK_RAW, 1, "rare family"},
    {"net.family-bluetooth", 31, SOCK_RAW, 0, "rare family"},
    {"net.family-xdp", 44, SOCK_RAW, 0, "AF_XDP frames"},
    {"net.family-llc", 26, SOCK_DGRAM, 0, "rare family"},
    {"net.family-pppox", 24, SOCK_STREAM, 0, "rare family"},
    {"net.netlink-netfilter", AF_NETLINK, SOCK_RAW, 12, "nf_tables LPEs (CVE-2022-1015, CVE-2024-1086)"},
    {"net.netlink-xfrm", AF_NETLINK, SOCK_RAW, 6, "xfrm LPEs"},
    {"net.netlink-uevent", AF_NETLINK, SOCK_RAW, 15, "listen to host device events"},
    {"net.netlink-generic", AF_NETLINK, SOCK_RAW, 16, "generic netlink families"},
};

}  // namespace

void add_network_cases(std::vector<Case>& out) {
  for (const Family& f : kFamilies) {
    add_case(out, f.id, f.why, "socket(" + std::to_string(f.domain) + ", " + std::to_string(f.type) + ", " +
                                   std::to_string(f.protocol) + ")",
             "refused, or the family is not available", [f](Context& ctx) {
               const int fd = ::socket(f.domain, f.type | SOCK_CLOEXEC, f.protocol);
               const int err = errno;
               if (fd >= 0) ::close(fd);
               return judge_open_or_absent(ctx.opts, "socket", fd, err,
                                           {EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT});
             });
  }

  for (const Target& t : kTargets) {
    add_case(out, t.id, t.why,
             std::string(t.udp ? "sendto" : "connect") + " " + t.host + ":" + std::to_string(t.port),
             "the kernel refuses it locally: ENETUNREACH/EACCES/EPERM, or EHOSTUNREACH from this space's own "
             "address after ARP for a gateway the runner proved unowned (--gateway-unowned); a timeout or an "
             "answer FAILs; TCP control to the corridor works",
             [t](Context& ctx) { return offlink_case(ctx, t.udp ? ProbeKind::kUdp : ProbeKind::kTcp, t.host, t.port); });
  }
  add_case(out, "net.icmp-test-net", "ICMP tunnels out", "ping socket: connect, send an echo to 192.0.2.1, wait 5 s",
           "socket refused, or the kernel's verdict is local: ENETUNREACH, or EHOSTUNREACH from this space's own "
           "address (IP_RECVERR names the ICMP sender) after ARP for an unowned gateway; an echo reply, a "
           "remote ICMP error or silence FAILs",
           [](Context& ctx) {
             const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
             if (fd < 0) return expect_local_failure(ctx, "ping socket", false, errno);
             ::close(fd);
             return offlink_case(ctx, ProbeKind::kIcmpEcho, "192.0.2.1", 0);
           });
  add_case(out, "net.ipv6-link-local-all-nodes", "reach IPv6 neighbours on the link",
           "UDP to ff02::1%<iface>:9", "fails: IPv6 is off on the inner network", [](Context& ctx) {
             return udp_local(ctx, "ff02::1%" + first_interface(), 9);
           });
  add_case(out, "net.ipv6-no-addresses", "use IPv6 on the inner network (not filtered like IPv4)",
           "read /proc/net/if_inet6", "no address but ::1", [](Context&) {
             const FileRead f = read_bounded("/proc/net/if_inet6");
             std::string bad;
             for (const std::string& line : split_lines(f.data)) {
               if (line.rfind("00000000000000000000000000000001", 0) != 0 && !line.empty()) bad += line.substr(0, 40) + "; ";
             }
             return bad.empty() ? pass(f.ok ? "only ::1" : "IPv6 absent: " + errno_name(f.err)) : fail(bad);
           });
  add_case(out, "net.ipv6-no-routes", "route IPv6 anywhere", "read /proc/net/ipv6_route",
           "every route is on lo", [](Context&) {
             const FileRead f = read_bounded("/proc/net/ipv6_route");
             std::string bad;
             for (const std::string& line : split_lines(f.data)) {
               const std::size_t sp = line.find_last_of(' ');
               const std::string dev = sp == std::string::npos ? "" : line.substr(sp + 1);
               if (!line.empty() && dev != "lo") bad += dev + " ";
             }
             return bad.empty() ? pass("no IPv6 route off lo") : fail("routes via: " + bad);
           });
  add_case(out, "net.ipv4-no-default-route", "send anywhere but the inner subnet",
           "read /proc/net/route (after the off-link probes asked ARP for any gateway)",
           "no default or gateway route; or each one points at an address nobody holds: the runner proved "
           "the inner bridge has no host address (--gateway-unowned) and ARP for it stays unanswered "
           "(Docker Engine 20.10 installs such a route on --internal networks)",
           [](Context& ctx) {
             std::string error;
             const std::vector<GatewayRoute> routes = gateway_routes(error);
             if (!error.empty()) return inconclusive(error);
             if (routes.empty()) return pass("no default route and no route via a gateway");
             // Make the kernel ask for the gateway first, so "unanswered" means someone was asked.
             if (const auto to = parse_addr("192.0.2.1", 443)) (void)offlink(ctx, ProbeKind::kTcp, *to);
             const GatewayProof g = gateway_unowned(ctx);
             if (g.answered_arp) return fail(g.evidence);
             return g.ok ? pass("the route goes nowhere: " + g.evidence) : inconclusive(g.evidence);
           });
  add_case(out, "net.neighbours-only-gatekeeper", "reach another container or the host on the link",
           "send one UDP datagram to each of the first 254 addresses of every on-link subnet (which makes "
           "the kernel ask ARP for each), then read /proc/net/arp every 250 ms for 3.5 s",
           "every complete entry seen is the gatekeeper; control: right after the sweep the swept "
           "addresses are in the table (the sweep reached the neighbour layer)",
           [](Context& ctx) {
             const std::string& gk = gatekeeper_ip(ctx);
             std::string send_errors;
             std::string route_error;
             const std::vector<std::string> swept =
                 sweep_on_link_subnets(&send_errors, &route_error);
             if (!route_error.empty()) return inconclusive(route_error);
             if (swept.empty()) return inconclusive("no on-link IPv4 subnet in /proc/net/route to sweep");
             const std::set<std::string> targets(swept.begin(), swept.end());
             std::set<std::string> bad;
             std::size_t listed_first = 0;
             // Sampled, not read once: a crowded neighbour table collects entries (failed ones
             // first, but also unreferenced complete ones) before a single late read would see them.
             for (int waited = 0; waited <= kArpSettleMs; waited += kArpSampleMs) {
               const FileRead f = read_bounded("/proc/net/arp");
               const auto lines = split_lines(f.data);
               std::size_t listed = 0;
               for (std::size_t i = 1; i < lines.size(); ++i) {
                 const policy::Result<ArpRow> row = parse_arp_line(lines[i]);
                 if (!row) return inconclusive(row.error().message);
                 if (targets.count(row->address) > 0) ++listed;
                 if ((row->flags & kArpFlagComplete) != 0 && gk != row->address) {
                   bad.insert(row->address);
                 }
               }
               if (waited == 0) listed_first = listed;
               ::usleep(kArpSampleMs * 1000);
             }
             std::string ev = std::to_string(swept.size()) + " addresses swept, " + std::to_string(listed_first) +
                              " in the ARP table right after" + send_errors;
             if (!bad.empty()) {
               ev += "; neighbours besides the gatekeeper:";
               for (const std::string& ip : bad) ev += " " + ip;
               return fail(ev);
             }
             // Each address asked has an entry (incomplete at first): fewer than half means the
             // datagrams never reached the neighbour layer, and silence proves nothing.
             if (listed_first * 2 < swept.size()) return inconclusive(ev + ": the sweep did not reach the neighbour table");
             return pass(ev + "; only the gatekeeper (" + gk + ") answered");
           });
  add_case(out, "net.host-listeners-tcp", "reach a service on the place's host",
           "TCP to every --probe-address (listeners the runner opened on each host address)",
           "every attempt fails; TCP control works", [](Context& ctx) {
             return all_unreachable(ctx, ctx.opts.probe_addresses, 80, false, "--probe-address");
           });
  add_case(out, "net.host-listeners-udp", "reach a UDP service on the host",
           "UDP to every --probe-address", "every sendto fails locally", [](Context& ctx) {
             return all_unreachable(ctx, ctx.opts.probe_addresses, 53, true, "--probe-address");
           });
  add_case(out, "net.host-docker-api", "drive Docker over its TCP API (2375/2376) on the host",
           "TCP to every --probe-address host on 2375 and 2376", "every attempt fails", [](Context& ctx) {
             std::vector<std::string> targets;
             for (const std::string& t : ctx.opts.probe_addresses) {
               std::string host;
               std::uint16_t port = 0;
               if (!split_host_port(t, host, port)) continue;
               const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
               targets.push_back(h + ":2375");
               targets.push_back(h + ":2376");
             }
             return all_unreachable(ctx, targets, 2375, false, "--probe-address");
           });
  add_case(out, "net.other-space-direct", "lateral movement to the other space",
           "TCP to every --other-space address", "every attempt fails", [](Context& ctx) {
             return all_unreachable(ctx, ctx.opts.other_space_addresses, 3128, false, "--other-space");
           });
  add_case(out, "net.control-channel-tcp", "reconfigure egress through the gatekeeper's control channel",
           "TCP to the gatekeeper's inner address on --control-port (9099)",
           "refused or unreachable, while the corridor port connects", [](Context& ctx) {
             const std::string& gk = gatekeeper_ip(ctx);
             if (gk.empty()) return inconclusive("gatekeeper has no address");
             return all_unreachable(ctx, {(gk.find(':') != std::string::npos ? "[" + gk + "]" : gk) + ":" +
                                          std::to_string(ctx.opts.control_port)},
                                    ctx.opts.control_port, false, "--gatekeeper");
           });
  add_case(out, "net.control-channel-loopback", "the control channel on a shared loopback",
           "TCP to 127.0.0.1:<control-port> and [::1]:<control-port>",
           "refused: the space's loopback is its own", [](Context& ctx) {
             const std::string port = std::to_string(ctx.opts.control_port);
             return all_unreachable(ctx, {"127.0.0.1:" + port, "[::1]:" + port}, ctx.opts.control_port, false,
                                    "--control-port");
           });
  add_case(out, "net.gatekeeper-other-ports", "another service on the gatekeeper",
           "TCP to the gatekeeper on 22, 80, 443, 2375, 6443, 8443, 10250",
           "every port refuses", [](Context& ctx) {
             const std::string& gk = gatekeeper_ip(ctx);
             if (gk.empty()) return inconclusive("gatekeeper has no address");
             std::vector<std::string> targets;
             for (const int p : {22, 80, 443, 2375, 6443, 8443, 10250}) targets.push_back(gk + ":" + std::to_string(p));
             return all_unreachable(ctx, targets, 80, false, "--gatekeeper");
           });
}

}  // namespace escape
