// The window's pure rules: route and key segment, window-key message, own-listener rule, request
// framing (smuggling shapes) and the header rules both ways.
#include "policy/window.h"

#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "policy/ranges.h"

namespace policy {
namespace {

const std::string kKey(64, 'a');

Grant make_grant(std::string_view upstream, std::optional<std::string> header, std::optional<std::string> secret) {
  Grant g;
  g.id = "g";
  g.upstream = parse_upstream_url(upstream).value();
  g.header = std::move(header);
  if (secret) g.secret.emplace(std::move(*secret));
  return g;
}

TEST(WindowRouteTest, SplitsKeyGrantAndRest) {
  const std::string target = "/k/" + kKey + "/model/anthropic/v1/messages?stream=true";
  const WindowRoute r = split_window_route(target);  // views into target
  EXPECT_TRUE(r.has_key_segment);
  EXPECT_EQ(r.key, kKey);
  ASSERT_TRUE(r.grant_id);
  EXPECT_EQ(*r.grant_id, "anthropic");
  EXPECT_EQ(r.rest, "/v1/messages?stream=true");
}

TEST(WindowRouteTest, GrantIdAtSixtyFourCharactersAndOnePast) {
  const std::string id64(64, 'x');
  EXPECT_TRUE(split_window_route("/k/" + kKey + "/model/" + id64 + "/a").grant_id);
  EXPECT_FALSE(split_window_route("/k/" + kKey + "/model/" + id64 + "x/a").grant_id);
}

TEST(WindowRouteTest, ShapesWithoutAGrant) {
  EXPECT_FALSE(split_window_route("/model/x/y").has_key_segment);
  EXPECT_FALSE(split_window_route("/k/" + kKey).has_key_segment);
  EXPECT_FALSE(split_window_route("/k/" + kKey + "/model/").grant_id);
  EXPECT_FALSE(split_window_route("/k/" + kKey + "/model/a%2f").grant_id);
  EXPECT_FALSE(split_window_route("/k/" + kKey + "/other/a").grant_id);
  EXPECT_TRUE(split_window_route("/k/" + kKey + "/model/a").grant_id);
  EXPECT_TRUE(split_window_route("/k/" + kKey + "/model/a?x").grant_id);
}

TEST(WindowKeyTest, SixtyFourHexDigitsOnly) {
  auto ok = parse_window_key_request(R"({"key":")" + std::string(64, 'A') + R"("})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->reveal_for_upstream(), std::string(64, 'a'));
  EXPECT_FALSE(parse_window_key_request(R"({"key":")" + std::string(63, 'a') + R"("})"));
  EXPECT_FALSE(parse_window_key_request(R"({"key":")" + std::string(65, 'a') + R"("})"));
  EXPECT_FALSE(parse_window_key_request(R"({"key":")" + std::string(63, 'a') + R"(g"})"));
  EXPECT_EQ(parse_window_key_request(R"({"key":1})").error().message, kMsgBadWindowKey);
  EXPECT_EQ(parse_window_key_request("[]").error().message, kMsgNotObject);
  EXPECT_EQ(parse_window_key_request("{").error().message, kMsgNotJson);
}

TEST(WindowTargetTest, UpstreamPathWithoutTrailingSlashThenRest) {
  EXPECT_EQ(upstream_target(parse_upstream_url("http://up:9000/v1").value(), "/messages?stream=true"),
            "/v1/messages?stream=true");
  EXPECT_EQ(upstream_target(parse_upstream_url("https://r.example/npm/").value(), "/-/package/left-pad"),
            "/npm/-/package/left-pad");
  EXPECT_EQ(upstream_target(parse_upstream_url("https://r.example/").value(), ""), "/");
  EXPECT_EQ(upstream_target(parse_upstream_url("https://r.example/").value(), "?q=1"), "/?q=1");
  EXPECT_EQ(upstream_authority(parse_upstream_url("https://r.example:8443/").value()), "r.example:8443");
  EXPECT_EQ(upstream_authority(parse_upstream_url("https://r.example:443/").value()), "r.example");
  EXPECT_EQ(upstream_authority(parse_upstream_url("http://[::1]:81/").value()), "[::1]:81");
}

TEST(WindowOwnListenerTest, LoopbackOrOwnAddressOnOwnPortIsRefused) {
  const UpstreamUrl up = parse_upstream_url("http://loop.test:8080/").value();
  const std::array<Address, 1> own = {parse_answer("10.0.0.2").value()};
  const std::array<std::uint16_t, 3> ports = {3128, 8080, 9099};
  const OwnListeners listeners{own, ports};
  for (bool unsafe : {false, true}) {
    for (const char* a : {"127.0.0.1", "127.255.255.254", "0.0.0.0", "::1", "::", "::ffff:127.0.0.1", "10.0.0.2"}) {
      const auto d = decide_window_answers(up, unsafe, std::array{parse_answer(a).value()}, listeners);
      EXPECT_EQ(d.decision.text(), "deny:own-listener") << a;
    }
  }
  for (const char* a : {"93.184.215.14", "128.0.0.1", "2606:4700::1"}) {
    const auto d = decide_window_answers(up, false, std::array{parse_answer(a).value()}, listeners);
    EXPECT_EQ(d.decision.text(), "allow") << a;
  }
  // The gatekeeper's own host on another port is not an upstream either, whatever the host said.
  const UpstreamUrl other_port = parse_upstream_url("http://loop.test:8081/").value();
  for (const char* a : {"127.0.0.1", "10.0.0.2", "::1"}) {
    EXPECT_EQ(decide_window_answers(other_port, true, std::array{parse_answer(a).value()}, listeners).decision.text(),
              "deny:blocked-address")
        << a;
  }
  EXPECT_EQ(decide_window_answers(up, false, std::span<const Address>(), listeners).decision.text(),
            "deny:unresolved:no-answer");
}

TEST(WindowOwnListenerTest, ChoosesTheFirstIpv4Answer) {
  const UpstreamUrl up = parse_upstream_url("https://a.example.com/").value();
  const std::array<Address, 3> answers = {parse_answer("2606:4700::1").value(), parse_answer("93.184.215.14").value(),
                                          parse_answer("93.184.215.15").value()};
  const auto d = decide_window_answers(up, false, answers, OwnListeners{});
  ASSERT_TRUE(d.endpoint);
  EXPECT_EQ(d.endpoint->address().to_string(), "93.184.215.14");
  EXPECT_EQ(d.endpoint->port(), 443);
}

TEST(WindowAnswersTest, OperatorBlockedRangeRefusesEvenWithTheHostsWordOrALiteral) {
  // serve --block / POST /blocked: the corridor refuses these answers; the window does too, and
  // neither unsafe_private_upstream nor an address literal lifts it.
  const std::array<Range, 1> blocked = {parse_operator_range("203.0.113.0/24").value()};
  const auto word = [&](const char* url, bool unsafe, const char* answer) {
    return decide_window_answers(parse_upstream_url(url).value(), unsafe,
                                 std::array{parse_answer(answer).value()}, OwnListeners{}, blocked)
        .decision.text();
  };
  for (bool unsafe : {false, true}) {
    EXPECT_EQ(word("https://model.example/", unsafe, "203.0.113.0"),
              "deny:blocked-address");  // first
    EXPECT_EQ(word("https://model.example/", unsafe, "203.0.113.255"),
              "deny:blocked-address");                                          // last
    EXPECT_EQ(word("https://model.example/", unsafe, "203.0.114.0"), "allow");  // just outside
    EXPECT_EQ(word("https://model.example/", unsafe, "203.0.112.255"), "allow");
  }
  EXPECT_EQ(word("http://203.0.113.7:8080/", true, "203.0.113.7"), "deny:blocked-address");
  // One blocked answer among allowed ones refuses the name.
  const std::array<Address, 2> mixed = {parse_answer("93.184.215.14").value(),
                                        parse_answer("203.0.113.9").value()};
  EXPECT_EQ(decide_window_answers(parse_upstream_url("https://m.example/").value(), false, mixed,
                                  OwnListeners{}, blocked)
                .decision.text(),
            "deny:blocked-address");
}

std::string window_word(const char* url, bool unsafe, std::initializer_list<const char*> answers) {
  std::vector<Address> parsed;
  for (const char* a : answers) parsed.push_back(parse_answer(a).value());
  return decide_window_answers(parse_upstream_url(url).value(), unsafe, parsed, OwnListeners{}).decision.text();
}

TEST(WindowAnswersTest, EveryAnswerOfANamedUpstreamIsClassifiedLikeTheCorridor) {
  // A grant to a name whose DNS the attacker controls, or that lapsed, must not point the window
  // at the metadata service, the LAN or the Docker host.
  for (const char* a : {"169.254.169.254", "10.0.0.1", "172.17.0.1", "192.168.1.1", "100.64.0.1", "fd00::1",
                        "fe80::1", "169.254.1.1", "224.0.0.1", "::ffff:10.0.0.1", "198.18.0.1", "2001:db8::1",
                        "240.0.0.1", "64:ff9b::a9fe:a9fe"}) {
    EXPECT_EQ(window_word("https://api.example.com/", false, {a}), "deny:blocked-address") << a;
  }
  // One inside answer among public ones refuses the name, whichever is dialled.
  EXPECT_EQ(window_word("https://api.example.com/", false, {"93.184.215.14", "10.0.0.1"}), "deny:blocked-address");
  EXPECT_EQ(window_word("https://api.example.com/", false, {"2606:4700::1", "93.184.215.14"}), "allow");
}

TEST(WindowAnswersTest, PrivateNetworksNeedTheHostsWordAtTheirEdges) {
  const char* url = "http://ollama.lan.example.com:11434/";
  for (const char* a : {"10.0.0.0", "10.255.255.255", "172.16.0.0", "172.31.255.255", "192.168.0.0",
                        "192.168.255.255", "100.64.0.0", "100.127.255.255", "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}) {
    EXPECT_EQ(window_word(url, false, {a}), "deny:blocked-address") << a;
    EXPECT_EQ(window_word(url, true, {a}), "allow") << a;
  }
  // Just outside each private range: public, allowed either way.
  for (const char* a : {"9.255.255.255", "11.0.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255",
                        "192.169.0.0", "100.63.255.255", "100.128.0.0"}) {
    EXPECT_EQ(window_word(url, false, {a}), "allow") << a;
  }
}

TEST(WindowAnswersTest, CloudEndpointsAndOtherRowsStayRefusedWithTheHostsWord) {
  for (const char* a : {"169.254.169.254", "169.254.170.2", "169.254.170.23", "168.63.129.16", "100.100.100.200",
                        "192.0.0.192", "fd00:ec2::254", "fd00:ec2::23", "fd20:ce::254", "169.254.1.1", "fe80::1",
                        "::ffff:10.0.0.1", "224.0.0.1", "255.255.255.255", "192.0.2.1"}) {
    EXPECT_EQ(window_word("http://inside.example.com/", true, {a}), "deny:blocked-address") << a;
  }
  // Just outside the Alibaba /32 in the CGNAT range: a private network again.
  EXPECT_EQ(window_word("http://inside.example.com/", true, {"100.100.100.201"}), "allow");
}

TEST(WindowAnswersTest, AnAddressLiteralMayBePrivateButNeverACloudEndpoint) {
  EXPECT_EQ(window_word("http://10.0.0.5:8000/", false, {"10.0.0.5"}), "allow");
  EXPECT_EQ(window_word("http://[fd00::5]:8000/", false, {"fd00::5"}), "allow");
  EXPECT_EQ(window_word("http://169.254.169.254/", false, {"169.254.169.254"}), "deny:blocked-address");
  EXPECT_EQ(window_word("http://169.254.169.254/", true, {"169.254.169.254"}), "deny:blocked-address");
  EXPECT_EQ(window_word("http://[fd00:ec2::254]/", false, {"fd00:ec2::254"}), "deny:blocked-address");
  EXPECT_EQ(window_word("http://127.0.0.1:9000/", false, {"127.0.0.1"}), "deny:blocked-address");
  EXPECT_EQ(window_word("http://169.254.1.1/", false, {"169.254.1.1"}), "deny:blocked-address");
}

TEST(WindowFramingTest, SmugglingShapesAreRefused) {
  using H = std::vector<Header>;
  EXPECT_FALSE(check_request_framing(H{{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}}, false).ok);
  EXPECT_FALSE(check_request_framing(H{{"Content-Length", "5"}, {"content-length", "6"}}, false).ok);
  EXPECT_FALSE(check_request_framing(H{{"Content-Length", "5"}, {"content-length", "5"}}, false).ok);
  EXPECT_FALSE(check_request_framing(H{{"Transfer-Encoding", "chunked, gzip"}}, false).ok);
  EXPECT_FALSE(check_request_framing(H{{"Transfer-Encoding", "gzip, chunked"}}, false).ok);
  EXPECT_FALSE(check_request_framing(H{{"Transfer-Encoding", "chunked"}}, true).ok);
  EXPECT_FALSE(check_request_framing(H{{"Content-Length", "+5"}}, false).ok);
  EXPECT_FALSE(check_request_framing(H{{"Content-Length", "1234567890123456"}}, false).ok);
  const auto chunked = check_request_framing(H{{"Transfer-Encoding", "Chunked"}}, false);
  EXPECT_TRUE(chunked.ok);
  EXPECT_EQ(chunked.framing, BodyFraming::kChunked);
  const auto length = check_request_framing(H{{"Content-Length", "123456789012345"}}, false);
  EXPECT_TRUE(length.ok);
  EXPECT_EQ(length.length, 123456789012345u);
  EXPECT_EQ(check_request_framing(H{}, false).framing, BodyFraming::kNone);
}

// Found by fuzz_window_request: llhttp 8.1 strict takes ":Authorization: x" as a field with an
// empty name, which the window then wrote upstream as ": Authorization: x".
TEST(WindowFramingTest, FieldsThatAreNotTokensAreRefused) {
  using H = std::vector<Header>;
  for (const std::string& name : std::vector<std::string>{"", " X", "X Y", "X:", "a\"b", "x(y)", "\x7f", "\xc3\xa9", std::string("a\0b", 3)}) {
    EXPECT_FALSE(check_request_framing(H{{"Host", "g"}, {name, "v"}}, false).ok) << name;
  }
  for (const std::string& value : std::vector<std::string>{"a\rb", "a\nb", std::string("a\0b", 3)}) {
    EXPECT_FALSE(check_request_framing(H{{"X-Value", value}}, false).ok);
  }
  EXPECT_TRUE(check_request_framing(H{{"X-Ok_1.2!#$%&'*+^`|~", "any value, even \xff"}}, false).ok);
  EXPECT_TRUE(is_field_name("x-api-key"));
  EXPECT_FALSE(is_field_name(""));
}

TEST(WindowHeadersTest, MalformedFieldsAreNeverWrittenEitherWay) {
  const Grant g = make_grant("https://api.example/", "authorization", "S");
  const std::vector<Header> in = {{"", "Authorization: Bearer fake"}, {"X Y", "1"}, {"X-Split", "a\r\nInjected: 1"},
                                  {"Accept", "*/*"}};
  EXPECT_EQ(upstream_request_headers(in, g, BodyFraming::kNone, 0),
            "Host: api.example\r\nAccept: */*\r\nauthorization: Bearer S\r\n");
  EXPECT_EQ(client_response_headers(in), "Accept: */*\r\n");
}

TEST(WindowHeadersTest, CredentialsHopByHopAndGrantHeaderAreRemovedAndTheSecretAdded) {
  const Grant g = make_grant("https://api.example:8443/v1", "x-api-key", "SECRET");
  const std::vector<Header> in = {
      {"Authorization", "Bearer fake"}, {"X-Api-Key", "fake"}, {"Cookie", "a=b"},
      {"Proxy-Authorization", "x"},     {"Connection", "keep-alive, X-Drop"}, {"X-Drop", "1"},
      {"Keep-Alive", "5"},              {"TE", "trailers"}, {"Trailer", "x"},
      {"Upgrade", "websocket"},         {"Proxy-Connection", "x"}, {"Host", "gatekeeper:8080"},
      {"Content-Length", "3"},          {"Expect", "100-continue"}, {"X-Keep", "yes"},
      {"x-goog-api-key", "other"}, {"api-key", "azure"}};
  const std::string out = upstream_request_headers(in, g, BodyFraming::kLength, 3);
  // x-goog-api-key (Gemini) and api-key (Azure OpenAI) are credentials too (policy/header_rules.h).
  EXPECT_EQ(out, "Host: api.example:8443\r\nX-Keep: yes\r\nContent-Length: 3\r\n"
                 "x-api-key: SECRET\r\n");
}

TEST(WindowHeadersTest, BearerGrantAndOpenedDomain) {
  const Grant bearer = make_grant("https://api.example/", "authorization", "S");
  EXPECT_EQ(upstream_request_headers(std::vector<Header>{{"authorization", "Bearer fake"}}, bearer,
                                     BodyFraming::kChunked, 0),
            "Host: api.example\r\nTransfer-Encoding: chunked\r\nauthorization: Bearer S\r\n");
  const Grant open = make_grant("http://registry.example/", std::nullopt, std::nullopt);
  EXPECT_EQ(upstream_request_headers(std::vector<Header>{{"x-api-key", "k"}, {"Accept", "*/*"}}, open,
                                     BodyFraming::kNone, 0),
            "Host: registry.example\r\nAccept: */*\r\n");
}

TEST(WindowHeadersTest, ResponseLosesHopByHopAndFraming) {
  const std::vector<Header> in = {{"Content-Type", "text/event-stream"}, {"Connection", "close, X-Hop"},
                                  {"X-Hop", "1"}, {"Transfer-Encoding", "chunked"}, {"Keep-Alive", "t"},
                                  {"Set-Cookie", "a=b"}, {"Content-Length", "4"}};
  EXPECT_EQ(client_response_headers(in), "Content-Type: text/event-stream\r\nSet-Cookie: a=b\r\n");
}

}  // namespace
}  // namespace policy
