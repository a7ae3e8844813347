// Name resolution from the space: Docker's embedded resolver must answer the gatekeeper's alias
// (the positive control) and nothing else, so a public name, a metadata name or the host's
// injected names give the agent no address to try and no DNS channel to exfiltrate through.
#include <cerrno>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {
namespace {

// --resolver none (a place with no DNS server for the space): the name must be neither in the
// hosts file nor answered by any nameserver the space's resolv.conf lists (there should be none).
// The control is the gatekeeper's entry in the same hosts file and the corridor port reached by
// that address: the lookup path works, so "no answer" is not a broken set-up.
Outcome must_not_resolve_without_dns(Context& ctx, const std::string& name, std::uint16_t qtype) {
  const FileRead hosts = read_bounded("/etc/hosts");
  const std::vector<std::string> listed = hosts_file_addresses(hosts.data, name);
  std::string ev = name + ": ";
  if (!listed.empty()) {
    for (const std::string& a : listed) ev += a + " ";
    return fail(ev + "(named in /etc/hosts)");
  }
  ev += "not in /etc/hosts";
  const FileRead conf = read_bounded("/etc/resolv.conf");
  for (const std::string& ns : resolv_conf_nameservers(conf.data)) {
    const auto server = parse_addr(ns, 53);
    if (!server) continue;
    const DnsAnswer a = dns_query(*server, name, qtype, ctx.opts.timeout_ms);
    ev += "; nameserver " + ns + ": " +
          (a.answered ? "rcode " + std::to_string(a.rcode) : errno_name(a.err));
    if (!a.addresses.empty()) {
      for (const std::string& addr : a.addresses) ev += " " + addr;
      return fail(ev);
    }
  }
  if (!conf.ok) ev += "; no resolv.conf (" + errno_name(conf.err) + ")";
  const Control& names = dns_control(ctx);
  if (!names.works) return inconclusive(ev + "; " + names.evidence);
  const Control& tcp = tcp_control(ctx);
  if (!tcp.works) return inconclusive(ev + "; " + tcp.evidence);
  return pass(ev + "; " + names.evidence + "; " + tcp.evidence);
}

Outcome must_not_resolve(Context& ctx, const std::string& name, std::uint16_t qtype) {
  if (hosts_file_names(ctx.opts)) return must_not_resolve_without_dns(ctx, name, qtype);
  const Control& control = dns_control(ctx);
  const auto resolver = parse_addr(ctx.opts.resolver, 53);
  if (!resolver) return inconclusive("--resolver is not an address");
  const DnsAnswer a = dns_query(*resolver, name, qtype, ctx.opts.timeout_ms);
  std::string ev = name + ": " + (a.answered ? "rcode " + std::to_string(a.rcode) : errno_name(a.err));
  if (!a.addresses.empty()) {
    for (const std::string& addr : a.addresses) ev += " " + addr;
    return fail(ev);
  }
  if (!control.works) return inconclusive(ev + "; " + control.evidence);
  return pass(ev + "; " + control.evidence);
}

}  // namespace

void add_dns_cases(std::vector<Case>& out) {
  add_case(out, "dns.gatekeeper-resolves", "(positive control for the DNS and network cases)",
           "A query for the gatekeeper's alias to --resolver", "answers with an address",
           [](Context& ctx) {
             const Control& c = dns_control(ctx);
             return c.works ? pass(c.evidence) : fail(c.evidence);
           });
  add_case(out, "dns.gatekeeper-is-own",
           "be steered to another space's gatekeeper by a shared name",
           "A query for the alias; compare with --other-space addresses",
           "every answer is this space's gatekeeper, none another space's", [](Context& ctx) {
             const std::string name =
                 parse_addr(ctx.opts.gatekeeper, 0) ? "gatekeeper" : ctx.opts.gatekeeper;
             DnsAnswer a;
             if (hosts_file_names(ctx.opts)) {
               a.addresses = hosts_file_addresses(read_bounded("/etc/hosts").data, name);
             } else {
               const auto resolver = parse_addr(ctx.opts.resolver, 53);
               if (!resolver) return inconclusive("--resolver is not an address");
               a = dns_query(*resolver, name, kDnsTypeA, ctx.opts.timeout_ms);
             }
             if (a.addresses.empty()) return inconclusive(name + " did not resolve");
             for (const std::string& addr : a.addresses) {
               for (const std::string& other : ctx.opts.other_space_addresses) {
                 std::string host;
                 std::uint16_t port = 0;
                 if (split_host_port(other, host, port) && host == addr) {
                   return fail(name + " -> " + addr + " (the other space)");
                 }
               }
             }
             if (a.addresses.size() != 1) {
               return fail(name + " has " + std::to_string(a.addresses.size()) + " addresses");
             }
             return pass(name + " -> " + a.addresses.front());
           });
  struct Name {
    const char* id;
    const char* name;
    std::uint16_t qtype;
    const char* why;
  };
  static constexpr Name kNames[] = {
      {"dns.public-name-a", "example.com", kDnsTypeA, "learn a public address to try directly"},
      {"dns.public-name-aaaa", "example.com", kDnsTypeAAAA, "learn a public IPv6 address"},
      {"dns.public-name-txt", "openchamber-escape-probe.example.com", kDnsTypeTXT,
       "DNS tunnelling: data in queries and TXT answers"},
      {"dns.metadata-google-internal", "metadata.google.internal", kDnsTypeA, "GCP metadata by name"},
      {"dns.host-docker-internal", "host.docker.internal", kDnsTypeA, "the host's address (Docker Desktop)"},
      {"dns.gateway-docker-internal", "gateway.docker.internal", kDnsTypeA, "the gateway's address"},
      {"dns.kubernetes-api", "kubernetes.default.svc.cluster.local", kDnsTypeA, "the cluster API server"},
  };
  for (const Name& n : kNames) {
    add_case(out, n.id, n.why, std::string("query ") + n.name + " at --resolver",
             "no address comes back while the gatekeeper's alias resolves",
             [n](Context& ctx) { return must_not_resolve(ctx, n.name, n.qtype); });
  }
  add_case(
      out, "dns.resolv-conf-embedded-only", "use the host's resolvers listed in resolv.conf",
      "read /etc/resolv.conf",
      "the only nameserver is --resolver (Docker's 127.0.0.11); with --resolver none (no DNS "
      "server on the place) no nameserver at all, or no resolv.conf",
      [](Context& ctx) {
        if (hosts_file_names(ctx.opts)) {
          const FileRead f = read_bounded("/etc/resolv.conf");
          if (!f.ok && f.err != ENOENT) {
            return inconclusive("read /etc/resolv.conf: " + errno_name(f.err));
          }
          std::string listed;
          for (const std::string& ns : resolv_conf_nameservers(f.data)) listed += ns + " ";
          if (!listed.empty()) return fail("nameservers listed on a place without DNS: " + listed);
          return pass(f.ok ? "resolv.conf lists no nameserver" : "no /etc/resolv.conf (ENOENT)");
        }
        const FileRead f = read_bounded("/etc/resolv.conf");
        if (!f.ok) return inconclusive("read /etc/resolv.conf: " + errno_name(f.err));
        std::string others;
        int count = 0;
        for (const std::string& line : split_lines(f.data)) {
          if (line.rfind("nameserver", 0) != 0) continue;
          std::string ns = line.substr(10);
          while (!ns.empty() && (ns.front() == ' ' || ns.front() == '\t')) ns.erase(0, 1);
          while (!ns.empty() && (ns.back() == ' ' || ns.back() == '\r')) ns.pop_back();
          ++count;
          if (ns != ctx.opts.resolver) others += ns + " ";
        }
        if (!others.empty()) return fail("other nameservers: " + others);
        return count > 0 ? pass("nameserver " + ctx.opts.resolver) : fail("no nameserver line");
      });
}

}  // namespace escape
