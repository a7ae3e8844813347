// The request header fields the window never forwards to an upstream, one decision with a
// reason per row (docs/decisions.md#every-row-has-a-reason), and which of them a grant may name
// as its own header.
//
//   kCredential  the space's own (fake) credentials: dropped; a grant may inject one of these
//   kHopByHop    for one hop only (RFC 9110 §7.6.1): dropped both ways; never a grant header
//   kWindowSet   set by the window itself (Host, the body framing, Expect): dropped; never a
//                grant header, or the window and the upstream would read two framings
//   kRouting     rewrites the path or the method behind the window's path rule, or claims a
//                client address or scheme (X-Original-URL, X-HTTP-Method-Override, every
//                X-Forwarded-*, Forwarded): dropped; never a grant header
// Names compare without regard to ASCII case; a row with `prefix` matches every name that starts
// with it. Fields named by the request's Connection field are dropped too (window.cc).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace policy {

// Every class is dropped going up; the zero value is one a grant may not name.
enum class HeaderClass : std::uint8_t { kHopByHop = 0, kWindowSet, kRouting, kCredential };

struct HeaderRow {
  std::string_view name;  // lower case
  bool prefix;            // matches every name starting with `name`
  HeaderClass kind;
  std::string_view reason;
};

std::span<const HeaderRow> stripped_request_headers();

// The row a request field falls under, or nullptr when the window forwards it.
const HeaderRow* stripped_request_header(std::string_view name);

// RFC 9110 §7.6.1 hop-by-hop (the kHopByHop rows): dropped from the answer to the space too.
bool is_hop_by_hop(std::string_view name);

// A grant may name `lower_name` as the header its secret goes in: not hop-by-hop, not set by the
// window, not a routing field. Credential rows are allowed (that is what a grant injects).
bool grant_header_allowed(std::string_view lower_name);

bool ascii_iequals(std::string_view a, std::string_view b);

}  // namespace policy
