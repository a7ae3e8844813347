// The first flight of a tunnel: the corridor approves a CONNECT name, answers 200, and then holds
// every byte the client sends until this parser has read the TLS ClientHello and
// decide_client_hello() has compared its server name with the approved name. Without this check a
// tunnel approved for one name on a shared CDN carries a ClientHello for any other site on that CDN.
//
// Strict, pure, bounded:
//   - records: content type 22 (handshake) only, legacy version 0x0301..0x0303, length
//     1..kMaxTlsRecordLength (RFC 8446 §5.1: a zero-length handshake fragment is not allowed);
//   - the handshake message spans as many records as it needs (at most kMaxClientHelloRecords),
//     is a ClientHello (type 1) of at most kMaxClientHelloLength bytes, and nothing but it is in
//     those records;
//   - the ClientHello body parses exactly (every length inside its parent, no trailing byte), no
//     extension type appears twice (RFC 8446 §4.2), and server_name (RFC 6066 §3) holds exactly one
//     host_name entry of 1..kMaxNameLength bytes.
// Bytes that are not a TLS handshake, a malformed ClientHello, one over a cap, one without a
// server name, one carrying Encrypted Client Hello, or one whose name differs from the approved
// one after the corridor's normalisation: each is refused with its own word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "policy/decision.h"

namespace policy {

inline constexpr std::size_t kTlsRecordHeaderLength = 5;
inline constexpr std::size_t kMaxTlsRecordLength = 16384;    // RFC 8446 §5.1: 2^14
inline constexpr std::size_t kMaxClientHelloLength = 16384;  // the handshake body; browsers send < 3 KiB
inline constexpr std::size_t kMaxClientHelloRecords = 32;    // a hello cut into more pieces is refused
// Every byte the corridor may hold while it waits for a whole ClientHello: kMaxClientHelloRecords
// headers plus the handshake header and the largest body.
inline constexpr std::size_t kMaxClientHelloWireBytes =
    kMaxClientHelloRecords * kTlsRecordHeaderLength + 4 + kMaxClientHelloLength;

// Extension code points that carry an encrypted inner ClientHello or server name: the check
// would read only the outer (public) name, so a hello carrying one is refused whatever its name.
struct EchExtension {
  std::uint16_t type;
  std::string_view why;
};
std::span<const EchExtension> ech_extensions();

enum class HelloStatus : std::uint8_t {
  kNotTls = 0,  // zero value: refuses. Not a TLS handshake record, or a malformed ClientHello
  kNeedMore,    // every byte so far is a valid prefix; read more
  kOversize,    // a record, the hello or the number of records is over its cap
  kComplete,    // a whole ClientHello was read and parsed
};

struct ClientHello {
  HelloStatus status = HelloStatus::kNotTls;
  // kComplete only:
  std::optional<std::string> server_name;  // the host_name entry as sent (bytes, not normalised)
  bool ech = false;                        // an extension from ech_extensions() is present
  std::size_t wire_length = 0;             // bytes of the records that held the hello
};

// Parses the first bytes the client sent into the tunnel. Pure: call it again with more bytes.
ClientHello parse_client_hello(std::string_view bytes);

// The tunnel's verdict for a complete hello: allow when its server name, normalised like a CONNECT
// name, equals `approved_name`; else deny:tls-ech, deny:tls-no-sni or deny:tls-sni-mismatch.
// Any other status: deny:not-tls or deny:tls-oversize (kNeedMore: deny:undecided).
Decision decide_client_hello(const ClientHello& hello, std::string_view approved_name);

}  // namespace policy
