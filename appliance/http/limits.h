// The bounds every HTTP/1.x head read from a peer is held to, defined once for every listener and
// every upstream answer (the corridor, the window, the control channel; the controller's server).
#pragma once

#include <cstddef>
#include <cstdint>

namespace appliance::http {

// A request head (request line, header fields and the empty line that ends them) is at most
// 16 KiB, as the gatekeeper this one replaces allowed; one byte more is unreadable.
inline constexpr std::size_t kMaxRequestHeadBytes = 16 * 1024;
// An upstream's answer head may be larger (Set-Cookie lines, long CSP fields): 64 KiB.
inline constexpr std::size_t kMaxResponseHeadBytes = 64 * 1024;
// Header field lines kept per head; one more is unreadable.
inline constexpr std::size_t kMaxHeaderLines = 128;
// A head must be complete this long after its first byte (slow-loris bound).
inline constexpr std::uint64_t kHeadDeadlineMs = 10'000;

}  // namespace appliance::http
