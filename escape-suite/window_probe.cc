#include "escape-suite/window_probe.h"

#include <cerrno>

#include "escape-suite/probe.h"

namespace escape {

bool parse_window_base(const std::string& url, WindowBase& out) {
  if (url.rfind("http://", 0) != 0) return false;
  const std::string rest = url.substr(7);
  const std::size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  out.prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  if (!split_host_port(authority, out.host, out.port)) return false;
  if (out.port == 0) out.port = 80;
  return true;
}

// The address of the window named by the base URL (empty when it cannot be found).
std::optional<Addr> window_addr(Context& ctx, const WindowBase& base) {
  std::string ip = base.host;
  if (!parse_addr(ip, 0)) {
    ip = base.host == ctx.opts.gatekeeper ? gatekeeper_ip(ctx) : "";
    if (ip.empty()) {
      if (const auto resolver = parse_addr(ctx.opts.resolver, 53)) {
        const DnsAnswer a = dns_query(*resolver, base.host, kDnsTypeA, ctx.opts.timeout_ms);
        if (!a.addresses.empty()) ip = a.addresses.front();
      }
    }
  }
  return parse_addr(ip, base.port);
}

HttpReply window_send(Context& ctx, const WindowBase& base, const std::string& request) {
  HttpReply none;
  const auto to = window_addr(ctx, base);
  if (!to) {
    none.err = EHOSTUNREACH;
    return none;
  }
  return http_exchange(*to, request, ctx.opts.timeout_ms);
}

HttpReply window_get(Context& ctx, const WindowBase& base, const std::string& path) {
  return window_send(ctx, base, "GET " + path + " HTTP/1.1\r\nHost: " + base.host + "\r\nConnection: close\r\n\r\n");
}

// The window's positive control: with the right key, the grant the runner created reaches the
// runner's upstream, which answers 200 with its marker only when the grant's key arrived in the
// grant's header. Any other answer (a 502 from a failed dial, the upstream's 401) proves nothing.
Control window_control(Context& ctx, const WindowBase& base) {
  Control c;
  if (ctx.opts.window_grant.empty()) {
    c.evidence = "window control: the runner passed no --window-grant";
    return c;
  }
  const HttpReply r = window_get(ctx, base, base.prefix + "/model/" + ctx.opts.window_grant + "/");
  c.works = window_control_answer_works(r);
  c.evidence = "window control: grant " + ctx.opts.window_grant + " -> " +
               (r.got ? std::to_string(r.status) : errno_name(r.err)) +
               (r.got && r.status == 200 ? (c.works ? " (the upstream saw the key)" : " (without the upstream's marker)") : "");
  return c;
}

bool window_control_answer_works(const HttpReply& r) {
  if (!r.got || r.status != 200) return false;
  std::string lower = r.head;
  for (char& ch : lower) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
  return lower.find(kUpstreamKeySeen) != std::string::npos;
}

// `path_of(base)` builds the hostile path; the answer must be the generic 403 (or 400/404).
Outcome window_refuses(Context& ctx, std::string (*path_of)(const WindowBase&, const std::string&)) {
  WindowBase base;
  if (ctx.opts.window_base.empty()) return inconclusive("the runner passed no --window-base");
  if (!parse_window_base(ctx.opts.window_base, base)) return inconclusive("bad --window-base");
  const std::string grant = ctx.opts.window_grant.empty() ? "anthropic" : ctx.opts.window_grant;
  const std::string path = path_of(base, grant);
  const HttpReply r = window_get(ctx, base, path);
  if (!r.got) return inconclusive("GET " + path + ": no answer (" + errno_name(r.err) + ")");
  const std::string ev = "GET " + path + " -> " + std::to_string(r.status);
  if (r.status != 403 && r.status != 400 && r.status != 404) return fail(ev + ": served");
  const Control c = window_control(ctx, base);
  if (!c.works) return inconclusive(ev + "; " + c.evidence);
  return pass(ev + "; " + c.evidence);
}

}  // namespace escape
