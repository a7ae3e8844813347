// The tunnel's first flight: exact decisions of the ClientHello parser, every cap at the limit and
// one past it, and every way a hello may be cut into records.
#include "policy/client_hello.h"

#include <gtest/gtest.h>

#include <string>

#include "policy/name.h"
#include "tests/support/tls_hello.h"

namespace policy {
namespace {

using gk_test::client_hello;
using gk_test::client_hello_message;
using gk_test::HelloSpec;
using gk_test::tls_record;
using gk_test::tls_records;

constexpr std::string_view kName = "api.example.com";

std::string decide(std::string_view bytes, std::string_view approved = kName) {
  return decide_client_hello(parse_client_hello(bytes), approved).text();
}

std::string message_for(std::optional<std::string> name) { return client_hello_message(HelloSpec{std::move(name), {}, 0}); }

TEST(ClientHelloTest, MatchingServerNameAllows) {
  const std::string bytes = client_hello(std::string(kName));
  const ClientHello hello = parse_client_hello(bytes);
  ASSERT_EQ(hello.status, HelloStatus::kComplete);
  EXPECT_EQ(hello.server_name, std::string(kName));
  EXPECT_FALSE(hello.ech);
  EXPECT_EQ(hello.wire_length, bytes.size());
  EXPECT_EQ(decide(bytes), "allow");
}

TEST(ClientHelloTest, ServerNameIsNormalisedLikeTheConnectName) {
  EXPECT_EQ(decide(client_hello("API.Example.COM")), "allow");
  EXPECT_EQ(decide(client_hello("api.example.com.")), "allow");
}

TEST(ClientHelloTest, OtherServerNameIsMismatch) {
  EXPECT_EQ(decide(client_hello("auth.openai.com")), "deny:tls-sni-mismatch");
  EXPECT_EQ(decide(client_hello("example.com")), "deny:tls-sni-mismatch");
  EXPECT_EQ(decide(client_hello("x.api.example.com")), "deny:tls-sni-mismatch");
  EXPECT_EQ(decide(client_hello("api.example.com..")), "deny:tls-sni-mismatch");
  EXPECT_EQ(decide(client_hello(std::string(kName) + std::string(1, '\0') + ".evil.com")),
            "deny:tls-sni-mismatch");
  EXPECT_EQ(decide(client_hello("198.18.0.2")), "deny:tls-sni-mismatch");
  EXPECT_EQ(decide(client_hello("api.example.com\xc3\xa9")), "deny:tls-sni-mismatch");
}

TEST(ClientHelloTest, NoServerNameIsRefused) {
  EXPECT_EQ(decide(tls_records(message_for(std::nullopt))), "deny:tls-no-sni");
}

TEST(ClientHelloTest, HelloWithoutAnyExtensionHasNoServerName) {
  std::string body;
  body += std::string("\x03\x03", 2) + std::string(32, 'r') + std::string(1, '\0');  // no session id
  body += std::string("\x00\x02\x13\x01", 4) + std::string("\x01\x00", 2);
  std::string message = std::string("\x01\x00\x00", 3) + static_cast<char>(body.size()) + body;
  EXPECT_EQ(decide(tls_records(message)), "deny:tls-no-sni");
}

TEST(ClientHelloTest, EveryEncryptedClientHelloCodePointIsRefusedEvenWithTheRightName) {
  ASSERT_FALSE(ech_extensions().empty());
  for (const EchExtension& ech : ech_extensions()) {
    const std::string bytes = tls_records(client_hello_message(HelloSpec{std::string(kName), {{ech.type, "ech"}}, 0}));
    EXPECT_EQ(decide(bytes), "deny:tls-ech") << std::hex << ech.type;
  }
  // The RFC 9849 code point is in the table; a neighbour that is no ECH code point is not.
  EXPECT_EQ(decide(tls_records(client_hello_message(HelloSpec{std::string(kName), {{0xfe0d, ""}}, 0}))), "deny:tls-ech");
  EXPECT_EQ(decide(tls_records(client_hello_message(HelloSpec{std::string(kName), {{0xfe0e, ""}}, 0}))), "allow");
  EXPECT_EQ(decide(tls_records(client_hello_message(HelloSpec{std::nullopt, {{0xfe0d, ""}}, 0}))), "deny:tls-ech");
}

TEST(ClientHelloTest, BytesThatAreNotATlsHandshakeAreRefusedAtTheFirstByte) {
  EXPECT_EQ(decide("G"), "deny:not-tls");
  EXPECT_EQ(decide("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n"), "deny:not-tls");
  EXPECT_EQ(decide("SSH-2.0-OpenSSH_9.2\r\n"), "deny:not-tls");
  EXPECT_EQ(decide(std::string("\x80\x2e\x01\x03\x01", 5)), "deny:not-tls");  // SSLv2 hello
  EXPECT_EQ(decide(tls_record("x", 23)), "deny:not-tls");                      // application data
  EXPECT_EQ(decide(tls_record("\x02\x28", 21)), "deny:not-tls");               // alert
  EXPECT_EQ(decide(tls_record("\x01", 20)), "deny:not-tls");                   // change_cipher_spec
  EXPECT_EQ(decide(std::string("\x16\x02", 2)), "deny:not-tls");
}

TEST(ClientHelloTest, RecordVersionsOutsideTls10To12AreNotTls) {
  std::string bytes = client_hello(std::string(kName));
  for (const char minor : {'\x00', '\x04', '\xff'}) {
    bytes[2] = minor;
    EXPECT_EQ(decide(bytes), "deny:not-tls") << int(minor);
    EXPECT_EQ(decide(bytes.substr(0, 3)), "deny:not-tls") << int(minor);
  }
  for (const char minor : {'\x01', '\x02', '\x03'}) {
    bytes[2] = minor;
    EXPECT_EQ(decide(bytes), "allow") << int(minor);
  }
}

TEST(ClientHelloTest, EveryStrictPrefixOfAHelloNeedsMore) {
  const std::string bytes = client_hello(std::string(kName));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const ClientHello hello = parse_client_hello(std::string_view(bytes).substr(0, n));
    EXPECT_EQ(hello.status, HelloStatus::kNeedMore) << n;
    EXPECT_EQ(decide_client_hello(hello, kName).text(), "deny:undecided") << n;
  }
}

TEST(ClientHelloTest, HelloSplitAcrossRecordsIsReassembled) {
  const std::string message = message_for(std::string(kName));
  for (const std::size_t fragment : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{5}, std::size_t{40}, std::size_t{100}}) {
    const std::string bytes = tls_records(message, fragment);
    if ((message.size() + fragment - 1) / fragment > kMaxClientHelloRecords) continue;
    EXPECT_EQ(decide(bytes), "allow") << fragment;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      ASSERT_EQ(parse_client_hello(std::string_view(bytes).substr(0, n)).status, HelloStatus::kNeedMore)
          << fragment << " " << n;
    }
  }
  // A mismatch cut into pieces is still a mismatch.
  EXPECT_EQ(decide(tls_records(message_for("auth.openai.com"), 7)), "deny:tls-sni-mismatch");
}

TEST(ClientHelloTest, RecordCountAtTheCapAndOnePast) {
  HelloSpec spec{std::string(kName), {}, kMaxClientHelloRecords * 10 - 4};
  const std::string message = client_hello_message(spec);
  ASSERT_EQ(message.size(), kMaxClientHelloRecords * 10);
  EXPECT_EQ(decide(tls_records(message, 10)), "allow");       // exactly 32 records
  spec.body_length += 1;
  EXPECT_EQ(decide(tls_records(client_hello_message(spec), 10)), "deny:tls-oversize");  // 33
}

TEST(ClientHelloTest, RecordLengthAtTheCapAndOnePast) {
  // One record of exactly 2^14 bytes holds the whole message.
  const std::string message = client_hello_message(HelloSpec{std::string(kName), {}, kMaxTlsRecordLength - 4});
  ASSERT_EQ(message.size(), kMaxTlsRecordLength);
  EXPECT_EQ(decide(tls_records(message)), "allow");
  // A record header announcing 2^14 + 1 is refused on its header alone.
  std::string header("\x16\x03\x01\x40\x01", 5);
  EXPECT_EQ(decide(header), "deny:tls-oversize");
  EXPECT_EQ(decide(header + message), "deny:tls-oversize");
}

TEST(ClientHelloTest, HelloLengthAtTheCapAndOnePast) {
  const std::string at = client_hello_message(HelloSpec{std::string(kName), {}, kMaxClientHelloLength});
  ASSERT_EQ(at.size(), kMaxClientHelloLength + 4);
  EXPECT_EQ(decide(tls_records(at)), "allow");  // two records
  const std::string past = client_hello_message(HelloSpec{std::string(kName), {}, kMaxClientHelloLength + 1});
  EXPECT_EQ(decide(tls_records(past)), "deny:tls-oversize");
  EXPECT_EQ(decide(tls_records(past).substr(0, 9)), "deny:tls-oversize");  // judged on the header
  EXPECT_LE(tls_records(at).size(), kMaxClientHelloWireBytes);
}

TEST(ClientHelloTest, ZeroLengthRecordOrHandshakeIsNotTls) {
  EXPECT_EQ(decide(std::string("\x16\x03\x01\x00\x00", 5)), "deny:not-tls");
  EXPECT_EQ(decide(tls_record(std::string("\x01\x00\x00\x00", 4))), "deny:not-tls");
}

TEST(ClientHelloTest, OtherHandshakeMessageIsNotTls) {
  std::string message = message_for(std::string(kName));
  message[0] = 2;  // server_hello
  EXPECT_EQ(decide(tls_records(message)), "deny:not-tls");
  EXPECT_EQ(decide(tls_records(message).substr(0, 6)), "deny:not-tls");
}

TEST(ClientHelloTest, BytesAfterTheHelloInItsRecordAreNotTls) {
  const std::string message = message_for(std::string(kName));
  EXPECT_EQ(decide(tls_record(message + "x")), "deny:not-tls");
  EXPECT_EQ(decide(tls_record(message + message)), "deny:not-tls");
}

TEST(ClientHelloTest, RecordsAfterTheHelloAreLeftForTheRelay) {
  const std::string hello = client_hello(std::string(kName));
  const std::string bytes = hello + tls_record("early", 23) + "anything";
  const ClientHello parsed = parse_client_hello(bytes);
  ASSERT_EQ(parsed.status, HelloStatus::kComplete);
  EXPECT_EQ(parsed.wire_length, hello.size());
  EXPECT_EQ(decide(bytes), "allow");
}

TEST(ClientHelloTest, DuplicateExtensionIsNotTls) {
  EXPECT_EQ(decide(tls_records(client_hello_message(HelloSpec{std::string(kName), {{43, "\x02\x03\x04"}}, 0}))),
            "deny:not-tls");
  std::string sni_again;
  sni_again += std::string("\x00\x0e\x00\x00\x0b", 5) + "example.com";
  EXPECT_EQ(decide(tls_records(client_hello_message(HelloSpec{std::string(kName), {{0, sni_again}}, 0}))),
            "deny:not-tls");
}

std::string with_sni_data(const std::string& data) {
  return tls_records(client_hello_message(HelloSpec{std::nullopt, {{0, data}}, 0}));
}

TEST(ClientHelloTest, ServerNameExtensionIsParsedExactly) {
  const std::string good = std::string("\x00\x0e\x00\x00\x0b", 5) + "example.com";
  EXPECT_EQ(decide(with_sni_data(good), "example.com"), "allow");
  EXPECT_EQ(decide(with_sni_data(good + "x"), "example.com"), "deny:not-tls");        // trailing byte
  EXPECT_EQ(decide(with_sni_data(""), "example.com"), "deny:not-tls");                // empty extension
  EXPECT_EQ(decide(with_sni_data(std::string("\x00\x00", 2)), "example.com"), "deny:not-tls");  // empty list
  EXPECT_EQ(decide(with_sni_data(std::string("\x00\x03\x00\x00\x00", 5)), "example.com"), "deny:not-tls");
  std::string other_type = good;
  other_type[2] = 1;
  EXPECT_EQ(decide(with_sni_data(other_type), "example.com"), "deny:not-tls");
  const std::string two = std::string("\x00\x1c\x00\x00\x0b", 5) + "example.com" +
                          std::string("\x00\x00\x0b", 3) + "example.org";
  EXPECT_EQ(decide(with_sni_data(two), "example.com"), "deny:not-tls");
  std::string short_list = good;
  short_list[1] = 0x0f;  // list length past the extension
  EXPECT_EQ(decide(with_sni_data(short_list), "example.com"), "deny:not-tls");
}

TEST(ClientHelloTest, ServerNameLengthAtTheCapAndOnePast) {
  std::string name;
  for (int i = 0; i < 3; ++i) name += std::string(63, 'a') + ".";
  name += std::string(kMaxNameLength - name.size() - 4, 'b') + ".com";
  ASSERT_EQ(name.size(), kMaxNameLength);
  EXPECT_EQ(decide(client_hello(name), name), "allow");
  EXPECT_EQ(decide(client_hello(name + "."), name), "deny:not-tls");
}

// Offsets inside the handshake message: type(1) length(3) version(2) random(32) session id.
TEST(ClientHelloTest, BodyFieldsOutsideTheirRulesAreNotTls) {
  const std::string message = message_for(std::string(kName));
  std::string bad = message;
  bad[4] = 3;
  bad[5] = 0;  // SSL 3.0
  EXPECT_EQ(decide(tls_records(bad)), "deny:not-tls");
  bad = message;
  bad[5] = 4;  // 0x0304 is never the legacy version (RFC 8446 §4.1.2)
  EXPECT_EQ(decide(tls_records(bad)), "deny:not-tls");
  bad = message;
  bad[38] = 33;  // session id longer than 32
  EXPECT_EQ(decide(tls_records(bad)), "deny:not-tls");
  bad = message;
  bad[3] = static_cast<char>(bad[3] - 1);  // body one byte shorter than its fields
  EXPECT_EQ(decide(tls_record(bad.substr(0, bad.size() - 1))), "deny:not-tls");
}

}  // namespace
}  // namespace policy
