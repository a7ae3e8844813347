// Sockets for the network cases, with a timeout on every wait. No getaddrinfo (the binary is
// static and NSS cannot load in a busybox image): names are resolved by a minimal DNS query sent
// to the resolver the runner names (Docker's embedded 127.0.0.11 by default).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace escape {

inline constexpr std::size_t kMaxHttpHeadBytes = 16 * 1024;
inline constexpr std::size_t kMaxDnsAnswers = 16;

struct Addr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  std::string text;  // "1.2.3.4:443" or "[::1]:443"
  int family() const { return ss.ss_family; }
};

// IPv4 dotted quad or IPv6 literal (brackets optional, `%ifname` scope allowed). No names.
std::optional<Addr> parse_addr(std::string_view host, std::uint16_t port);
// "host:port" or "[v6]:port"; port 0 when absent.
bool split_host_port(std::string_view text, std::string& host, std::uint16_t& port);

struct ConnectResult {
  int fd = -1;  // connected socket (caller closes) or -1
  int err = 0;  // errno of socket()/connect(), ETIMEDOUT after the timeout
};
ConnectResult tcp_connect(const Addr& to, int timeout_ms);

// One UDP datagram; returns 0 when sendto() accepted it, else the errno (socket() or sendto()).
int udp_send(const Addr& to, std::string_view payload);

// An attempt that waits for the kernel's verdict instead of judging sendto(). On a network whose
// default route names a gateway address nobody holds (Docker Engine 20.10's --internal bridges),
// a SYN or datagram is queued while the kernel asks ARP for the gateway; after the ARP probes fail
// (about 3 s) the neighbour layer drops it and reports an ICMP host-unreachable *from this host's
// own address*. IP_RECVERR makes that error readable with its sender, so the case can tell a local
// verdict from a remote router's.
enum class ProbeKind : std::uint8_t { kTcp, kUdp, kIcmpEcho };
struct ProbeSpec {
  ProbeKind kind = ProbeKind::kTcp;
  Addr to;
};
struct ProbeVerdict {
  bool answered = false;  // TCP connected, or a datagram/echo reply came back
  int err = 0;            // socket/connect/send/recv errno; ETIMEDOUT: no verdict by the deadline
  std::string icmp_from;  // sender of the queued ICMP error ("" when none was queued)
  std::string local;      // this socket's own address ("" when unbound)
  bool icmp_is_local() const { return !icmp_from.empty() && icmp_from == local; }
};
// Runs every probe at once (nonblocking sockets, one poll loop) so N probes cost one deadline.
std::vector<ProbeVerdict> probe_all(const std::vector<ProbeSpec>& probes, int timeout_ms);

struct DnsAnswer {
  bool answered = false;  // a reply with our id came back
  int rcode = -1;         // 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED
  int err = 0;            // socket errno, or ETIMEDOUT
  std::vector<std::string> addresses;  // A/AAAA records as text
};
inline constexpr std::uint16_t kDnsTypeA = 1;
inline constexpr std::uint16_t kDnsTypeAAAA = 28;
inline constexpr std::uint16_t kDnsTypeTXT = 16;
DnsAnswer dns_query(const Addr& server, std::string_view name, std::uint16_t qtype, int timeout_ms);
// The DNS query bytes (exposed for tests). Empty when the name is not a valid DNS name.
std::string dns_build_query(std::uint16_t id, std::string_view name, std::uint16_t qtype);
// Parses a reply to `id` (bounded; compression pointers followed at most a few times).
bool dns_parse_reply(std::string_view reply, std::uint16_t id, DnsAnswer& out);

struct HttpReply {
  bool got = false;  // a status line came back
  int status = 0;
  int err = 0;       // connect/send/recv errno, ETIMEDOUT
  std::string head;  // status line and headers (bounded), plus any body bytes read with them
};
// Connects, sends `request`, reads until the end of the header block, close or the timeout.
HttpReply http_exchange(const Addr& to, std::string_view request, int timeout_ms);

}  // namespace escape
