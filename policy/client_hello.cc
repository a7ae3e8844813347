#include "policy/client_hello.h"

#include <array>

#include "policy/name.h"

namespace policy {
namespace {

constexpr std::uint8_t kContentTypeHandshake = 22;   // RFC 8446 §5.1
constexpr std::uint8_t kHandshakeClientHello = 1;    // RFC 8446 §4
constexpr std::size_t kHandshakeHeaderLength = 4;    // type + uint24 length
constexpr std::uint16_t kExtensionServerName = 0;    // RFC 6066 §3
constexpr std::uint8_t kNameTypeHostName = 0;        // RFC 6066 §3
constexpr std::size_t kRandomLength = 32;            // RFC 8446 §4.1.2
constexpr std::size_t kMaxSessionIdLength = 32;      // RFC 8446 §4.1.2

constexpr std::array<EchExtension, 9> kEchExtensions = {{
    {0xfe0d, "encrypted_client_hello (RFC 9849; also what GREASE ECH sends)"},
    {0xfd00, "ech_outer_extensions (RFC 9849; only legal inside the encrypted inner hello)"},
    {0xfe08, "encrypted_client_hello, draft-ietf-tls-esni-08"},
    {0xfe09, "encrypted_client_hello, draft-ietf-tls-esni-09"},
    {0xfe0a, "encrypted_client_hello, draft-ietf-tls-esni-10"},
    {0xfe0b, "encrypted_client_hello, draft-ietf-tls-esni-11"},
    {0xfe0c, "encrypted_client_hello, draft-ietf-tls-esni-12"},
    {0xff02, "encrypted_client_hello, draft-ietf-tls-esni-07 and earlier ECH drafts"},
    {0xffce, "encrypted_server_name, ESNI draft-ietf-tls-esni-01..04"},
}};

bool is_ech(std::uint16_t type) {
  for (const EchExtension& e : kEchExtensions) {
    if (e.type == type) return true;
  }
  return false;
}

// Reads big-endian fields from a view; any read past the end sets failed() and yields zeros.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  [[nodiscard]] bool failed() const { return failed_; }
  [[nodiscard]] std::size_t left() const { return bytes_.size() - pos_; }
  std::uint32_t number(std::size_t width) {
    if (left() < width) {
      failed_ = true;
      pos_ = bytes_.size();
      return 0;
    }
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      value = (value << 8) | static_cast<std::uint8_t>(bytes_[pos_ + i]);
    }
    pos_ += width;
    return value;
  }
  std::string_view take(std::size_t length) {
    if (left() < length) {
      failed_ = true;
      pos_ = bytes_.size();
      return {};
    }
    std::string_view out = bytes_.substr(pos_, length);
    pos_ += length;
    return out;
  }
  // A field of `width` length bytes followed by that many bytes.
  std::string_view vector(std::size_t width) { return take(number(width)); }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

bool valid_legacy_version(std::uint32_t version) { return version >= 0x0301 && version <= 0x0303; }

// RFC 6066 §3: ServerNameList with exactly one host_name of at least one byte. nullopt: malformed.
std::optional<std::string> parse_server_name(std::string_view data) {
  Reader reader(data);
  std::string_view list = reader.vector(2);
  if (reader.failed() || reader.left() != 0 || list.empty()) return std::nullopt;
  Reader entries(list);
  std::optional<std::string> name;
  while (entries.left() > 0) {
    const std::uint32_t type = entries.number(1);
    std::string_view host = entries.vector(2);
    // Only host_name is defined; a second one is forbidden ("MUST NOT contain more than one name
    // of the same name_type"); an unknown type could be read differently by the server.
    if (entries.failed() || type != kNameTypeHostName || host.empty() || host.size() > kMaxNameLength ||
        name.has_value()) {
      return std::nullopt;
    }
    name = std::string(host);
  }
  return name;
}

// Parses a whole ClientHello body (after the handshake header).
ClientHello parse_body(std::string_view body, std::size_t wire_length) {
  ClientHello out;
  Reader reader(body);
  const std::uint32_t version = reader.number(2);
  reader.take(kRandomLength);
  const std::string_view session_id = reader.vector(1);
  const std::string_view suites = reader.vector(2);
  const std::string_view compression = reader.vector(1);
  if (reader.failed() || !valid_legacy_version(version) || session_id.size() > kMaxSessionIdLength ||
      suites.empty() || suites.size() % 2 != 0 || compression.empty()) {
    return out;
  }
  out.wire_length = wire_length;
  if (reader.left() == 0) {  // no extensions at all (RFC 5246 §7.4.1.2): so no server name
    out.status = HelloStatus::kComplete;
    return out;
  }
  const std::string_view extensions = reader.vector(2);
  if (reader.failed() || reader.left() != 0) return out;
  Reader ext(extensions);
  std::array<std::uint64_t, 65536 / 64> seen{};  // one bit per extension type
  while (ext.left() > 0) {
    const std::uint32_t type = ext.number(2);
    const std::string_view data = ext.vector(2);
    const std::uint64_t bit = std::uint64_t{1} << (type % 64);
    if (ext.failed() || (seen[type / 64] & bit) != 0) return ClientHello{};  // RFC 8446 §4.2: no duplicates
    seen[type / 64] |= bit;
    if (type == kExtensionServerName) {
      out.server_name = parse_server_name(data);
      if (!out.server_name) return ClientHello{};
    }
    if (is_ech(static_cast<std::uint16_t>(type))) out.ech = true;
  }
  out.status = HelloStatus::kComplete;
  return out;
}

ClientHello with_status(HelloStatus status) {
  ClientHello out;
  out.status = status;
  return out;
}

}  // namespace

std::span<const EchExtension> ech_extensions() { return kEchExtensions; }

ClientHello parse_client_hello(std::string_view bytes) {
  std::string handshake;  // the handshake bytes gathered from the records so far
  std::size_t pos = 0;
  std::size_t records = 0;
  std::size_t hello_total = 0;  // header + body once the handshake header is known
  while (true) {
    const std::string_view rest = bytes.substr(pos);
    // Judge each header byte as soon as it arrives, so text that is not TLS is refused at once.
    if (!rest.empty() && static_cast<std::uint8_t>(rest[0]) != kContentTypeHandshake) {
      return with_status(HelloStatus::kNotTls);
    }
    if (rest.size() >= 2 && rest[1] != 0x03) return with_status(HelloStatus::kNotTls);
    if (rest.size() >= 3 && !valid_legacy_version(0x0300u | static_cast<std::uint8_t>(rest[2]))) {
      return with_status(HelloStatus::kNotTls);
    }
    if (rest.size() < kTlsRecordHeaderLength) return with_status(HelloStatus::kNeedMore);
    const std::size_t length = (static_cast<std::size_t>(static_cast<std::uint8_t>(rest[3])) << 8) |
                               static_cast<std::uint8_t>(rest[4]);
    if (length > kMaxTlsRecordLength) return with_status(HelloStatus::kOversize);
    if (length == 0) return with_status(HelloStatus::kNotTls);  // RFC 8446 §5.1
    if (++records > kMaxClientHelloRecords) return with_status(HelloStatus::kOversize);
    const std::string_view fragment = rest.substr(kTlsRecordHeaderLength, length);
    const std::size_t before = handshake.size();
    handshake.append(fragment);
    if (hello_total == 0 && handshake.size() >= 1 &&
        static_cast<std::uint8_t>(handshake[0]) != kHandshakeClientHello) {
      return with_status(HelloStatus::kNotTls);
    }
    if (hello_total == 0 && handshake.size() >= kHandshakeHeaderLength) {
      const std::size_t body = (static_cast<std::size_t>(static_cast<std::uint8_t>(handshake[1])) << 16) |
                               (static_cast<std::size_t>(static_cast<std::uint8_t>(handshake[2])) << 8) |
                               static_cast<std::uint8_t>(handshake[3]);
      if (body > kMaxClientHelloLength) return with_status(HelloStatus::kOversize);
      if (body == 0) return with_status(HelloStatus::kNotTls);
      hello_total = kHandshakeHeaderLength + body;
    }
    if (hello_total != 0 && before + length >= hello_total) {
      // This record ends the hello; it must hold nothing after it (the client's first flight is
      // the ClientHello alone).
      if (before + length != hello_total) return with_status(HelloStatus::kNotTls);
      if (fragment.size() < length) return with_status(HelloStatus::kNeedMore);
      const std::size_t wire = pos + kTlsRecordHeaderLength + length;
      return parse_body(std::string_view(handshake).substr(kHandshakeHeaderLength), wire);
    }
    if (fragment.size() < length) return with_status(HelloStatus::kNeedMore);
    pos += kTlsRecordHeaderLength + length;
  }
}

Decision decide_client_hello(const ClientHello& hello, std::string_view approved_name) {
  switch (hello.status) {
    case HelloStatus::kNotTls: return Decision::of(Word::kDenyNotTls);
    case HelloStatus::kOversize: return Decision::of(Word::kDenyTlsOversize);
    case HelloStatus::kNeedMore: return Decision{};
    case HelloStatus::kComplete: break;
  }
  if (hello.ech) return Decision::of(Word::kDenyTlsEch);
  if (!hello.server_name) return Decision::of(Word::kDenyTlsNoSni);
  const std::optional<std::string> name = checked_name(*hello.server_name);
  if (!name || *name != approved_name) return Decision::of(Word::kDenyTlsSniMismatch);
  return Decision::of(Word::kAllow);
}

}  // namespace policy
