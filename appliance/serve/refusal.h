// The exact bytes of every refusal: a generic status line and Connection: close, no reason text,
// no body (the reason goes to the journal only; docs/reference-behaviour.md#corridor-refusals: the
// space must not learn why).
#pragma once

#include <string>
#include <string_view>

#include "policy/decision.h"

namespace appliance::serve {

inline std::string refusal_bytes(int status) {
  std::string_view line = "HTTP/1.1 403 Forbidden\r\n";
  if (status == 400) line = "HTTP/1.1 400 Bad Request\r\n";
  if (status == 502) line = "HTTP/1.1 502 Bad Gateway\r\n";
  if (status == 503) line = "HTTP/1.1 503 Service Unavailable\r\n";
  return std::string(line) + "Connection: close\r\n\r\n";
}

// The status the corridor answers for a decision word.
inline int corridor_status(policy::Word word) {
  switch (word) {
    case policy::Word::kAllow: return 200;
    case policy::Word::kFailed: return 502;
    case policy::Word::kDenyMalformed:
    case policy::Word::kDenyUnreadableRequest: return 400;
    case policy::Word::kDenyTooManyTunnels:
    case policy::Word::kDenyTooManyConnections: return 503;
    case policy::Word::kDenyUndecided:
    case policy::Word::kDenyNotAName:
    case policy::Word::kDenyNotOnAllowlist:
    case policy::Word::kDenyPort:
    case policy::Word::kDenyAlwaysRefused:
    case policy::Word::kDenyBlockedAddress:
    case policy::Word::kDenyUnresolved:
    case policy::Word::kDenyNotConnect:
    case policy::Word::kDenyNoGrant:
    case policy::Word::kDenyPathWalksOut:
    case policy::Word::kDenyOwnListener:
    case policy::Word::kDenyBadWindowKey:
    // After the 200 the tunnel is only closed; these never become a status line.
    case policy::Word::kDenyNotTls:
    case policy::Word::kDenyTlsOversize:
    case policy::Word::kDenyTlsNoSni:
    case policy::Word::kDenyTlsSniMismatch:
    case policy::Word::kDenyTlsEch:
    case policy::Word::kDenyTlsTimeout:
    case policy::Word::kDenyPolicyChanged:
    case policy::Word::kDenySpecialUseName: return 403;
  }
  return 403;  // unreachable: the switch is exhaustive (-Wswitch-enum)
}

}  // namespace appliance::serve
