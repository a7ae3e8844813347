// The hand-written DNS, address and digest code that replaces NSS and libcrypto in the static binary.
#include "escape-suite/net.h"

#include <gtest/gtest.h>

#include "escape-suite/probe.h"
#include "escape-suite/sha256.h"
#include "escape-suite/upstream_answer.h"
#include "escape-suite/window_probe.h"

namespace escape {
namespace {

// A place without DNS (Podman) names the gatekeeper in /etc/hosts, beside the host's own entries
// that Podman copies in; the suite reads the space's file like its libc would.
TEST(NetTest, ReadsNamesFromAHostsFile) {
  const std::string hosts =
      "10.89.0.2\tgatekeeper\n127.0.0.1\tlocalhost # gatekeeper\n# 10.0.0.9 gatekeeper\n"
      "192.0.2.2 host.containers.internal\n10.89.0.3  0123456789ab   Space-Name\r\n"
      "10.89.0.4 gatekeeperx\n";
  EXPECT_EQ(hosts_file_addresses(hosts, "gatekeeper"), std::vector<std::string>{"10.89.0.2"});
  EXPECT_EQ(hosts_file_addresses(hosts, "GATEKEEPER"), std::vector<std::string>{"10.89.0.2"});
  EXPECT_EQ(hosts_file_addresses(hosts, "space-name"), std::vector<std::string>{"10.89.0.3"});
  EXPECT_TRUE(hosts_file_addresses(hosts, "example.com").empty());
  EXPECT_TRUE(hosts_file_addresses("", "gatekeeper").empty());
  EXPECT_EQ(hosts_file_addresses("10.1.1.1 a\n10.1.1.2 b a\n", "a"),
            (std::vector<std::string>{"10.1.1.1", "10.1.1.2"}));
}

TEST(NetTest, ReadsNameserversFromResolvConf) {
  EXPECT_EQ(resolv_conf_nameservers("search x\nnameserver 10.255.255.53\n#nameserver 1.1.1.1\n"
                                    "nameserver\t127.0.0.11\noptions ndots:0\n"),
            (std::vector<std::string>{"10.255.255.53", "127.0.0.11"}));
  EXPECT_TRUE(resolv_conf_nameservers("").empty());
  EXPECT_TRUE(resolv_conf_nameservers("nameserver\n").empty());
}

TEST(NetTest, BuildsAStandardQuery) {
  EXPECT_EQ(dns_build_query(0x1234, "gatekeeper", kDnsTypeA),
            std::string("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
                        "\x0agatekeeper\x00\x00\x01\x00\x01", 28));
  EXPECT_EQ(dns_build_query(1, "", kDnsTypeA), "");
  EXPECT_EQ(dns_build_query(1, "a..b", kDnsTypeA), "");
  EXPECT_EQ(dns_build_query(1, std::string(64, 'a') + ".com", kDnsTypeA), "");
  EXPECT_NE(dns_build_query(1, std::string(63, 'a') + ".com", kDnsTypeA), "");
}

TEST(NetTest, ParsesAnAnswerWithACompressedName) {
  std::string reply = dns_build_query(0x1234, "gatekeeper", kDnsTypeA);
  reply[2] = '\x81';
  reply[3] = '\x80';
  reply[7] = 1;  // one answer
  reply += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x02\x58\x00\x04\x0a\x09\x00\x01", 16);
  DnsAnswer a;
  ASSERT_TRUE(dns_parse_reply(reply, 0x1234, a));
  EXPECT_EQ(a.rcode, 0);
  ASSERT_EQ(a.addresses.size(), 1u);
  EXPECT_EQ(a.addresses[0], "10.9.0.1");
}

TEST(NetTest, IgnoresRepliesToOtherQueriesAndTruncatedAnswers) {
  std::string reply = dns_build_query(0x1234, "gatekeeper", kDnsTypeA);
  reply[2] = '\x81';
  DnsAnswer a;
  EXPECT_FALSE(dns_parse_reply(reply, 0x4321, a));
  reply[7] = 1;
  reply += std::string("\xc0\x0c\x00\x01", 4);  // cut short
  DnsAnswer b;
  EXPECT_TRUE(dns_parse_reply(reply, 0x1234, b));
  EXPECT_TRUE(b.addresses.empty());
}

TEST(NetTest, SplitsHostAndPort) {
  std::string host;
  std::uint16_t port = 0;
  ASSERT_TRUE(split_host_port("[::ffff:a9fe:a9fe]:443", host, port));
  EXPECT_EQ(host, "::ffff:a9fe:a9fe");
  EXPECT_EQ(port, 443);
  ASSERT_TRUE(split_host_port("10.0.0.1", host, port));
  EXPECT_EQ(port, 0);
  EXPECT_FALSE(split_host_port("10.0.0.1:65536", host, port));
  EXPECT_FALSE(split_host_port("[::1", host, port));
  EXPECT_FALSE(parse_addr("gatekeeper", 1).has_value());
  EXPECT_TRUE(parse_addr("[fd00::1]", 1).has_value());
}

TEST(NetTest, Sha256MatchesFips180Vectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// The window's positive control counts only the runner's upstream saying it saw the key: a 502
// (the gatekeeper dialled and failed), the upstream's 401 (no or another key) or a 200 from
// anything else is no control.
TEST(NetTest, TheWindowControlIsOnlyAn200FromTheUpstreamThatSawTheKey) {
  auto reply = [](int status, std::string head) {
    HttpReply r;
    r.got = true;
    r.status = status;
    r.head = std::move(head);
    return r;
  };
  EXPECT_TRUE(window_control_answer_works(reply(200, "HTTP/1.1 200 OK\r\nX-Escape-Upstream: key-seen\r\n\r\n")));
  EXPECT_TRUE(window_control_answer_works(reply(200, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nkey-seen\n")));
  EXPECT_FALSE(window_control_answer_works(reply(200, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")));
  EXPECT_FALSE(window_control_answer_works(reply(502, "HTTP/1.1 502 Bad Gateway\r\n\r\n")));
  EXPECT_FALSE(window_control_answer_works(reply(401, "HTTP/1.1 401 Unauthorized\r\n\r\nkey-seen")));
  EXPECT_FALSE(window_control_answer_works(reply(404, "HTTP/1.1 404 Not Found\r\n\r\n")));
  HttpReply none;
  EXPECT_FALSE(window_control_answer_works(none));
}

// The runner's upstream answers 200 with the marker only to the grant's key in x-api-key.
TEST(NetTest, TheUpstreamAnswersTwoHundredOnlyToTheGrantsKey) {
  const std::string sha = sha256_hex("escfake-key");
  const std::string ok = upstream_answer("GET /v1/ HTTP/1.1\r\nHost: u\r\nX-Api-Key: escfake-key\r\n\r\n", sha);
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  HttpReply reply;
  reply.got = true;
  reply.status = 200;
  reply.head = ok;
  EXPECT_TRUE(window_control_answer_works(reply)) << ok;
  for (const char* other : {"GET /v1/ HTTP/1.1\r\nHost: u\r\n\r\n", "GET /v1/ HTTP/1.1\r\nx-api-key: escfake-kez\r\n\r\n",
                            "GET /v1/ HTTP/1.1\r\nAuthorization: escfake-key\r\n\r\n",
                            "GET /v1/ HTTP/1.1\r\n\r\nx-api-key: escfake-key\r\n\r\n", "x-api-key: escfake-key\r\n\r\n", ""}) {
    const std::string refused = upstream_answer(other, sha);
    EXPECT_EQ(refused.rfind("HTTP/1.1 401 ", 0), 0u) << other << " -> " << refused;
  }
  EXPECT_EQ(upstream_answer("GET / HTTP/1.1\r\nx-api-key: escfake-key\r\n\r\n", "").rfind("HTTP/1.1 401 ", 0), 0u);
}

}  // namespace
}  // namespace escape
