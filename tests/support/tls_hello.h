// Hand-built TLS ClientHello bytes for tests of the corridor's first-flight check: a valid hello
// with or without a server name, extra extensions, padding to reach a size, and records cut at any
// fragment size. No TLS library: the tests need exact control over every length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gk_test {

struct HelloSpec {
  std::optional<std::string> server_name;  // nullopt: no server_name extension
  std::vector<std::pair<std::uint16_t, std::string>> extensions;  // added after server_name
  std::size_t body_length = 0;  // when non-zero: a padding extension (RFC 7685) makes the body exactly this long
};

// The handshake message: type 1, uint24 length, body.
std::string client_hello_message(const HelloSpec& spec);

// `handshake` cut into TLS 1.0-versioned handshake records of at most `fragment` bytes each.
std::string tls_records(std::string_view handshake, std::size_t fragment = 16384);

// One record (type 22, version 0x0301) around `payload`, with its real length.
std::string tls_record(std::string_view payload, std::uint8_t type = 22);

// The usual case: one record holding a hello for `server_name`.
inline std::string client_hello(const std::string& server_name) {
  return tls_records(client_hello_message(HelloSpec{server_name, {}, 0}));
}

}  // namespace gk_test
