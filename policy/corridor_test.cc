// The corridor decision: every rule of docs/reference-behaviour.md#corridor-order-of-checks, in
// order.
#include "policy/corridor.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "policy/name.h"
#include "policy/ranges.h"
#include "policy/ranges_probes_test.h"

namespace policy {
namespace {

using namespace std::string_literals;

// Only the decision functions make these (docs/decisions.md#dial-only-what-was-approved).
static_assert(!std::is_default_constructible_v<ApprovedEndpoint>);
static_assert(!std::is_constructible_v<ApprovedEndpoint, Address, std::uint16_t, std::string>);
static_assert(!std::is_default_constructible_v<PendingResolution>);
static_assert(!std::is_constructible_v<PendingResolution, std::string, std::uint16_t>);

constexpr std::string_view kPublicV4 = "93.184.215.14";
constexpr std::string_view kOtherPublicV4 = "104.18.41.241";
constexpr std::string_view kPublicV6 = "2606:4700::6812:29f1";

Address addr(std::string_view text) {
  std::optional<Address> address = parse_answer(text);
  if (!address) ADD_FAILURE() << "test address does not parse: " << text;
  return address.value_or(Address::v4(0));
}

std::vector<Address> addrs(std::initializer_list<std::string_view> texts) {
  std::vector<Address> out;
  for (std::string_view text : texts) out.push_back(addr(text));
  return out;
}

NetworkPolicy open_mode() {
  NetworkPolicy policy;
  policy.mode = Mode::kOpen;
  return policy;
}

NetworkPolicy allowlist(std::initializer_list<std::string> names) {
  NetworkPolicy policy;
  policy.mode = Mode::kAllowlist;
  policy.domains = names;
  return policy;
}

// The word the corridor journals for `target` when DNS answers `answers`.
std::string word(std::string_view target, const NetworkPolicy& policy,
                 std::initializer_list<std::string_view> answers = {kPublicV4},
                 std::initializer_list<std::string_view> own = {}) {
  TargetDecision decision = decide_target(target, policy);
  if (!decision.pending) return decision.decision.text();
  EXPECT_EQ(decision.decision.word(), Word::kDenyUndecided) << target;
  return decide_answers(*decision.pending, addrs(answers), addrs(own)).decision.text();
}

// The endpoint chosen for a public name answered with `answers`, as text.
std::string chosen(std::initializer_list<std::string_view> answers) {
  TargetDecision target = decide_target("example.com:443", open_mode());
  if (!target.pending) return "(refused before DNS)";
  AnswerDecision answer = decide_answers(*target.pending, addrs(answers), {});
  if (!answer.endpoint) return answer.decision.text();
  return answer.endpoint->address().to_string();
}

TEST(CorridorTest, SplitsTargetAtTheLastColon) {
  std::optional<AuthorityTarget> target = split_target("example.com:443");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->host, "example.com");
  EXPECT_EQ(target->port, 443);
  target = split_target("a:b:8443");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->host, "a:b");
  EXPECT_EQ(target->port, 8443);
}

TEST(CorridorTest, KeepsBracketsAndCaseOnTheSplitHost) {
  std::optional<AuthorityTarget> target = split_target("[::1]:443");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->host, "[::1]");
  target = split_target("Example.COM.:443");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->host, "Example.COM.");
}

TEST(CorridorTest, ReadsPortAsStrictDecimalAtBothLimits) {
  EXPECT_EQ(split_target("example.com:1")->port, 1);
  EXPECT_EQ(split_target("example.com:65535")->port, 65535);
  for (std::string_view target :
       {"example.com:0", "example.com:65536", "example.com:99999", "example.com:100000",
        "example.com:0443", "example.com:00443", "example.com:+443", "example.com:-443",
        "example.com:0x1bb", "example.com:443.0", "example.com:4.43e2", "example.com:",
        "example.com: 443", "example.com:443 ", "example.com:443a", "example.com:1e3"}) {
    EXPECT_FALSE(split_target(target).has_value()) << target;
  }
}

TEST(CorridorTest, SplitRefusesMissingColonOrEmptyHost) {
  EXPECT_FALSE(split_target("example.com").has_value());
  EXPECT_FALSE(split_target(":443").has_value());
  EXPECT_FALSE(split_target("").has_value());
  EXPECT_FALSE(split_target(":").has_value());
}

TEST(CorridorTest, RefusesMalformedTargetWithEmptySubject) {
  TargetDecision decision = decide_target(":443", open_mode());
  EXPECT_EQ(decision.decision.text(), "deny:malformed");
  EXPECT_EQ(decision.subject.host, "");
  EXPECT_EQ(decision.subject.port, 0);
  EXPECT_FALSE(decision.pending.has_value());
  EXPECT_EQ(word("example.com:0443", open_mode()), "deny:malformed");
  EXPECT_EQ(word("example.com", open_mode()), "deny:malformed");
}

TEST(CorridorTest, RefusesAlwaysRefusedNameBeforeThePortRule) {
  TargetDecision decision = decide_target("auth.openai.com:80", open_mode());
  EXPECT_EQ(decision.decision.text(), "deny:always-refused");
  EXPECT_EQ(decision.subject.host, "auth.openai.com");
  EXPECT_EQ(decision.subject.port, 80);
  EXPECT_EQ(word("auth.openai.com:443", open_mode()), "deny:always-refused");
  EXPECT_EQ(word("auth.openai.com:8443", allowlist({})), "deny:always-refused");
}

TEST(CorridorTest, RefusesAlwaysRefusedNameEvenWhenListed) {
  EXPECT_EQ(word("auth.openai.com:443", allowlist({"auth.openai.com"})), "deny:always-refused");
}

TEST(CorridorTest, ComparesAlwaysRefusedNamesAfterNormalisationAndExactly) {
  EXPECT_EQ(word("AUTH.OpenAI.com.:443", open_mode()), "deny:always-refused");
  EXPECT_EQ(word("sub.auth.openai.com:443", open_mode()), "allow");
  EXPECT_EQ(word("openai.com:443", open_mode()), "allow");
  EXPECT_EQ(word("auth.openai.com..:443", open_mode()), "deny:not-a-name");
}

TEST(CorridorTest, AlwaysRefusedListHoldsOnlyNames) {
  ASSERT_FALSE(always_refused_names().empty());
  EXPECT_EQ(always_refused_names()[0], "auth.openai.com");
  for (std::string_view name : always_refused_names()) EXPECT_TRUE(is_name(name)) << name;
}

// docs/reference-behaviour.md#name-predicate: the 30 refused forms, for ports 443/80/8443, in both
// modes.
TEST(CorridorTest, RefusesTheReferenceNotANameFormsOnEveryPortInBothModes) {
  const std::vector<std::string> forms = {
      "104.18.41.241", "203.0.113.7", "10.0.0.1", "127.0.0.1", "::ffff:104.18.41.241",
      "::ffff:6812:29f1", "2606:4700::6812:29f1", "64:ff9b::6812:29f1", "2002:6812:29f1::1",
      "1746020849", "16843009", "4294967295", "0x01010101", "0xc0a80001", "1.1.257",
      "1.16843009", "0x1.0x1.0x1.0x1", "0177.0.0.1", "0.0x0.0", "192.168.257", "localhost-",
      "auth.openai.com\u3002", "auth.openai\uff0ecom", "auth\uff61openai.com", ".example.com",
      "exam ple.com", "example..com", "exa_mple.com", "-example.com"};
  ASSERT_EQ(forms.size(), 29u);  // the 30th, '', is malformed before the name rule
  for (const NetworkPolicy& policy : {open_mode(), allowlist({"example.com"})}) {
    for (const std::string& form : forms) {
      EXPECT_FALSE(is_name(normalise_name(form))) << form;
      for (std::string_view port : {"443", "80", "8443"}) {
        EXPECT_EQ(word(form + ":" + std::string(port), policy), "deny:not-a-name") << form;
      }
    }
    EXPECT_EQ(word(":443", policy), "deny:malformed");
  }
}

TEST(CorridorTest, AllowsTheReferenceNameExamples) {
  for (std::string_view name : {"example.com", "anything.example.org", "sub.domain.example.co.uk",
                                "a.io", "xn--80ak6aa92e.com", "registry-1.docker.io",
                                "api.anthropic.com", "1.1.1.1.example.com", "v2.example.com",
                                "EXAMPLE.com."}) {
    EXPECT_EQ(word(std::string(name) + ":443", open_mode()), "allow") << name;
  }
}

TEST(CorridorTest, JournalsNotANameWithTheHostAsSent) {
  TargetDecision decision = decide_target("[::1]:443", open_mode());
  EXPECT_EQ(decision.decision.text(), "deny:not-a-name");
  EXPECT_EQ(decision.subject.host, "[::1]");
  EXPECT_EQ(decision.subject.port, 443);
  EXPECT_EQ(decide_target("Exam ple.COM:443", open_mode()).subject.host, "Exam ple.COM");
  EXPECT_EQ(word("::1:443", open_mode()), "deny:not-a-name");
}

TEST(CorridorTest, RefusesEveryPortButFourFourThreeAfterTheNameRule) {
  TargetDecision decision = decide_target("Example.COM.:80", open_mode());
  EXPECT_EQ(decision.decision.text(), "deny:port");
  EXPECT_EQ(decision.subject.host, "example.com");
  EXPECT_EQ(decision.subject.port, 80);
  EXPECT_EQ(word("example.com:8443", open_mode()), "deny:port");
  EXPECT_EQ(word("example.com:1", allowlist({"example.com"})), "deny:port");
  EXPECT_EQ(word("example.com:65535", open_mode()), "deny:port");
  EXPECT_EQ(word("example.com:442", open_mode()), "deny:port");
  EXPECT_EQ(word("example.com:444", open_mode()), "deny:port");
  EXPECT_EQ(word("127.0.0.1:80", open_mode()), "deny:not-a-name");
}

TEST(CorridorTest, AllowlistMatchesNormalisedNamesExactly) {
  NetworkPolicy policy = allowlist({"example.com"});
  EXPECT_EQ(word("example.com:443", policy), "allow");
  EXPECT_EQ(word("EXAMPLE.COM.:443", policy), "allow");
  for (std::string_view target : {"sub.example.com:443", "notexample.com:443",
                                  "example.com.evil.net:443", "example.co:443",
                                  "www.example.com:443"}) {
    EXPECT_EQ(word(target, policy), "deny:not-on-allowlist") << target;
  }
}

TEST(CorridorTest, DefaultPolicyAllowsNothing) {
  NetworkPolicy policy;
  EXPECT_EQ(policy.mode, Mode::kAllowlist);
  EXPECT_EQ(word("example.com:443", policy), "deny:not-on-allowlist");
}

TEST(CorridorTest, OpenModeSkipsTheAllowlist) {
  EXPECT_EQ(word("anything.example.net:443", open_mode()), "allow");
}

TEST(CorridorTest, PendingResolutionCarriesTheNormalisedNameAndPort) {
  TargetDecision decision =
      decide_target("API.Anthropic.com.:443", allowlist({"api.anthropic.com"}));
  ASSERT_TRUE(decision.pending.has_value());
  EXPECT_EQ(decision.decision.word(), Word::kDenyUndecided);
  EXPECT_FALSE(decision.decision.allowed());
  EXPECT_EQ(decision.pending->name(), "api.anthropic.com");
  EXPECT_EQ(decision.pending->port(), 443);
  EXPECT_EQ(decision.subject.host, "api.anthropic.com");
}

TEST(CorridorTest, ZeroValueDecisionsDeny) {
  EXPECT_EQ(TargetDecision{}.decision.text(), "deny:undecided");
  EXPECT_FALSE(AnswerDecision{}.decision.allowed());
  EXPECT_FALSE(AnswerDecision{}.endpoint.has_value());
}

TEST(CorridorTest, ModeHasStableText) {
  EXPECT_EQ(mode_text(Mode::kAllowlist), "allowlist");
  EXPECT_EQ(mode_text(Mode::kOpen), "open");
  EXPECT_EQ(mode_from_text("allowlist"), Mode::kAllowlist);
  EXPECT_EQ(mode_from_text("open"), Mode::kOpen);
  EXPECT_FALSE(mode_from_text("Open").has_value());
  EXPECT_FALSE(mode_from_text("").has_value());
  EXPECT_FALSE(mode_from_text("open ").has_value());
}

TEST(CorridorTest, RefusesNameWithoutAnswers) {
  TargetDecision target = decide_target("example.com:443", open_mode());
  ASSERT_TRUE(target.pending.has_value());
  AnswerDecision answer = decide_answers(*target.pending, {}, {});
  EXPECT_EQ(answer.decision.text(), "deny:unresolved:no-answer");
  EXPECT_FALSE(answer.endpoint.has_value());
  EXPECT_EQ(answer.subject.host, "example.com");
  EXPECT_EQ(answer.subject.port, 443);
}

TEST(CorridorTest, RefusesNameThatResolvesToLoopback) {
  EXPECT_EQ(word("example.com:443", open_mode(), {"127.0.0.1"}), "deny:blocked-address");
  EXPECT_EQ(word("loopback.example.net:443", open_mode(), {"::1"}), "deny:blocked-address");
  // A special-use name never gets as far as an answer (policy/special_names.h).
  EXPECT_EQ(word("foo.localhost:443", open_mode(), {"::1"}), "deny:special-use-name");
}

TEST(CorridorTest, RefusesNameThatResolvesToMetadataEvenWhenListed) {
  EXPECT_EQ(word("metadata.example.net:443", allowlist({"metadata.example.net"}), {"169.254.169.254"}),
            "deny:blocked-address");
  EXPECT_EQ(word("blocked-by-address.example.net:443", allowlist({"blocked-by-address.example.net"}),
                 {"172.18.0.2"}),
            "deny:blocked-address");
  EXPECT_EQ(word("docker-host.example.net:443", open_mode(), {"192.168.65.254"}), "deny:blocked-address");
  // The cloud's and Docker's own names are refused by name first, listed or not.
  EXPECT_EQ(word("metadata.google.internal:443", allowlist({"metadata.google.internal"}), {"169.254.169.254"}),
            "deny:special-use-name");
  EXPECT_EQ(word("host.docker.internal:443", open_mode(), {"192.168.65.254"}), "deny:special-use-name");
}

TEST(CorridorTest, RefusesWholeNameWhenAnyAnswerIsBlocked) {
  EXPECT_EQ(word("example.com:443", open_mode(), {kPublicV4, "10.0.0.1"}), "deny:blocked-address");
  EXPECT_EQ(word("example.com:443", open_mode(), {"10.0.0.1", kPublicV4}), "deny:blocked-address");
  EXPECT_EQ(word("example.com:443", open_mode(), {kPublicV4, kPublicV6, "fd00::1"}),
            "deny:blocked-address");
  EXPECT_EQ(word("example.com:443", open_mode(), {kPublicV6, "::ffff:93.184.215.14"}),
            "deny:blocked-address");
}

TEST(CorridorTest, RefusesNameThatResolvesToOwnAddress) {
  EXPECT_EQ(word("example.com:443", open_mode(), {"34.120.1.2"}, {"34.120.1.2"}),
            "deny:blocked-address");
  EXPECT_EQ(word("example.com:443", open_mode(), {kPublicV4, "2a01:4f8::7"}, {"2a01:4f8::7"}),
            "deny:blocked-address");
  EXPECT_EQ(word("example.com:443", open_mode(), {kPublicV4}, {"34.120.1.2"}), "allow");
}

TEST(CorridorTest, RefusesNameThatResolvesIntoNat64ButSaysWhy) {
  // The documented cost of refusing embedded-IPv4 forms: a DNS64-only host reaches nothing.
  EXPECT_EQ(word("example.com:443", open_mode(), {"64:ff9b::5db8:d70e"}), "deny:blocked-address");
}

TEST(CorridorTest, ChoosesFirstIpv4AnswerElseFirstAnswer) {
  EXPECT_EQ(chosen({kPublicV6, kPublicV4}), kPublicV4);
  EXPECT_EQ(chosen({kPublicV4, kOtherPublicV4}), kPublicV4);
  EXPECT_EQ(chosen({kOtherPublicV4, kPublicV4}), kOtherPublicV4);
  EXPECT_EQ(chosen({kPublicV6}), kPublicV6);
  EXPECT_EQ(chosen({kPublicV6, "2a00:1450:4001::1"}), kPublicV6);
  EXPECT_EQ(chosen({kPublicV6, kOtherPublicV4, kPublicV4}), kOtherPublicV4);
}

TEST(CorridorTest, ApprovedEndpointHoldsTheCheckedAddressNameAndPort) {
  TargetDecision target = decide_target("Example.com.:443", open_mode());
  ASSERT_TRUE(target.pending.has_value());
  std::vector<Address> answers = addrs({kPublicV4});
  AnswerDecision answer = decide_answers(*target.pending, answers, {});
  EXPECT_EQ(answer.decision.text(), "allow");
  EXPECT_TRUE(answer.decision.allowed());
  ASSERT_TRUE(answer.endpoint.has_value());
  EXPECT_EQ(answer.endpoint->address(), answers[0]);
  EXPECT_EQ(answer.endpoint->port(), 443);
  EXPECT_EQ(answer.endpoint->name(), "example.com");
  EXPECT_EQ(answer.subject.host, "example.com");
  EXPECT_EQ(answer.subject.port, 443);
}

// docs/reference-behaviour.md#blocked-addresses, answered through the corridor. Rows where this
// policy is stricter than the reference (documentation ranges, embedded IPv4) say so.
TEST(CorridorTest, AnswersTheReferenceBlockListRows) {
  for (std::string_view blocked :
       {"0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.255", "127.0.0.1", "169.254.169.254",
        "172.16.0.1", "172.31.255.255", "192.0.0.1", "192.168.1.1", "198.18.0.1", "198.19.255.255",
        "224.0.0.1", "239.255.255.255", "240.0.0.1", "255.255.255.255", "::", "::1", "fc00::1",
        "fdff::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::7f00:1", "64:ff9b::7f00:1",
        "2002:7f00:1::1",
        // stricter than the reference, which allowed these:
        "203.0.113.7", "198.51.100.7", "2001:db8::1", "::ffff:203.0.113.7", "2002:cb00:7107::1",
        "192.0.2.1", "192.88.99.1", "2001::1", "64:ff9b:1::1", "fec0::1"}) {
    EXPECT_EQ(word("example.com:443", open_mode(), {blocked}), "deny:blocked-address") << blocked;
  }
  for (std::string_view allowed :
       {"104.18.41.241", "172.32.0.1", "172.15.255.255", "100.63.255.255", "100.128.0.0",
        "2606:4700::6812:29f1"}) {
    EXPECT_EQ(word("example.com:443", open_mode(), {allowed}), "allow") << allowed;
  }
}

// docs/reference-behaviour.md#blocked-addresses, answered through the corridor: every probe of
// every table row.
TEST(CorridorTest, AnswersEveryRangeProbeThroughTheCorridor) {
  for (const auto& probes : {std::span<const policy_test::Probe>(policy_test::kIpv4Probes),
                             std::span<const policy_test::Probe>(policy_test::kIpv6Probes)}) {
    for (const policy_test::Probe& probe : probes) {
      std::string want =
          probe.verdict == policy_test::Verdict::kAllowed ? "allow" : "deny:blocked-address";
      EXPECT_EQ(word("example.com:443", open_mode(), {probe.address}), want) << probe.address;
    }
  }
}


TEST(CorridorTest, OperatorRangeParsesStrictly) {
  const std::optional<Range> one = parse_operator_range("203.0.113.7/32");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(range_text(*one), "203.0.113.7/32");
  EXPECT_EQ(range_text(*parse_operator_range("2001:db8::/32")), "2001:db8::/32");
  EXPECT_TRUE(parse_operator_range("0.0.0.0/0").has_value());
  EXPECT_TRUE(parse_operator_range("2001:db8::1/128").has_value());
  for (std::string_view bad : {"203.0.113.7", "203.0.113.7/33", "2001:db8::1/129", "203.0.113.7/", "/32",
                               "203.0.113.7/032", "203.0.113.7/3a", "10.0.0.1/8", "2001:db8::1/64",
                               "127.1/32", "[2001:db8::1]/128", "203.0.113.7/32 ", "203.0.113.7/-1"}) {
    EXPECT_FALSE(parse_operator_range(bad).has_value()) << bad;
  }
}

TEST(CorridorTest, OperatorBlockedRangeRefusesAnswersAtItsEdgesOnly) {
  const std::vector<Range> blocked = {*parse_operator_range("93.184.215.0/24"),
                                      *parse_operator_range("2606:4700::/32")};
  TargetDecision target = decide_target("example.com:443", open_mode());
  ASSERT_TRUE(target.pending.has_value());
  auto word_for = [&](std::string_view answer) {
    return decide_answers(*target.pending, addrs({answer}), {}, blocked).decision.text();
  };
  EXPECT_EQ(word_for("93.184.215.0"), "deny:blocked-address");
  EXPECT_EQ(word_for("93.184.215.255"), "deny:blocked-address");
  EXPECT_EQ(word_for("93.184.214.255"), "allow");
  EXPECT_EQ(word_for("93.184.216.0"), "allow");
  EXPECT_EQ(word_for("2606:4700::6812:29f1"), "deny:blocked-address");
  EXPECT_EQ(word_for("2606:4701::1"), "allow");
  // Without the operator's ranges the same answer passes (the table calls it public).
  EXPECT_EQ(decide_answers(*target.pending, addrs({"93.184.215.14"}), {}).decision.text(), "allow");
}

}  // namespace
}  // namespace policy
