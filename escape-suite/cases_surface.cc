// Kernel surface reachable by socket(): every address family, netlink protocol and IP socket type
// the space profile does not allow must answer the profile's own errno. Any other answer
// (EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT, a descriptor) means the call reached the
// kernel's family table, which on distribution kernels loads the family's module on demand
// (`net-pf-N`, `net-pf-16-proto-N`): rarely used code, and where many socket LPEs lived.
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <string>
#include <tuple>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {
namespace {

struct Surface {
  const char* id;
  int family;
  int type;
  int protocol;
  const char* why;
};

// Families not already in cases_network.cc's table (packet, vsock, alg, key, tipc, rds, can,
// bluetooth, xdp, llc, pppox); numbers from linux/socket.h.
const Surface kFamilies[] = {
    {"net.family-ax25", 3, SOCK_SEQPACKET, 0, "amateur radio AX.25 (CVE-2022-1204 era)"},
    {"net.family-ipx", 4, SOCK_DGRAM, 0, "IPX"},
    {"net.family-appletalk", 5, SOCK_DGRAM, 0, "AppleTalk"},
    {"net.family-netrom", 6, SOCK_SEQPACKET, 0, "NET/ROM (CVE-2022-3903 era)"},
    {"net.family-bridge", 7, SOCK_RAW, 0, "multiprotocol bridge"},
    {"net.family-atmpvc", 8, SOCK_DGRAM, 0, "ATM PVCs"},
    {"net.family-x25", 9, SOCK_SEQPACKET, 0, "X.25 (CVE-2020-14305 era)"},
    {"net.family-rose", 11, SOCK_SEQPACKET, 0, "amateur radio ROSE"},
    {"net.family-decnet", 12, SOCK_SEQPACKET, 0, "DECnet"},
    {"net.family-netbeui", 13, SOCK_DGRAM, 0, "NetBEUI"},
    {"net.family-security", 14, SOCK_DGRAM, 0, "security callback pseudo family"},
    {"net.family-ash", 18, SOCK_DGRAM, 0, "Ash"},
    {"net.family-econet", 19, SOCK_DGRAM, 0, "Acorn Econet (CVE-2010-3849)"},
    {"net.family-atmsvc", 20, SOCK_DGRAM, 0, "ATM SVCs"},
    {"net.family-sna", 22, SOCK_DGRAM, 0, "Linux SNA"},
    {"net.family-irda", 23, SOCK_DGRAM, 0, "IrDA"},
    {"net.family-wanpipe", 25, SOCK_RAW, 0, "Wanpipe"},
    {"net.family-ib", 27, SOCK_DGRAM, 0, "InfiniBand native addressing"},
    {"net.family-mpls", 28, SOCK_DGRAM, 0, "MPLS"},
    {"net.family-iucv", 32, SOCK_STREAM, 0, "IUCV"},
    {"net.family-rxrpc", 33, SOCK_DGRAM, 2, "RxRPC (CVE-2022-31632 era; AFS)"},
    {"net.family-isdn", 34, SOCK_RAW, 0, "mISDN"},
    {"net.family-phonet", 35, SOCK_DGRAM, 0, "Phonet"},
    {"net.family-ieee802154", 36, SOCK_RAW, 0, "IEEE 802.15.4"},
    {"net.family-caif", 37, SOCK_SEQPACKET, 0, "CAIF"},
    {"net.family-nfc", 39, SOCK_SEQPACKET, 0, "NFC (CVE-2021-23134)"},
    {"net.family-kcm", 41, SOCK_DGRAM, 0, "kernel connection multiplexor"},
    {"net.family-qipcrtr", 42, SOCK_DGRAM, 0, "Qualcomm IPC router"},
    {"net.family-smc", 43, SOCK_STREAM, 0, "SMC sockets"},
    {"net.family-mctp", 45, SOCK_DGRAM, 0, "MCTP"},
    {"net.family-beyond-max", 46, SOCK_STREAM, 0, "a family number past AF_MAX"},
    {"net.family-negative", -1, SOCK_STREAM, 0, "family -1 (all 64 bits set by sign extension)"},
};

// Netlink protocols other than NETLINK_ROUTE and those already in cases_network.cc (netfilter,
// xfrm, kobject uevent, generic); numbers from linux/netlink.h.
const Surface kNetlink[] = {
    {"net.netlink-usersock", 16, SOCK_RAW, 2, "user-mode netlink"},
    {"net.netlink-sock-diag", 16, SOCK_RAW, 4, "socket diagnostics: other namespaces' sockets (ss)"},
    {"net.netlink-nflog", 16, SOCK_RAW, 5, "netfilter ULOG"},
    {"net.netlink-selinux", 16, SOCK_RAW, 7, "SELinux event notifications"},
    {"net.netlink-iscsi", 16, SOCK_RAW, 8, "Open-iSCSI"},
    {"net.netlink-audit", 16, SOCK_RAW, 9, "the audit subsystem"},
    {"net.netlink-fib-lookup", 16, SOCK_RAW, 10, "FIB lookups"},
    {"net.netlink-connector", 16, SOCK_RAW, 11, "the kernel connector (process events of the host)"},
    {"net.netlink-ip6-fw", 16, SOCK_RAW, 13, "IPv6 firewall"},
    {"net.netlink-dnrtmsg", 16, SOCK_RAW, 14, "DECnet routing"},
    {"net.netlink-scsitransport", 16, SOCK_RAW, 17, "SCSI transports"},
    {"net.netlink-ecryptfs", 16, SOCK_RAW, 18, "eCryptfs"},
    {"net.netlink-rdma", 16, SOCK_RAW, 19, "RDMA"},
    {"net.netlink-crypto", 16, SOCK_RAW, 20, "crypto layer configuration"},
    {"net.netlink-smc", 16, SOCK_RAW, 21, "SMC monitoring"},
    {"net.netlink-past-max", 16, SOCK_RAW, 32, "a netlink protocol past MAX_LINKS"},
};

// IP socket types outside STREAM/DGRAM (linux/net.h): each picks another protocol table.
const Surface kTypes[] = {
    {"net.type-inet-seqpacket", 2, SOCK_SEQPACKET, 0, "SOCK_SEQPACKET over IPv4 (SCTP's type)"},
    {"net.type-inet6-rdm", 10, SOCK_RDM, 0, "SOCK_RDM over IPv6"},
    {"net.type-inet-dccp", 2, SOCK_DCCP, 0, "SOCK_DCCP (CVE-2017-6074)"},
    {"net.type-inet6-packet", 10, SOCK_PACKET, 0, "SOCK_PACKET over IPv6"},
    {"net.type-inet6-raw", 10, SOCK_RAW, 255, "raw IPv6 (forge neighbour discovery)"},
    {"net.type-inet-type-15", 2, 15, 0, "the highest type number the mask admits"},
};

// The control: the families the space needs still open (the refusals are not "no sockets at all").
Outcome socket_control() {
  for (const auto& [family, type, proto] : {std::tuple{AF_UNIX, SOCK_STREAM, 0}, std::tuple{AF_INET, SOCK_STREAM, 0},
                                            std::tuple{AF_NETLINK, SOCK_RAW, 0}}) {
    const int fd = ::socket(family, type | SOCK_CLOEXEC, proto);
    if (fd < 0) return inconclusive("control: socket(" + std::to_string(family) + ") failed: " + errno_name(errno));
    ::close(fd);
  }
  return pass("");
}

void add_table(std::vector<Case>& out, const Surface* begin, const Surface* end) {
  for (const Surface* s = begin; s != end; ++s) {
    const Surface x = *s;
    add_case(out, x.id, x.why,
             "socket(" + std::to_string(x.family) + ", " + std::to_string(x.type) + ", " + std::to_string(x.protocol) + ")",
             "the profile's own errno, never the kernel's EAFNOSUPPORT/EPROTONOSUPPORT (the family table was "
             "reached); control: AF_UNIX, AF_INET and NETLINK_ROUTE sockets open",
             [x](Context& ctx) {
               if (const Outcome c = socket_control(); c.verdict != Verdict::kPass) return c;
               const long fd = ::syscall(SYS_socket, static_cast<long>(x.family), static_cast<long>(x.type | SOCK_CLOEXEC),
                                         static_cast<long>(x.protocol));
               const int err = errno;
               if (fd >= 0) {
                 ::close(static_cast<int>(fd));
                 return fail("socket succeeded");
               }
               if (err == ctx.opts.seccomp_errno) return pass("socket: " + errno_name(err) + " (the profile's errno)");
               return fail("socket: " + errno_name(err) + ", not the profile's " + errno_name(ctx.opts.seccomp_errno) +
                           ": the kernel's family table saw the call");
             });
  }
}

}  // namespace

void add_surface_cases(std::vector<Case>& out) {
  add_table(out, std::begin(kFamilies), std::end(kFamilies));
  add_table(out, std::begin(kNetlink), std::end(kNetlink));
  add_table(out, std::begin(kTypes), std::end(kTypes));
}

}  // namespace escape
