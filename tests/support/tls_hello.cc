#include "tests/support/tls_hello.h"

namespace gk_test {
namespace {

void put16(std::string& out, std::size_t value) {
  out.push_back(static_cast<char>((value >> 8) & 0xff));
  out.push_back(static_cast<char>(value & 0xff));
}

void put24(std::string& out, std::size_t value) {
  out.push_back(static_cast<char>((value >> 16) & 0xff));
  put16(out, value);
}

void extension(std::string& out, std::uint16_t type, std::string_view data) {
  put16(out, type);
  put16(out, data.size());
  out.append(data);
}

constexpr std::uint16_t kPadding = 21;  // RFC 7685

}  // namespace

std::string client_hello_message(const HelloSpec& spec) {
  std::string body;
  put16(body, 0x0303);             // legacy_version
  body.append(32, '\x5a');         // random
  body.push_back(32);              // legacy_session_id
  body.append(32, '\x11');
  put16(body, 4);                  // cipher_suites
  put16(body, 0x1301);
  put16(body, 0xc02f);
  body.push_back(1);               // legacy_compression_methods: null
  body.push_back(0);
  std::string extensions;
  if (spec.server_name) {
    std::string entry;
    entry.push_back(0);  // host_name
    put16(entry, spec.server_name->size());
    entry.append(*spec.server_name);
    std::string list;
    put16(list, entry.size());
    list.append(entry);
    extension(extensions, 0, list);
  }
  extension(extensions, 43, std::string("\x02\x03\x04", 3));  // supported_versions: TLS 1.3
  for (const auto& [type, data] : spec.extensions) extension(extensions, type, data);
  // body + 2 (extensions length) + extensions + 4 (padding header) + n == body_length
  const std::size_t without = body.size() + 2 + extensions.size();
  if (spec.body_length != 0 && spec.body_length >= without + 4) {
    extension(extensions, kPadding, std::string(spec.body_length - without - 4, '\0'));
  }
  put16(body, extensions.size());
  body.append(extensions);
  std::string message;
  message.push_back(1);  // client_hello
  put24(message, body.size());
  message.append(body);
  return message;
}

std::string tls_record(std::string_view payload, std::uint8_t type) {
  std::string out;
  out.push_back(static_cast<char>(type));
  put16(out, 0x0301);
  put16(out, payload.size());
  out.append(payload);
  return out;
}

std::string tls_records(std::string_view handshake, std::size_t fragment) {
  std::string out;
  for (std::size_t pos = 0; pos < handshake.size(); pos += fragment) {
    out += tls_record(handshake.substr(pos, fragment));
  }
  return out;
}

}  // namespace gk_test
