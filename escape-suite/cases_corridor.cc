// The corridor (CONNECT proxy) and the window from the space's side. Every spelling of the
// metadata service, loopback, the gatekeeper itself, the host and the other space must get the
// generic 403 (no body, no reason: the reason goes to the journal only). A refusal counts only when
// CONNECT to --allowed-target answers 200 in the same run; otherwise the case is INCONCLUSIVE.
// A 502 is a FAIL: it means the gatekeeper decided to dial the target.
#include <cerrno>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "escape-suite/resolve_names.h"
#include "escape-suite/window_probe.h"

namespace escape {
namespace {

// Judges one CONNECT; `also_400` accepts a 400 for spellings the parser refuses as malformed.
Outcome judge_refusal(const std::string& target, const HttpReply& r, bool also_400) {
  if (!r.got) return inconclusive("CONNECT " + target + ": no answer (" + errno_name(r.err) + ")");
  const std::string ev = "CONNECT " + target + " -> " + std::to_string(r.status);
  if (r.status == 200) return fail(ev + ": tunnel opened");
  if (r.status == 503) return inconclusive(ev + ": gatekeeper busy");
  if (r.status == 403 || (also_400 && r.status == 400)) {
    return refusal_is_generic(r) ? pass(ev) : fail(ev + " with reason text: " + r.head.substr(0, 200));
  }
  return fail(ev + ": not the generic refusal");
}

Outcome refuse_all(Context& ctx, const std::vector<std::string>& targets, bool also_400) {
  const Control& control = corridor_control(ctx);
  if (targets.empty()) return inconclusive("no targets");
  std::string ev;
  for (const std::string& t : targets) {
    const Outcome o = judge_refusal(t, corridor_connect(ctx, t), also_400);
    if (o.verdict != Verdict::kPass) return o;
    ev += o.evidence + "; ";
  }
  if (!control.works) return inconclusive(ev + control.evidence);
  return pass(ev + control.evidence);
}

std::string bracket(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// Runner-given host:port entries turned into corridor targets: each on 443, on its own port, and
// the IPv4-mapped IPv6 spelling.
std::vector<std::string> spellings_of(const std::vector<std::string>& entries) {
  std::vector<std::string> out;
  for (const std::string& e : entries) {
    std::string host;
    std::uint16_t port = 0;
    if (!split_host_port(e, host, port)) continue;
    out.push_back(bracket(host) + ":443");
    if (port != 0 && port != 443) out.push_back(bracket(host) + ":" + std::to_string(port));
    if (host.find(':') == std::string::npos) out.push_back("[::ffff:" + host + "]:443");
  }
  return out;
}

}  // namespace

void add_corridor_cases(std::vector<Case>& out) {
  add_case(out, "corridor.allowed-target-works", "(positive control for every corridor denial)",
           "CONNECT --allowed-target", "200 Connection established", [](Context& ctx) {
             const Control& c = corridor_control(ctx);
             return c.works ? pass(c.evidence) : fail(c.evidence);
           });
  struct Target {
    const char* id;
    const char* authority;
    bool also_400;
    const char* why;
  };
  static constexpr Target kTargets[] = {
      {"corridor.metadata-ipv4", "169.254.169.254:443", false, "cloud credentials from IMDS"},
      {"corridor.metadata-port-80", "169.254.169.254:80", false, "IMDS on its real port"},
      {"corridor.metadata-mapped-ipv6", "[::ffff:a9fe:a9fe]:443", false, "IPv4-mapped IPv6 spelling"},
      {"corridor.metadata-mapped-dotted", "[::ffff:169.254.169.254]:443", false, "mapped, dotted"},
      {"corridor.metadata-integer", "2852039166:443", true, "one 32-bit integer"},
      {"corridor.metadata-hex", "0xa9fea9fe:443", true, "hex integer"},
      {"corridor.metadata-octal", "0251.0376.0251.0376:443", true, "octal parts"},
      {"corridor.metadata-three-part", "169.254.43518:443", true, "inet_aton three-part form"},
      {"corridor.metadata-two-part", "169.16689662:443", true, "inet_aton two-part form"},
      {"corridor.metadata-hex-dotted", "0xa9.0xfe.0xa9.0xfe:443", true, "hex parts"},
      {"corridor.metadata-trailing-dot", "169.254.169.254.:443", true, "trailing dot"},
      {"corridor.metadata-aws-ipv6", "[fd00:ec2::254]:443", false, "AWS IMDS IPv6"},
      {"corridor.metadata-nat64", "[64:ff9b::a9fe:a9fe]:443", false, "NAT64 embedding (RFC 6052)"},
      {"corridor.metadata-6to4", "[2002:a9fe:a9fe::1]:443", false, "6to4 embedding (RFC 3056)"},
      {"corridor.metadata-google-name", "metadata.google.internal:443", false, "GCP metadata by name"},
      {"corridor.metadata-short-name", "metadata:443", false, "single-label metadata name"},
      {"corridor.metadata-alibaba", "100.100.100.200:443", false, "Alibaba metadata (CGNAT range)"},
      {"corridor.metadata-azure", "168.63.129.16:443", false, "Azure WireServer"},
      {"corridor.localhost", "localhost:443", false, "the gatekeeper's own loopback"},
      {"corridor.localhost-dot", "localhost.:443", true, "loopback name, trailing dot"},
      {"corridor.loopback-ipv4", "127.0.0.1:443", false, "loopback"},
      {"corridor.loopback-short", "127.1:443", true, "short loopback form"},
      {"corridor.loopback-ipv6", "[::1]:443", false, "IPv6 loopback"},
      {"corridor.unspecified", "0.0.0.0:443", false, "0.0.0.0 dials loopback on Linux"},
      {"corridor.unspecified-zero", "0:443", true, "integer zero"},
      {"corridor.unspecified-ipv6", "[::]:443", false, "IPv6 unspecified"},
      {"corridor.gatekeeper-control", "gatekeeper:9099", false, "the control channel by name"},
      {"corridor.gatekeeper-corridor-loop", "gatekeeper:3128", false, "proxy loop"},
      {"corridor.gatekeeper-window", "gatekeeper:8080", false, "the window through the corridor"},
      {"corridor.loopback-control", "127.0.0.1:9099", false, "control channel on loopback"},
      {"corridor.loopback-ipv6-control", "[::1]:9099", false, "control channel, IPv6 loopback"},
      {"corridor.host-docker-internal", "host.docker.internal:443", false, "the host by Docker's name"},
      {"corridor.private-10", "10.0.0.1:443", false, "RFC 1918"},
      {"corridor.private-172", "172.17.0.1:443", false, "RFC 1918: Docker's default bridge gateway"},
      {"corridor.private-192", "192.168.0.1:443", false, "RFC 1918: home router"},
      {"corridor.cgnat", "100.64.0.1:443", false, "RFC 6598"},
      {"corridor.link-local-ipv6", "[fe80::1]:443", true, "IPv6 link-local"},
      {"corridor.unique-local-ipv6", "[fd00::1]:443", false, "RFC 4193"},
      {"corridor.userinfo", "user@169.254.169.254:443", true, "userinfo smuggling"},
      {"corridor.percent-encoded", "169%2e254%2e169%2e254:443", true, "percent-encoded dots"},
      {"corridor.metadata-port-zero-padded", "169.254.169.254:0443", true, "zero-padded port"},
      // Special-use names: refused by name before any query (policy/special_names.h).
      {"corridor.special-use-localhost-sub", "gatekeeper.localhost:443", true, "a name under localhost"},
      {"corridor.special-use-mdns", "printer.local:443", true, "an mDNS name on the LAN"},
      {"corridor.special-use-home-arpa", "router.home.arpa:443", true, "the home router by name"},
      {"corridor.special-use-onion", "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion:443", true,
       "an onion name leaked to the DNS"},
      {"corridor.special-use-invalid", "gatekeeper.invalid:443", true, "a name that must not exist"},
      {"corridor.special-use-reverse", "1.0.0.127.in-addr.arpa:443", true, "an address spelled as a reverse name"},
      {"corridor.special-use-ipv4only", "ipv4only.arpa:443", true, "NAT64 discovery name"},
      {"corridor.special-use-alt", "gatekeeper.alt:443", true, "a non-DNS namespace"},
      // A-labels that are not valid Punycode or decode to a separator or an emoji (policy/idna.h).
      {"corridor.a-label-invalid-punycode", "xn--zzzz.com:443", true, "an A-label that decodes to nothing"},
      {"corridor.a-label-full-stop", "xn--ab-r13a.com:443", true, "an A-label holding U+3002, a dot to UTS #46"},
  };
  for (const Target& t : kTargets) {
    add_case(out, t.id, t.why, std::string("CONNECT ") + t.authority,
             t.also_400 ? "403 or 400, no reason text; control 200" : "403, no reason text; control 200",
             [t](Context& ctx) { return refuse_all(ctx, {t.authority}, t.also_400); });
  }
  add_case(out, "corridor.gatekeeper-inner-address", "the gatekeeper's own listeners by address",
           "CONNECT <gatekeeper ip>:443, :9099, :3128", "403 each", [](Context& ctx) {
             const std::string gk = bracket(gatekeeper_ip(ctx));
             if (gk.empty()) return inconclusive("gatekeeper has no address");
             return refuse_all(ctx, {gk + ":443", gk + ":" + std::to_string(ctx.opts.control_port), gk + ":3128"}, false);
           });
  add_case(out, "corridor.allowed-name-other-ports", "attack a third party on another port",
           "CONNECT <allowed host>:22, :80, :8443", "403 (deny:port) each", [](Context& ctx) {
             std::string host;
             std::uint16_t port = 0;
             if (!split_host_port(ctx.opts.allowed_target, host, port)) {
               return inconclusive("the runner passed no --allowed-target");
             }
             return refuse_all(ctx, {host + ":22", host + ":80", host + ":8443"}, false);
           });
  add_case(out, "corridor.host-listeners", "reach the place's host through the corridor",
           "CONNECT every --probe-address on 443, its own port and as ::ffff:", "403 each",
           [](Context& ctx) {
             if (ctx.opts.probe_addresses.empty()) return inconclusive("the runner passed no --probe-address");
             return refuse_all(ctx, spellings_of(ctx.opts.probe_addresses), false);
           });
  add_case(out, "corridor.other-space", "lateral movement through the corridor",
           "CONNECT every --other-space address", "403 each", [](Context& ctx) {
             if (ctx.opts.other_space_addresses.empty()) return inconclusive("the runner passed no --other-space");
             return refuse_all(ctx, spellings_of(ctx.opts.other_space_addresses), false);
           });
  // Names on the twin's allowlist that its test resolver points at a blocked class after a public
  // answer (resolve_names.h): only the address check named can refuse them. The runner upgrades
  // a PASS only when the twin's journal shows deny:blocked-address for the name and its resolver
  // was asked (controller/escape_resolve.cc); the binary alone sees only the 403.
  for (const ResolveCase& r : kResolveCases) {
    add_case(out, r.id, r.why,
             std::string("CONNECT ") + r.name +
                 ":443 (allowlisted; the twin's resolver answers the test upstream and " +
                 (r.extra == ResolveExtra::kLiteral ? std::string(r.address)
                  : r.extra == ResolveExtra::kHost  ? std::string("the host's bridge address")
                                                    : std::string("the gatekeeper's own address")) +
                 ")",
             "403, no reason text; the twin's journal says deny:blocked-address; control 200",
             [name = std::string(r.name)](Context& ctx) {
               return refuse_all(ctx, {name + ":443"}, false);
             });
  }
  add_case(out, "corridor.absolute-form-get", "use the corridor as a plain HTTP proxy to metadata",
           "GET http://169.254.169.254/latest/meta-data/ (absolute form)", "403, no reason text",
           [](Context& ctx) {
             const Control& control = corridor_control(ctx);
             const std::string& ip = gatekeeper_ip(ctx);
             const auto to = ip.empty() ? std::nullopt : parse_addr(ip, ctx.opts.corridor_port);
             if (!to) return inconclusive("gatekeeper has no address");
             const HttpReply r = http_exchange(
                 *to, "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
                 ctx.opts.timeout_ms);
             const Outcome o = judge_refusal("(GET absolute-form)", r, true);
             if (o.verdict != Verdict::kPass || control.works) return o;
             return inconclusive(o.evidence + "; " + control.evidence);
           });

  add_case(out, "window.no-key", "use the window (and its grants) without the window key",
           "GET /model/<grant>/ without the /k/<key> prefix", "403; control: with the key the grant answers",
           [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase&, const std::string& g) { return "/model/" + g + "/"; });
           });
  add_case(out, "window.wrong-key", "guess the window key", "GET /k/<key with last digit changed>/model/<grant>/",
           "403", [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               std::string p = b.prefix;
               if (!p.empty()) p.back() = p.back() == '0' ? '1' : '0';
               return p + "/model/" + g + "/";
             });
           });
  add_case(out, "window.truncated-key", "prefix-match the window key", "GET /k/<key minus one digit>/model/<grant>/",
           "403", [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               std::string p = b.prefix;
               if (!p.empty()) p.pop_back();
               return p + "/model/" + g + "/";
             });
           });
  add_case(out, "window.empty-key", "an empty key segment", "GET /k//model/<grant>/", "403 or 400",
           [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase&, const std::string& g) { return "/k//model/" + g + "/"; });
           });
  add_case(out, "window.empty-field-name", "smuggle a header line the window and the upstream could read differently",
           "GET /k/<key>/model/<grant>/ with the line ':Authorization: Bearer x' (an empty field name)", "400",
           [](Context& ctx) {
             WindowBase base;
             if (ctx.opts.window_base.empty()) return inconclusive("the runner passed no --window-base");
             if (!parse_window_base(ctx.opts.window_base, base)) return inconclusive("bad --window-base");
             const std::string grant = ctx.opts.window_grant.empty() ? "anthropic" : ctx.opts.window_grant;
             const std::string path = base.prefix + "/model/" + grant + "/";
             const HttpReply r = window_send(ctx, base, "GET " + path + " HTTP/1.1\r\nHost: " + base.host +
                                                            "\r\n:Authorization: Bearer escape-suite\r\nConnection: close\r\n\r\n");
             if (!r.got) return inconclusive("no answer (" + errno_name(r.err) + ")");
             const std::string ev = "empty field name -> " + std::to_string(r.status);
             if (r.status == 403 || r.status == 404) return inconclusive(ev + ": refused, but not as malformed");
             if (r.status != 400) return fail(ev + ": the window took the request");
             const Control c = window_control(ctx, base);
             if (!c.works) return inconclusive(ev + "; " + c.evidence);
             return pass(ev + "; " + c.evidence);
           });
  add_case(out, "window.control-paths", "reach control endpoints through the window",
           "GET /network on the window", "403 or 404", [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase&, const std::string&) { return std::string("/network"); });
           });
  add_case(out, "window.traversal-to-control", "walk out of the grant to control endpoints",
           "GET /k/<key>/model/<grant>/../../../network", "403 or 400", [](Context& ctx) {
             return window_refuses(ctx, [](const WindowBase& b, const std::string& g) {
               return b.prefix + "/model/" + g + "/../../../network";
             });
           });
}

}  // namespace escape
