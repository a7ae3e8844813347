#include "policy/header_rules.h"

#include "policy/ascii.h"

#include <array>

namespace policy {
namespace {

constexpr auto lower = ascii::to_lower;

constexpr HeaderClass kCred = HeaderClass::kCredential;
constexpr HeaderClass kHop = HeaderClass::kHopByHop;
constexpr HeaderClass kSet = HeaderClass::kWindowSet;
constexpr HeaderClass kRoute = HeaderClass::kRouting;

constexpr std::array<HeaderRow, 36> kRows = {{
    // Credentials the space may hold a fake of (docs/reference-behaviour.md#window-headers, plus
    // the other vendors' key headers).
    {"authorization", false, kCred, "RFC 9110 §11.6.2: the space's own (fake) key"},
    {"proxy-authorization", false, kCred, "RFC 9110 §11.7.2: meant for a proxy, never for the upstream"},
    {"x-api-key", false, kCred, "Anthropic-style key header"},
    {"x-goog-api-key", false, kCred, "Google AI (Gemini) key header"},
    {"api-key", false, kCred, "Azure OpenAI key header"},
    {"cookie", false, kCred, "RFC 6265: session state of the space, not of the user"},
    // Hop-by-hop (RFC 9110 §7.6.1).
    {"connection", false, kHop, "RFC 9110 §7.6.1: options of this hop only"},
    {"keep-alive", false, kHop, "RFC 9112 appendix C.2.2: this hop's keep-alive parameters"},
    {"proxy-connection", false, kHop, "pre-standard Connection for proxies"},
    {"te", false, kHop, "RFC 9110 §10.1.4: codings this hop accepts"},
    {"trailer", false, kHop, "RFC 9110 §6.6.2: trailers are not forwarded"},
    {"upgrade", false, kHop, "RFC 9110 §7.8: the window carries no protocol switch"},
    // Set by the window.
    {"host", false, kSet, "RFC 9110 §7.2: the window writes the upstream's authority"},
    {"content-length", false, kSet, "RFC 9112 §6: the window re-frames the body it parsed"},
    {"transfer-encoding", false, kSet, "RFC 9112 §6.1: the window re-frames the body it parsed"},
    {"expect", false, kSet, "RFC 9110 §10.1.1: the window answers 100-continue itself"},
    // Routing: path and method overrides read by frameworks behind the upstream's front end,
    // which would take the request somewhere the path rule never judged.
    {"x-original-url", false, kRoute, "IIS URL Rewrite and Symfony: replaces the path"},
    {"x-rewrite-url", false, kRoute, "IIS and Symfony: replaces the path"},
    {"x-original-uri", false, kRoute, "nginx auth_request and others: replaces the path"},
    {"x-override-url", false, kRoute, "path override of some gateways"},
    {"x-http-destinationurl", false, kRoute, "path override of some gateways"},
    {"x-http-method-override", false, kRoute, "Google APIs, Rails, Express: replaces the method"},
    {"x-http-method", false, kRoute, "OData and ASP.NET: replaces the method"},
    {"x-method-override", false, kRoute, "IBM and others: replaces the method"},
    // Forwarding claims: a client address, host or scheme the upstream may trust.
    {"x-forwarded-", true, kRoute, "X-Forwarded-For/-Host/-Proto/-Prefix/...: forged client facts"},
    {"forwarded", false, kRoute, "RFC 7239: forged client facts"},
    {"x-real-ip", false, kRoute, "nginx real-ip: a forged client address"},
    {"x-client-ip", false, kRoute, "a forged client address"},
    {"client-ip", false, kRoute, "a forged client address"},
    {"true-client-ip", false, kRoute, "Akamai and Cloudflare: a forged client address"},
    {"cf-connecting-ip", false, kRoute, "Cloudflare: a forged client address"},
    {"x-cluster-client-ip", false, kRoute, "a forged client address"},
    {"x-host", false, kRoute, "host override of some frameworks"},
    {"x-forwarded", false, kRoute, "pre-standard Forwarded: forged client facts"},
    {"x-original-host", false, kRoute, "host override of some proxies"},
    {"via", false, kRoute, "RFC 9110 §7.6.3: the proxy chain is not the space's to claim"},
}};

bool starts_with_icase(std::string_view name, std::string_view prefix) {
  return name.size() >= prefix.size() && ascii_iequals(name.substr(0, prefix.size()), prefix);
}

}  // namespace

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::span<const HeaderRow> stripped_request_headers() { return kRows; }

const HeaderRow* stripped_request_header(std::string_view name) {
  for (const HeaderRow& row : kRows) {
    if (row.prefix ? starts_with_icase(name, row.name) : ascii_iequals(name, row.name)) return &row;
  }
  return nullptr;
}

bool is_hop_by_hop(std::string_view name) {
  const HeaderRow* row = stripped_request_header(name);
  return row != nullptr && row->kind == HeaderClass::kHopByHop;
}

bool grant_header_allowed(std::string_view lower_name) {
  const HeaderRow* row = stripped_request_header(lower_name);
  if (row == nullptr) return true;
  switch (row->kind) {
    case HeaderClass::kCredential: return true;
    case HeaderClass::kHopByHop:
    case HeaderClass::kWindowSet:
    case HeaderClass::kRouting: return false;
  }
  return false;
}

}  // namespace policy
