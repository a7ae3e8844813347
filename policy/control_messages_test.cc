#include "policy/control_messages.h"

#include <gtest/gtest.h>

#include <string>

namespace policy {
namespace {

std::string network_error(std::string_view body) {
  const Result<NetworkPolicy> policy = parse_network_request(body);
  return policy ? std::string("(accepted)") : policy.error().message;
}

std::string grant_error(std::string_view body) {
  const Result<Grant> grant = parse_grant_request(body);
  return grant ? std::string("(accepted)") : grant.error().message;
}

std::string url_error(std::string_view text) {
  const Result<UpstreamUrl> url = parse_upstream_url(text);
  return url ? std::string("(accepted)") : url.error().message;
}

std::string allowlist_of(std::string_view domains_json) {
  return R"({"mode":"allowlist","domains":)" + std::string(domains_json) + "}";
}

std::string grant_body(std::string_view extra) {
  return R"({"id":"anthropic","upstream":"https://api.anthropic.com/v1")" + std::string(extra) +
         "}";
}

const std::string kNotDomainTail =
    "' is not a domain name. The allowlist holds exact names, no wildcards and no addresses.";

// ---- Body ------------------------------------------------------------------------------------

TEST(ControlMessagesTest, RefusesUnparseableBodyAsNotJson) {
  EXPECT_EQ(network_error(""), kMsgNotJson);
  EXPECT_EQ(network_error("{"), kMsgNotJson);
  EXPECT_EQ(network_error("mode=open"), kMsgNotJson);
  EXPECT_EQ(grant_error("{\"id\":\"a\",}"), kMsgNotJson);
}

TEST(ControlMessagesTest, RefusesDuplicateKeysAsNotJson) {
  EXPECT_EQ(network_error(R"({"mode":"allowlist","mode":"open"})"), kMsgNotJson);
}

TEST(ControlMessagesTest, RefusesArrayBodyAsNotAnObject) {
  EXPECT_EQ(network_error(R"([{"mode":"open"}])"), kMsgNotObject);
  EXPECT_EQ(grant_error("[]"), kMsgNotObject);
}

TEST(ControlMessagesTest, RefusesScalarBodiesAsNotAnObject) {
  for (std::string_view body : {"\"open\"", "1", "null", "true"}) {
    EXPECT_EQ(network_error(body), kMsgNotObject) << body;
  }
}

TEST(ControlMessagesTest, AcceptsBodyAtOneMebibyteAndRefusesOnePast) {
  std::string body = R"({"mode":"open"})";
  body.resize(kMaxControlBody, ' ');
  EXPECT_TRUE(parse_network_request(body).ok());
  body += ' ';
  EXPECT_EQ(network_error(body), kMsgNotJson);
  EXPECT_EQ(grant_error(body), kMsgNotJson);
}

TEST(ControlMessagesTest, RefusesNestingPastTheControlDepth) {
  const auto nested = [](std::size_t depth) {
    return R"({"mode":"open","x":)" + std::string(depth - 1, '[') + std::string(depth - 1, ']') +
           "}";
  };
  EXPECT_TRUE(parse_network_request(nested(kMaxControlDepth)).ok());
  EXPECT_EQ(network_error(nested(kMaxControlDepth + 1)), kMsgNotJson);
}

// ---- POST /network ---------------------------------------------------------------------------

TEST(ControlMessagesTest, AcceptsAllowlistAndNormalisesNames) {
  const Result<NetworkPolicy> policy =
      parse_network_request(allowlist_of(R"(["Example.COM.","api.example.com"," example.org "])"));
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->mode, Mode::kAllowlist);
  EXPECT_EQ(policy->domains, (std::set<std::string>{"api.example.com", "example.com",
                                                    "example.org"}));
}

TEST(ControlMessagesTest, CollapsesDuplicateDomains) {
  const Result<NetworkPolicy> policy =
      parse_network_request(allowlist_of(R"(["example.com","EXAMPLE.com","example.com."])"));
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->domains, (std::set<std::string>{"example.com"}));
}

TEST(ControlMessagesTest, AcceptsOpenModeWithoutDomains) {
  const Result<NetworkPolicy> policy = parse_network_request(R"({"mode":"open"})");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->mode, Mode::kOpen);
  EXPECT_TRUE(policy->domains.empty());
}

TEST(ControlMessagesTest, TreatsNonArrayDomainsAsEmpty) {
  for (std::string_view domains : {"\"example.com\"", "null", "{}", "3"}) {
    const Result<NetworkPolicy> policy = parse_network_request(allowlist_of(domains));
    ASSERT_TRUE(policy.ok()) << domains;
    EXPECT_TRUE(policy->domains.empty()) << domains;
  }
}

TEST(ControlMessagesTest, RefusesUnknownMode) {
  EXPECT_EQ(network_error(R"({"mode":"closed","domains":[]})"), kMsgBadMode);
  EXPECT_EQ(network_error(R"({"domains":[]})"), kMsgBadMode);
  EXPECT_EQ(network_error(R"({"mode":null})"), kMsgBadMode);
  EXPECT_EQ(network_error(R"({"mode":["open"]})"), kMsgBadMode);
  EXPECT_EQ(network_error(R"({"mode":"open "})"), kMsgBadMode);
  EXPECT_EQ(kMsgBadMode, "mode is \"allowlist\" or \"open\"");
}

TEST(ControlMessagesTest, RefusesWildcard) {
  EXPECT_EQ(network_error(allowlist_of(R"(["*.googleapis.com"])")),
            "'*.googleapis.com" + kNotDomainTail);
}

TEST(ControlMessagesTest, RefusesAddress) {
  EXPECT_EQ(network_error(allowlist_of(R"(["10.0.0.1"])")), "'10.0.0.1" + kNotDomainTail);
  EXPECT_EQ(network_error(allowlist_of(R"(["::1"])")), "'::1" + kNotDomainTail);
  EXPECT_EQ(network_error(allowlist_of(R"(["[2001:db8::1]"])")),
            "'[2001:db8::1]" + kNotDomainTail);
}

TEST(ControlMessagesTest, RefusesNumericLastLabel) {
  EXPECT_EQ(network_error(allowlist_of(R"(["1.1.1"])")), "'1.1.1" + kNotDomainTail);
}

TEST(ControlMessagesTest, RefusesHexLastLabel) {
  EXPECT_EQ(network_error(allowlist_of(R"(["a.com.0x2"])")), "'a.com.0x2" + kNotDomainTail);
}

TEST(ControlMessagesTest, RefusesSingleLabel) {
  EXPECT_EQ(network_error(allowlist_of(R"(["localhost"])")), "'localhost" + kNotDomainTail);
}

TEST(ControlMessagesTest, ShowsTheNormalisedNameInTheMessage) {
  EXPECT_EQ(network_error(allowlist_of(R"(["example.com","*.Example.COM."])")),
            "'*.example.com" + kNotDomainTail);
}

TEST(ControlMessagesTest, ShowsNonStringEntryAsEmpty) {
  for (std::string_view entry : {"5", "null", "{}", "[\"a.example\"]", "true"}) {
    EXPECT_EQ(network_error(allowlist_of("[" + std::string(entry) + "]")), "'" + kNotDomainTail)
        << entry;
  }
}

TEST(ControlMessagesTest, RefusesEmptyAndBlankEntries) {
  EXPECT_EQ(network_error(allowlist_of(R"([""])")), "'" + kNotDomainTail);
  EXPECT_EQ(network_error(allowlist_of(R"(["   "])")), "'" + kNotDomainTail);
}

TEST(ControlMessagesTest, RefusesUnicodeFullStop) {
  EXPECT_EQ(network_error(allowlist_of(R"(["auth.openai.com\u3002"])")),
            "'auth.openai.com\xe3\x80\x82" + kNotDomainTail);
}

TEST(ControlMessagesTest, AcceptsAlwaysRefusedNameInTheList) {
  // Listing it is allowed; the corridor still refuses it
  // (docs/reference-behaviour.md#control-validation).
  const Result<NetworkPolicy> policy = parse_network_request(allowlist_of(R"(["auth.openai.com"])"));
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->domains.count("auth.openai.com"), 1u);
}

std::string domain_list(std::size_t count) {
  std::string out = "[";
  for (std::size_t i = 0; i < count; ++i) {
    if (i != 0) out += ',';
    out += "\"d" + std::to_string(i) + ".example.com\"";
  }
  return out + "]";
}

TEST(ControlMessagesTest, AcceptsFiveHundredDomainsAndRefusesFiveHundredOne) {
  const Result<NetworkPolicy> policy = parse_network_request(allowlist_of(domain_list(500)));
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->domains.size(), 500u);
  EXPECT_EQ(network_error(allowlist_of(domain_list(501))), kMsgTooManyDomains);
  EXPECT_EQ(kMsgTooManyDomains, "at most 500 domains");
}

TEST(ControlMessagesTest, CountsDomainsBeforeJudgingThem) {
  std::string bad = "[";
  for (int i = 0; i < 501; ++i) bad += i == 0 ? "1" : ",1";
  EXPECT_EQ(network_error(allowlist_of(bad + "]")), kMsgTooManyDomains);
}

TEST(ControlMessagesTest, NetworkRequestJsonRoundTrips) {
  NetworkPolicy policy;
  policy.mode = Mode::kOpen;
  policy.domains = {"b.example.com", "a.example.com"};
  const std::string text = network_request_json(policy);
  EXPECT_EQ(text, R"({"domains":["a.example.com","b.example.com"],"mode":"open"})");
  const Result<NetworkPolicy> back = parse_network_request(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->mode, policy.mode);
  EXPECT_EQ(back->domains, policy.domains);
}

// ---- POST /grants ----------------------------------------------------------------------------

TEST(ControlMessagesTest, AcceptsKeyGrant) {
  Result<Grant> grant = parse_grant_request(
      grant_body(R"(,"header":"X-Api-Key","secret":"sk-ant-0123456789abcdef0123456789")"));
  ASSERT_TRUE(grant.ok()) << grant.error().message;
  EXPECT_EQ(grant->id, "anthropic");
  EXPECT_EQ(grant->header, "x-api-key");
  ASSERT_TRUE(grant->secret.has_value());
  EXPECT_EQ(grant->secret->reveal_for_upstream(), "sk-ant-0123456789abcdef0123456789");
  EXPECT_EQ(grant->upstream.to_string(), "https://api.anthropic.com/v1");
}

TEST(ControlMessagesTest, AcceptsOpenedDomainGrant) {
  const Result<Grant> grant =
      parse_grant_request(R"({"id":"npm","upstream":"https://registry.npmjs.org"})");
  ASSERT_TRUE(grant.ok()) << grant.error().message;
  EXPECT_FALSE(grant->header.has_value());
  EXPECT_FALSE(grant->secret.has_value());
  EXPECT_EQ(grant->upstream.path, "/");
}

TEST(ControlMessagesTest, IgnoresUnknownGrantKeys) {
  EXPECT_TRUE(parse_grant_request(grant_body(R"(,"note":"x")")).ok());
}

TEST(ControlMessagesTest, UnsafePrivateUpstreamIsAnExplicitBoolean) {
  EXPECT_FALSE(parse_grant_request(grant_body("")).value().unsafe_private_upstream) << "absent: false";
  EXPECT_TRUE(parse_grant_request(grant_body(R"(,"unsafe_private_upstream":true)")).value().unsafe_private_upstream);
  EXPECT_FALSE(parse_grant_request(grant_body(R"(,"unsafe_private_upstream":false)")).value().unsafe_private_upstream);
  for (std::string_view bad : {"\"true\"", "1", "null", "[]", "{}"}) {
    EXPECT_EQ(grant_error(grant_body(R"(,"unsafe_private_upstream":)" + std::string(bad))), kMsgBadUnsafePrivate)
        << bad;
  }
}

TEST(ControlMessagesTest, RefusesGrantHeadersTheWindowSetsOrStrips) {
  for (std::string_view name : {"host", "Content-Length", "transfer-encoding", "connection", "keep-alive", "te",
                                "trailer", "upgrade", "expect", "x-forwarded-for", "forwarded",
                                "x-http-method-override", "x-original-url"}) {
    EXPECT_EQ(grant_error(grant_body(R"(,"header":")" + std::string(name) + R"(","secret":"s")")),
              kMsgHeaderNotInjectable)
        << name;
  }
  EXPECT_TRUE(parse_grant_request(grant_body(R"(,"header":"x-goog-api-key","secret":"s")")).ok());
}

TEST(ControlMessagesTest, ASecretGoesOverPlainHttpOnlyToAnAddressLiteralMarkedPrivate) {
  const auto body = [](std::string_view upstream, std::string_view extra) {
    return R"({"id":"g","upstream":")" + std::string(upstream) + R"(","header":"x-api-key","secret":"sk")" +
           std::string(extra) + "}";
  };
  EXPECT_EQ(grant_error(body("http://api.example.com/v1", "")), kMsgSecretOverHttp);
  EXPECT_EQ(grant_error(body("http://api.example.com/v1", R"(,"unsafe_private_upstream":true)")), kMsgSecretOverHttp);
  EXPECT_EQ(grant_error(body("http://10.0.0.5:8000/v1", "")), kMsgSecretOverHttp);
  EXPECT_EQ(grant_error(body("http://[fd00::5]:8000/v1", "")), kMsgSecretOverHttp);
  EXPECT_TRUE(parse_grant_request(body("http://10.0.0.5:8000/v1", R"(,"unsafe_private_upstream":true)")).ok());
  EXPECT_TRUE(parse_grant_request(body("http://[fd00::5]:8000/v1", R"(,"unsafe_private_upstream":true)")).ok());
  EXPECT_TRUE(parse_grant_request(body("https://api.example.com/v1", "")).ok());
  // An opened grant carries no secret: plain http to a name stays allowed.
  EXPECT_TRUE(parse_grant_request(R"({"id":"npm","upstream":"http://registry.example.com/"})").ok());
}

TEST(ControlMessagesTest, RefusesIdThatClimbs) {
  EXPECT_EQ(grant_error(R"({"id":"../../etc","upstream":"https://a.example.com"})"),
            kMsgBadGrantId);
}

TEST(ControlMessagesTest, RefusesMissingOrNonStringId) {
  EXPECT_EQ(grant_error(R"({"upstream":"https://a.example.com"})"), kMsgBadGrantId);
  EXPECT_EQ(grant_error(R"({"id":7,"upstream":"https://a.example.com"})"), kMsgBadGrantId);
  EXPECT_EQ(grant_error(R"({"id":"","upstream":"https://a.example.com"})"), kMsgBadGrantId);
}

TEST(ControlMessagesTest, AcceptsIdAtSixtyFourAndRefusesSixtyFive) {
  const std::string at_limit(kMaxGrantIdLength, 'a');
  EXPECT_TRUE(is_grant_id(at_limit));
  EXPECT_FALSE(is_grant_id(at_limit + "a"));
  EXPECT_EQ(grant_error(R"({"id":")" + at_limit + R"(a","upstream":"https://a.example.com"})"),
            kMsgBadGrantId);
}

TEST(ControlMessagesTest, GrantIdCharacters) {
  EXPECT_TRUE(is_grant_id("open-registry_2.v1"));
  for (std::string_view bad : {"a/b", "a b", "a%2e", "a:b", "\xc3\xa9", "a\\b", "a?b"}) {
    EXPECT_FALSE(is_grant_id(bad)) << bad;
  }
}

TEST(ControlMessagesTest, RefusesHeaderWithoutSecret) {
  EXPECT_EQ(grant_error(grant_body(R"(,"header":"x-api-key")")), kMsgHeaderNeedsSecret);
  EXPECT_EQ(grant_error(grant_body(R"(,"header":"x-api-key","secret":null)")),
            kMsgHeaderNeedsSecret);
}

TEST(ControlMessagesTest, RefusesSecretWithoutHeader) {
  EXPECT_EQ(grant_error(grant_body(R"(,"secret":"sk-1")")), kMsgBadHeaderName);
  EXPECT_EQ(grant_error(grant_body(R"(,"header":null,"secret":"sk-1")")), kMsgBadHeaderName);
}

TEST(ControlMessagesTest, NullHeaderAndSecretStillMakeASecretGrant) {
  EXPECT_EQ(grant_error(grant_body(R"(,"header":null,"secret":null)")), kMsgBadHeaderName);
}

TEST(ControlMessagesTest, RefusesEmptySecret) {
  EXPECT_EQ(grant_error(grant_body(R"(,"header":"x-api-key","secret":"")")),
            kMsgHeaderNeedsSecret);
}

TEST(ControlMessagesTest, RefusesNonStringSecret) {
  EXPECT_EQ(grant_error(grant_body(R"(,"header":"x-api-key","secret":12345)")),
            kMsgHeaderNeedsSecret);
}

TEST(ControlMessagesTest, AcceptsSecretAtLimitAndRefusesOnePast) {
  const std::string at_limit(kMaxSecretLength, 's');
  const Result<Grant> grant =
      parse_grant_request(grant_body(R"(,"header":"authorization","secret":")" + at_limit + "\""));
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ(grant->secret->size(), kMaxSecretLength);
  EXPECT_EQ(grant_error(grant_body(R"(,"header":"authorization","secret":")" + at_limit + "s\"")),
            kMsgHeaderNeedsSecret);
}

TEST(ControlMessagesTest, RefusesSecretWithCrLfOrNul) {
  for (std::string_view escaped : {"\\r", "\\n", "\\u0000", "\\r\\nx-evil: 1"}) {
    EXPECT_EQ(grant_error(grant_body(R"(,"header":"x-api-key","secret":"sk)" +
                                     std::string(escaped) + "tail\"")),
              kMsgSecretBadBytes)
        << escaped;
  }
  EXPECT_EQ(kMsgSecretBadBytes, "a secret cannot hold CR, LF or NUL");
}

TEST(ControlMessagesTest, RefusesHeaderWithColonAndSpace) {
  EXPECT_EQ(grant_error(grant_body(R"(,"header":"a: b","secret":"sk-1")")), kMsgBadHeaderName);
}

TEST(ControlMessagesTest, RefusesBadHeaderNames) {
  for (std::string_view bad : {"", "x_api_key", "x-api-key\\r\\n", "x api", "\\u00e9"}) {
    EXPECT_EQ(grant_error(grant_body(R"(,"header":")" + std::string(bad) + R"(","secret":"s")")),
              kMsgBadHeaderName)
        << bad;
  }
}

TEST(ControlMessagesTest, AcceptsHeaderAtSixtyFourAndRefusesSixtyFive) {
  const std::string at_limit(kMaxHeaderNameLength, 'h');
  EXPECT_TRUE(parse_grant_request(grant_body(R"(,"header":")" + at_limit + R"(","secret":"s")"))
                  .ok());
  EXPECT_EQ(grant_error(grant_body(R"(,"header":")" + at_limit + R"(h","secret":"s")")),
            kMsgBadHeaderName);
}

TEST(ControlMessagesTest, RefusesUpstreamThatIsNotAUrl) {
  EXPECT_EQ(grant_error(R"({"id":"a","upstream":"not a url"})"), kMsgUpstreamNotUrl);
  EXPECT_EQ(grant_error(R"({"id":"a"})"), kMsgUpstreamNotUrl);
  EXPECT_EQ(grant_error(R"({"id":"a","upstream":42})"), kMsgUpstreamNotUrl);
}

TEST(ControlMessagesTest, RefusesFileUpstream) {
  EXPECT_EQ(grant_error(R"({"id":"a","upstream":"file:///etc/passwd"})"), kMsgUpstreamScheme);
}

TEST(ControlMessagesTest, ChecksIdBeforeHeaderBeforeUpstream) {
  EXPECT_EQ(grant_error(R"({"id":"a/b","header":"a b","upstream":"x"})"), kMsgBadGrantId);
  EXPECT_EQ(grant_error(R"({"id":"a","header":"a b","upstream":"x"})"), kMsgBadHeaderName);
}

// ---- Upstream URL ----------------------------------------------------------------------------

TEST(ControlMessagesTest, ParsesFullUpstreamUrl) {
  const Result<UpstreamUrl> url = parse_upstream_url("HTTPS://API.Example.COM:8443/v1?x=1");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "api.example.com");
  EXPECT_EQ(url->port, 8443);
  EXPECT_EQ(url->path, "/v1?x=1");
  EXPECT_EQ(url->to_string(), "https://api.example.com:8443/v1?x=1");
}

TEST(ControlMessagesTest, UpstreamDefaultsPortAndPath) {
  const Result<UpstreamUrl> https = parse_upstream_url("https://a.example.com");
  ASSERT_TRUE(https.ok());
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->path, "/");
  EXPECT_EQ(https->to_string(), "https://a.example.com/");
  const Result<UpstreamUrl> http = parse_upstream_url("http://a.example.com:80/x");
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->port, 80);
  EXPECT_EQ(http->to_string(), "http://a.example.com/x");
  EXPECT_EQ(parse_upstream_url("http://a.example.com?q=1")->path, "/?q=1");
}

TEST(ControlMessagesTest, UpstreamAcceptsSingleLabelAndAddresses) {
  EXPECT_EQ(parse_upstream_url("http://upstream:9000/v1")->to_string(), "http://upstream:9000/v1");
  EXPECT_EQ(parse_upstream_url("http://my_registry.lan/npm")->host, "my_registry.lan");
  EXPECT_EQ(parse_upstream_url("http://10.0.0.5/")->host, "10.0.0.5");
  const Result<UpstreamUrl> v6 = parse_upstream_url("http://[2001:DB8::1]:8080/x");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "2001:db8::1");
  EXPECT_EQ(v6->to_string(), "http://[2001:db8::1]:8080/x");
}

TEST(ControlMessagesTest, UpstreamPortAtLimitsAndOnePast) {
  EXPECT_EQ(parse_upstream_url("http://a.example:1/")->port, 1);
  EXPECT_EQ(parse_upstream_url("http://a.example:65535/")->port, 65535);
  for (std::string_view bad : {"http://a.example:0/", "http://a.example:65536/",
                               "http://a.example:/", "http://a.example:080/",
                               "http://a.example:+80/", "http://a.example:8o/",
                               "http://a.example:100000/", "http://[::1]:/", "http://[::1]x/"}) {
    EXPECT_EQ(url_error(bad), kMsgUpstreamNotUrl) << bad;
  }
}

TEST(ControlMessagesTest, UpstreamRefusesOtherSchemes) {
  for (std::string_view bad : {"ftp://a.example/", "javascript:alert(1)", "mailto:a@b.example",
                               "ws://a.example/", "httpx://a.example/", "file:///etc/passwd"}) {
    EXPECT_EQ(url_error(bad), kMsgUpstreamScheme) << bad;
  }
}

TEST(ControlMessagesTest, UpstreamRefusesWhatIsNotAUrl) {
  for (std::string_view bad : {
           "", "not a url", "//a.example/", "a.example", "1http://a.example/", "https:a.example",
           "https:/a.example", "https://", "https:///path", " https://a.example/",
           "https://a.example/ x", "https://a.\texample/", "https://a.example/\r\n",
           "https://caf\xc3\xa9.example/", "https://a.example\\@evil.example/",
           "https://a.example/#frag", "https://a.example#", "https://user:pass@a.example/",
           "https://a.example@evil.example/", "https://@a.example/", "https://[::1/",
           "https://[zz]/", "https://::1/", "https://[127.0.0.1]/", "https://a..example/",
           "https://.a.example/", "https://a.example./", "https://a!.example/",
           "https://a.example/%zz", "https://a.example/%4", "https://a.example/<script>",
           "https://a.example/\"q\"", "https://a.example/{x}", "https://a.example/a|b",
       }) {
    EXPECT_EQ(url_error(bad), kMsgUpstreamNotUrl) << bad;
  }
}

TEST(ControlMessagesTest, UpstreamRefusesNumericHostSpellings) {
  // A resolver may read these as addresses that no strict parser saw.
  for (std::string_view bad : {"http://2130706433/", "http://0x7f000001/", "http://127.1/",
                               "http://1.2.3/", "http://010.0.0.1/", "http://0x7f.0.0.1/",
                               "http://a.0X1F/"}) {
    EXPECT_EQ(url_error(bad), kMsgUpstreamNotUrl) << bad;
  }
  EXPECT_TRUE(parse_upstream_url("http://1e100.net/").ok());
  EXPECT_TRUE(parse_upstream_url("http://0x7f.example/").ok());
}

TEST(ControlMessagesTest, UpstreamAllowsAtSignAndEscapesInThePath) {
  const Result<UpstreamUrl> url = parse_upstream_url("https://registry.example/@scope%2fname");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->path, "/@scope%2fname");
}

TEST(ControlMessagesTest, UpstreamHostLabelAndNameAtLimits) {
  const std::string label63(63, 'a');
  EXPECT_TRUE(parse_upstream_url("https://" + label63 + ".example/").ok());
  EXPECT_FALSE(parse_upstream_url("https://" + label63 + "a.example/").ok());
  // 253 characters: 63 + 1 + 63 + 1 + 63 + 1 + 61.
  const std::string name253 = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  ASSERT_EQ(name253.size(), 253u);
  EXPECT_TRUE(parse_upstream_url("https://" + name253 + "/").ok());
  EXPECT_FALSE(parse_upstream_url("https://" + name253 + "b/").ok());
}

// ---- Answers ---------------------------------------------------------------------------------

TEST(ControlMessagesTest, AnswerTexts) {
  EXPECT_EQ(ok_json(), R"({"ok":true})");
  EXPECT_EQ(error_json(kMsgNotJson), R"({"error":"the body is not JSON"})");
  EXPECT_EQ(error_json(kMsgBadMode), R"({"error":"mode is \"allowlist\" or \"open\""})");
  EXPECT_EQ(error_json("'a\nb" + kNotDomainTail).substr(0, 17), R"({"error":"'a\nb' )");
}

TEST(ControlMessagesTest, FixedMessagesMatchTheReference) {
  EXPECT_EQ(kMsgNotObject, "the body is not an object");
  EXPECT_EQ(kMsgNoEndpoint, "no such control endpoint");
  EXPECT_EQ(kMsgControlFailed, "the control channel could not serve this request");
  EXPECT_EQ(kMsgBadGrantId, "a grant id is 1 to 64 letters, digits, dots, dashes or underscores");
  EXPECT_EQ(kMsgBadHeaderName, "a header name is 1 to 64 letters, digits or dashes");
  EXPECT_EQ(kMsgHeaderNeedsSecret, "a grant with a header needs a secret");
  EXPECT_EQ(kMsgUpstreamNotUrl, "the upstream of a grant is a URL");
  EXPECT_EQ(kMsgUpstreamScheme, "the upstream of a grant is http or https");
  EXPECT_EQ(not_a_domain_message("x"), "'x" + kNotDomainTail);
}

// ---- Secret (held by a grant) ----------------------------------------------------------------

TEST(ControlMessagesTest, GrantSecretMoveTransfersTheBytesAndEmptiesTheSource) {
  Secret source(std::string(100, 'k'));
  Secret moved(std::move(source));
  EXPECT_EQ(moved.reveal_for_upstream(), std::string(100, 'k'));
  EXPECT_EQ(source.size(), 0u);  // NOLINT(bugprone-use-after-move): the contract under test

  Secret short_source(std::string("abc"));
  Secret assigned(std::string("old"));
  assigned = std::move(short_source);
  EXPECT_EQ(assigned.reveal_for_upstream(), "abc");
  EXPECT_EQ(short_source.size(), 0u);  // NOLINT(bugprone-use-after-move)
}


TEST(ControlMessagesTest, BlockedRequestTakesAtMost64StrictRanges) {
  auto ok = parse_blocked_request(R"({"ranges":["203.0.113.7/32","2001:db8::/32"]})");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ(blocked_request_json(*ok), R"({"ranges":["203.0.113.7/32","2001:db8::/32"]})");
  EXPECT_TRUE(parse_blocked_request(R"({"ranges":[]})").ok());
  std::string at = R"({"ranges":[)";
  for (int i = 0; i < 64; ++i) at += std::string(i ? "," : "") + "\"203.0.113." + std::to_string(i) + "/32\"";
  EXPECT_TRUE(parse_blocked_request(at + "]}").ok());
  EXPECT_EQ(parse_blocked_request(at + R"(,"198.51.100.1/32"]})").error().message, kMsgBadRanges);
  for (std::string_view bad : {R"({"ranges":["10.0.0.1/8"]})", R"({"ranges":[7]})", R"({"ranges":"203.0.113.7/32"})",
                               R"({})"}) {
    auto r = parse_blocked_request(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, kMsgBadRanges) << bad;
  }
  EXPECT_EQ(parse_blocked_request("[").error().message, kMsgNotJson);
}

}  // namespace
}  // namespace policy
