// Hostile CONNECT targets, each with the word the corridor journals for it (issue 2 item 6).
// Every target is judged in open mode with one public DNS answer, so "allow" means the target
// passed every rule before DNS. The allowlist test then reruns the whole table in allowlist mode.
// Targets with NUL use std::string literals ("..."s) so the NUL is part of the target.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy/corridor.h"
#include "policy/name.h"
#include "policy/special_names.h"

namespace policy {
namespace {

using namespace std::string_literals;

constexpr std::string_view kAllow = "allow";
constexpr std::string_view kNotAName = "deny:not-a-name";
constexpr std::string_view kMalformed = "deny:malformed";
constexpr std::string_view kPort = "deny:port";
constexpr std::string_view kAlwaysRefused = "deny:always-refused";
constexpr std::string_view kSpecialUse = "deny:special-use-name";
constexpr std::string_view kPublicAnswer = "93.184.215.14";

struct Row {
  std::string target;
  std::string_view word;
};

std::vector<Row> numeric_forms() {
  return {
      {"127.1:443", kNotAName}, {"127.0.1:443", kNotAName}, {"127.0.0.1:443", kNotAName},
      {"127.000.000.001:443", kNotAName}, {"127.0.0.01:443", kNotAName},
      {"0127.0.0.1:443", kNotAName}, {"2130706433:443", kNotAName}, {"0x7f000001:443", kNotAName},
      {"0X7F000001:443", kNotAName}, {"0x7F000001:443", kNotAName},
      {"0x7f.0x0.0x0.0x1:443", kNotAName}, {"0x7f.1:443", kNotAName}, {"0x7f.0.0.1:443", kNotAName},
      {"0177.0.0.1:443", kNotAName}, {"0177.0000.0000.0001:443", kNotAName},
      {"017700000001:443", kNotAName}, {"00000000000000177.0.0.1:443", kNotAName},
      {"1.1.257:443", kNotAName}, {"1.16843009:443", kNotAName}, {"16843009:443", kNotAName},
      {"0x1.0x1.0x1.0x1:443", kNotAName}, {"0x01010101:443", kNotAName},
      {"1746020849:443", kNotAName}, {"0x68122bf1:443", kNotAName},
      {"0150.0022.0051.0361:443", kNotAName}, {"104.1190641:443", kNotAName},
      {"0.0x0.0:443", kNotAName}, {"0:443", kNotAName}, {"0.0:443", kNotAName},
      {"0.0.0:443", kNotAName}, {"0.0.0.0:443", kNotAName}, {"00:443", kNotAName},
      {"0x0:443", kNotAName}, {"0x:443", kNotAName}, {"0x00000000:443", kNotAName},
      {"10.0.0.1:443", kNotAName}, {"10.1:443", kNotAName}, {"167772161:443", kNotAName},
      {"012.0.0.1:443", kNotAName}, {"0xa.0.0.1:443", kNotAName}, {"192.168.257:443", kNotAName},
      {"192.168.1:443", kNotAName}, {"3232235777:443", kNotAName}, {"0xc0a80001:443", kNotAName},
      {"0300.0250.0.1:443", kNotAName}, {"0xc0.0xa8.0x0.0x1:443", kNotAName},
      {"169.254.169.254:443", kNotAName}, {"2852039166:443", kNotAName},
      {"0xa9fea9fe:443", kNotAName}, {"0251.0376.0251.0376:443", kNotAName},
      {"169.254.43518:443", kNotAName}, {"0xa9.0xfe.0xa9.0xfe:443", kNotAName},
      {"0251.254.169.254:443", kNotAName}, {"4294967295:443", kNotAName},
      {"4294967296:443", kNotAName}, {"99999999999999999999:443", kNotAName},
      {"0xffffffff:443", kNotAName}, {"255.255.255.255:443", kNotAName},
      {"1.2.3.4.5:443", kNotAName}, {"1.2.3:443", kNotAName}, {"1.1.1.1.1.1:443", kNotAName},
      {"104.18.41.241:443", kNotAName}, {"203.0.113.7:443", kNotAName},
      {"127.0.0.1.:443", kNotAName}, {"2130706433.:443", kNotAName},
      {"0x7f000001.:443", kNotAName}, {"127.1.:443", kNotAName}, {"0o177.0.0.1:443", kNotAName},
      {"1.0o1:443", kNotAName}, {"example.0o17:443", kNotAName}, {"example.0O17:443", kNotAName},
      {"example.0o:443", kNotAName}, {"example.0x:443", kNotAName}, {"example.0X:443", kNotAName},
      {"example.0xff:443", kNotAName}, {"example.0XFF:443", kNotAName},
      {"example.0x0:443", kNotAName}, {"example.123:443", kNotAName}, {"example.0:443", kNotAName},
      {"a.b.c.00:443", kNotAName}, {"127.0.0.1.0x0:443", kNotAName}, {"1e100:443", kNotAName},
      {"0.0.0.0.0:443", kNotAName}, {"127.0.0.1:80", kNotAName}, {"2130706433:8443", kNotAName},
      {"0x7f000001:0443", kMalformed},
  };
}

std::vector<Row> ipv6_forms() {
  return {
      {"[::1]:443", kNotAName}, {"[::]:443", kNotAName}, {"[::1]:80", kNotAName},
      {"[0:0:0:0:0:0:0:1]:443", kNotAName}, {"[::ffff:127.0.0.1]:443", kNotAName},
      {"[::ffff:7f00:1]:443", kNotAName}, {"[fe80::1%eth0]:443", kNotAName},
      {"[fe80::1%25eth0]:443", kNotAName}, {"fe80::1%eth0:443", kNotAName},
      {"[2606:4700::6812:29f1]:443", kNotAName}, {"[64:ff9b::6812:29f1]:443", kNotAName},
      {"[2002:6812:29f1::1]:443", kNotAName}, {"[::ffff:104.18.41.241]:443", kNotAName},
      {"::1:443", kNotAName}, {"::ffff:127.0.0.1:443", kNotAName}, {":::443", kNotAName},
      {"::443", kNotAName}, {"[::1]", kMalformed}, {"[::1]:", kMalformed},
      {"[::1]:0443", kMalformed}, {"[::1]]:443", kNotAName}, {"[[::1]]:443", kNotAName},
      {"[::1:443", kNotAName}, {"::1]:443", kNotAName}, {"[v1.fe80::a+en1]:443", kNotAName},
      {"[::1%lo]:443", kNotAName}, {"[2001:db8::1]:443", kNotAName}, {"2001:db8::1:443", kNotAName},
      {"[::127.0.0.1]:443", kNotAName}, {"[fc00::1]:443", kNotAName}, {"[FE80::1]:443", kNotAName},
      {"[::1]:443/", kMalformed}, {"[fd00:ec2::254]:443", kNotAName},
      {"[example.com]:443", kNotAName},
  };
}

std::vector<Row> unicode_lookalikes() {
  return {
      {"auth.openai.com\u3002:443", kNotAName},  // ideographic full stop
      {"auth.openai\uff0ecom:443", kNotAName},   // fullwidth full stop
      {"auth\uff61openai.com:443", kNotAName},   // halfwidth ideographic full stop
      {"127\u30020\u30020\u30021:443", kNotAName},
      {"\uff11\uff12\uff17.\uff10.\uff10.\uff11:443", kNotAName},  // full-width digits
      {"\u2460\u2461\u2466.\u24ea.\u24ea.\u2460:443", kNotAName},  // circled digits
      {"\u24d4\u24e7\u24d0\u24dc\u24df\u24db\u24d4.\u24d2\u24de\u24dc:443", kNotAName},  // circled
      {"ex\u0430mple.com:443", kNotAName},     // Cyrillic a
      {"\u0430uth.openai.com:443", kNotAName}, {"exampl\u0435.com:443", kNotAName},
      {"g\u043eogle.com:443", kNotAName},      // Cyrillic o
      {"example\u200b.com:443", kNotAName},    // zero-width space
      {"exam\u00adple.com:443", kNotAName},    // soft hyphen
      {"\ufeffexample.com:443", kNotAName},    // byte order mark
      {"example.com\uff1a443", kMalformed},    // fullwidth colon: no ASCII ':'
      {"example.com:\uff14\uff14\uff13", kMalformed},   // fullwidth port digits
      {"example.com:\u0664\u0664\u0663", kMalformed},   // Arabic-Indic port digits
      {"b\u00fccher.de:443", kNotAName}, {"stra\u00dfe.de:443", kNotAName},
      {"\u212a.example.com:443", kNotAName},   // Kelvin sign folds to k
      {"auth.openai.\u0441om:443", kNotAName}, {"example.com\u3002:443", kNotAName},
      {"example\uff0ecom:443", kNotAName}, {"\u2024example.com:443", kNotAName},
      {"example\u2024com:443", kNotAName},     // one dot leader
      {"example\ufe52com:443", kNotAName},     // small full stop
      {"\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com:443", kNotAName},  // fullwidth letters
      {"EXAMPLE\u0130.com:443", kNotAName}, {"example.c\u0131m:443", kNotAName},
      {"ex" "\xe9" "mple.com:443", kNotAName},     // Latin-1 byte, invalid UTF-8
      {"example" "\xc0\xae" "com:443", kNotAName},  // overlong '.'
      {"example.com" "\xc0\xba" "443", kMalformed},  // overlong ':'
      {"\xed\xa0\x80" ".com:443", kNotAName},       // UTF-16 surrogate as UTF-8
      {"\xff\xfe" "example.com:443", kNotAName},
      {"example.com:443\u3002", kMalformed},
  };
}

std::vector<Row> control_characters() {
  return {
      {"example.com\r:443", kNotAName}, {"example.com\n:443", kNotAName},
      {"example.com\r\n:443", kNotAName}, {"example.com:443\r\n", kMalformed},
      {"example.com\r\nHost: evil.com:443", kNotAName}, {"example.com\0:443"s, kNotAName},
      {"\0example.com:443"s, kNotAName}, {"exa\0mple.com:443"s, kNotAName},
      {"example.com:44\0"s, kMalformed}, {"example.com:443\0"s, kMalformed},
      {"example.com\0.evil.com:443"s, kNotAName}, {"\0:443"s, kNotAName},
      {"example.com:\0"s "443", kMalformed}, {"example.com\t:443", kNotAName},
      {"\texample.com:443", kNotAName}, {"exa\tmple.com:443", kNotAName},
      {" example.com:443", kNotAName}, {"example.com :443", kNotAName},
      {"example.com: 443", kMalformed}, {"example.com:443 ", kMalformed},
      {"exam ple.com:443", kNotAName}, {" :443", kNotAName}, {"example.com\v:443", kNotAName},
      {"example.com\f:443", kNotAName}, {"example.com\x7f" ":443", kNotAName},
      {"\x01" "example.com:443", kNotAName}, {"\x1b" "[31mexample.com:443", kNotAName},
      {"example.com%00:443", kNotAName}, {"example.com%0d%0a:443", kNotAName},
      {"example%2ecom:443", kNotAName}, {"example.com\x08" ":443", kNotAName},
      {"example.com\r:80", kNotAName},
  };
}

std::vector<Row> empty_parts() {
  return {
      {"", kMalformed}, {":", kMalformed}, {":443", kMalformed}, {"::", kMalformed},
      {"example.com:", kMalformed}, {"example.com", kMalformed}, {".", kMalformed},
      {"443", kMalformed}, {".:443", kNotAName}, {"..:443", kNotAName}, {"..com:443", kNotAName},
      {"example..com:443", kNotAName}, {".example.com:443", kNotAName},
      {"example.com..:443", kNotAName}, {"example.:443", kSpecialUse}, {"exampl.:443", kNotAName}, {"com:443", kNotAName},
      {".com:443", kNotAName}, {"example.com.:443", kAllow}, {"a..:443", kNotAName},
      {":443:443", kNotAName}, {"a.b..c:443", kNotAName},
  };
}

std::vector<Row> ports() {
  return {
      {"example.com:80", kPort}, {"example.com:8443", kPort}, {"example.com:22", kPort},
      {"example.com:1", kPort}, {"example.com:65535", kPort}, {"example.com:444", kPort},
      {"example.com:442", kPort}, {"example.com:4430", kPort}, {"example.com:0", kMalformed},
      {"example.com:0443", kMalformed}, {"example.com:00443", kMalformed},
      {"example.com:+443", kMalformed}, {"example.com:-443", kMalformed},
      {"example.com:0x1bb", kMalformed}, {"example.com:443.0", kMalformed},
      {"example.com:4.43e2", kMalformed}, {"example.com:65536", kMalformed},
      {"example.com:99999", kMalformed}, {"example.com:443443", kMalformed},
      {"example.com:443a", kMalformed}, {"example.com:a443", kMalformed},
      {"example.com:4 43", kMalformed}, {"example.com:443:443", kNotAName},
      {"example.com::443", kNotAName}, {"example.com:%34%34%33", kMalformed},
      {"example.com:443/", kMalformed}, {"example.com:443?x", kMalformed},
      {"example.com:443#", kMalformed}, {"example.com:https", kMalformed},
      {"example.com:443", kAllow},
  };
}

std::vector<Row> always_refused() {
  return {
      {"auth.openai.com:443", kAlwaysRefused}, {"AUTH.OPENAI.COM.:443", kAlwaysRefused},
      {"Auth.OpenAI.Com:443", kAlwaysRefused}, {"auth.openai.com.:443", kAlwaysRefused},
      {"auth.openai.com:80", kAlwaysRefused}, {"auth.openai.com:8443", kAlwaysRefused},
      {"auth.openai.com:1", kAlwaysRefused}, {"auth.openai.com:65535", kAlwaysRefused},
      {"AUTH.OPENAI.COM.:80", kAlwaysRefused}, {"auth.openai.com:0443", kMalformed},
      {"auth.openai.com:", kMalformed}, {"auth.openai.com..:443", kNotAName},
      {".auth.openai.com:443", kNotAName}, {"auth.openai.com :443", kNotAName},
      {"auth.openai.com\t:443", kNotAName}, {"auth.openai.com\0:443"s, kNotAName},
      {"[auth.openai.com]:443", kNotAName}, {"auth.openai.com%2e:443", kNotAName},
      {"xauth.openai.com:443", kAllow}, {"auth.openai.com.evil.com:443", kAllow},
      {"sub.auth.openai.com:443", kAllow}, {"auth-openai.com:443", kAllow},
      {"openai.com:443", kAllow}, {"auth.openai.co:443", kAllow},
  };
}

std::vector<Row> hyphens_and_single_labels() {
  return {
      {"-example.com:443", kNotAName}, {"example-.com:443", kNotAName},
      {"example.-com:443", kNotAName}, {"example.com-:443", kNotAName},
      {"ex--ample.com:443", kAllow}, {"xn--.com:443", kNotAName}, {"-.com:443", kNotAName},
      {"a-b.c-d:443", kAllow}, {"1-1.com:443", kAllow}, {"example.x-n:443", kAllow},
      {"localhost:443", kSpecialUse}, {"LOCALHOST:443", kSpecialUse}, {"localhost.:443", kSpecialUse},
      {"metadata:443", kNotAName}, {"instance-data:443", kNotAName},
      {"gatekeeper:443", kNotAName}, {"host-gateway:443", kNotAName},
      {"kubernetes:443", kNotAName}, {"wpad:443", kNotAName},
  };
}

// Special-use names (policy/special_names.h): refused by name before any query, on any port.
std::vector<Row> special_use() {
  return {
      {"foo.localhost:443", kSpecialUse}, {"FOO.LOCALHOST.:443", kSpecialUse},
      {"metadata.google.internal:443", kSpecialUse}, {"host.docker.internal:443", kSpecialUse},
      {"printer.local:443", kSpecialUse}, {"abc.onion:443", kSpecialUse}, {"x.invalid:443", kSpecialUse},
      {"x.test:443", kSpecialUse}, {"x.example:443", kSpecialUse}, {"router.home.arpa:443", kSpecialUse},
      {"x.alt:443", kSpecialUse}, {"1.0.0.127.in-addr.arpa:443", kSpecialUse},
      {"1.0.ip6.arpa:443", kSpecialUse}, {"ipv4only.arpa:443", kSpecialUse},
      {"foo.localhost:22", kSpecialUse}, {"x.onion:80", kSpecialUse},
  };
}

// Names that must pass: they only look numeric, or their DNS answer decides.
std::vector<Row> counter_examples() {
  return {
      {"1e100.net:443", kAllow}, {"3com.com:443", kAllow}, {"xn--bcher-kva.de:443", kAllow},
      {"0x7f.example.com:443", kAllow}, {"127.0.0.1.example.com:443", kAllow},
      {"1.1.1.1.example.com:443", kAllow}, {"0177.0.0.1.example.com:443", kAllow},
      {"2130706433.example.com:443", kAllow}, {"0x7f000001.example.com:443", kAllow},
      {"example.0xg:443", kAllow}, {"example.0x7fz:443", kAllow}, {"example.1e3:443", kAllow},
      {"example.0b1:443", kAllow}, {"a.x0:443", kAllow}, {"123.a1:443", kAllow},
      {"0.0.0.0.example.com:443", kAllow}, {"localhost.example.com:443", kAllow},
      {"foo.localhost.example.com:443", kAllow}, {"169.254.169.254.nip.io:443", kAllow},
      {"internal.example.com:443", kAllow}, {"10.0.0.1.sslip.io:443", kAllow},
      {"EXAMPLE.COM:443", kAllow}, {"api.anthropic.com:443", kAllow},
  };
}

// Generated rows, each group with one explicit word.
std::vector<Row> generated() {
  std::vector<Row> rows;
  // Every ASCII punctuation byte inside a label makes the target not a name.
  for (char c : std::string_view("_*!$%&'()+,;=@/\\?#[]{}|~`^\"<> ")) {
    rows.push_back({"exa" + std::string(1, c) + "mple.com:443", kNotAName});
  }
  const std::string l63(kMaxLabelLength, 'a');
  const std::string l64(kMaxLabelLength + 1, 'a');
  // Labels at the limit and one past it, in first and last position.
  rows.push_back({l63 + ".com:443", kAllow});
  rows.push_back({l64 + ".com:443", kNotAName});
  rows.push_back({"example." + l63 + ":443", kAllow});
  rows.push_back({"example." + l64 + ":443", kNotAName});
  rows.push_back({std::string(kMaxLabelLength, '1') + ".com:443", kAllow});
  rows.push_back({"example." + std::string(kMaxLabelLength, '1') + ":443", kNotAName});
  // Names at 253 characters and one past: "a." repeated, then "com".
  std::string n253;
  while (n253.size() < kMaxNameLength - 3) n253 += "a.";
  n253 += "com";
  rows.push_back({n253 + ":443", kAllow});
  rows.push_back({n253 + ".:443", kAllow});  // the trailing dot does not count
  rows.push_back({"b" + n253 + ":443", kNotAName});
  rows.push_back({"b" + n253 + ".:443", kNotAName});
  rows.push_back({"A." + n253.substr(2) + ":443", kAllow});
  rows.push_back({std::string(1000, 'a') + ".com:443", kNotAName});
  rows.push_back({std::string(10000, 'a') + ".com:443", kNotAName});
  rows.push_back({std::string(30, 'a') + "-" + std::string(32, 'b') + ".com:443", kAllow});
  return rows;
}

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  for (auto group : {numeric_forms(), ipv6_forms(), unicode_lookalikes(), control_characters(),
                     empty_parts(), ports(), always_refused(), hyphens_and_single_labels(),
                     special_use(), counter_examples(), generated()}) {
    rows.insert(rows.end(), group.begin(), group.end());
  }
  return rows;
}

std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x21 && c <= 0x7e) {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out.size() > 120 ? out.substr(0, 120) + "...(" + std::to_string(text.size()) + ")" : out;
}

std::string word(const std::string& target, const NetworkPolicy& policy) {
  TargetDecision decision = decide_target(target, policy);
  if (!decision.pending) return decision.decision.text();
  std::vector<Address> answers = {*parse_answer(kPublicAnswer)};
  return decide_answers(*decision.pending, answers, {}).decision.text();
}

TEST(HostileSpellingsTest, TableHoldsAtLeastThreeHundredTargets) {
  EXPECT_GE(all_rows().size(), 300u);
}

TEST(HostileSpellingsTest, EveryTargetGetsItsWordInOpenMode) {
  NetworkPolicy policy;
  policy.mode = Mode::kOpen;
  for (const Row& row : all_rows()) {
    EXPECT_EQ(word(row.target, policy), row.word) << printable(row.target);
  }
}

// The allowlist is the last rule before DNS: every earlier word stays, and a name that passed in
// open mode is refused unless listed, then allowed when listed.
TEST(HostileSpellingsTest, EveryTargetGetsTheSameWordInAllowlistModeUnlessUnlisted) {
  NetworkPolicy empty_list;
  for (const Row& row : all_rows()) {
    std::string_view want = row.word == kAllow ? "deny:not-on-allowlist" : row.word;
    EXPECT_EQ(word(row.target, empty_list), want) << printable(row.target);
    if (row.word != kAllow) continue;
    TargetDecision decision = decide_target(row.target, empty_list);
    NetworkPolicy listed;
    listed.domains.insert(decision.subject.host);
    EXPECT_EQ(word(row.target, listed), kAllow) << printable(row.target);
  }
}

TEST(HostileSpellingsTest, JournalSubjectIsNormalisedOnlyForNames) {
  NetworkPolicy policy;
  policy.mode = Mode::kOpen;
  for (const Row& row : all_rows()) {
    TargetDecision decision = decide_target(row.target, policy);
    if (row.word == kMalformed) {
      EXPECT_EQ(decision.subject.host, "") << printable(row.target);
      EXPECT_EQ(decision.subject.port, 0) << printable(row.target);
    } else if (row.word == kNotAName) {
      EXPECT_FALSE(is_name(decision.subject.host)) << printable(row.target);
      EXPECT_NE(decision.subject.port, 0) << printable(row.target);
    } else if (row.word == kSpecialUse) {
      EXPECT_NE(special_use_row(normalise_name(decision.subject.host)), nullptr) << printable(row.target);
    } else {
      EXPECT_TRUE(is_name(decision.subject.host)) << printable(row.target);
    }
  }
}

struct AnswerRow {
  std::string_view target;
  std::vector<std::string_view> answers;
  std::string_view word;
};

// Names an attacker controls, answered the way a hostile resolver would answer them.
TEST(HostileSpellingsTest, HostileAnswersAreRefused) {
  const std::vector<AnswerRow> rows = {
      {"localhost.attacker.example.com:443", {"127.0.0.1"}, "deny:blocked-address"},
      {"169.254.169.254.nip.io:443", {"169.254.169.254"}, "deny:blocked-address"},
      {"10.0.0.1.sslip.io:443", {"10.0.0.1"}, "deny:blocked-address"},
      {"metadata.attacker.example.com:443", {"169.254.169.254"}, "deny:blocked-address"},
      {"rebind.example.com:443", {kPublicAnswer, "127.0.0.1"}, "deny:blocked-address"},
      {"rebind.example.com:443", {"2606:4700::1", "::1"}, "deny:blocked-address"},
      {"mapped.example.com:443", {"::ffff:127.0.0.1"}, "deny:blocked-address"},
      {"mapped.example.com:443", {"::ffff:93.184.215.14"}, "deny:blocked-address"},
      {"nat64.example.com:443", {"64:ff9b::a9fe:a9fe"}, "deny:blocked-address"},
      {"teredo.example.com:443", {"2001:0:4136:e378:8000:63bf:3fff:fdd2"}, "deny:blocked-address"},
      {"sixtofour.example.com:443", {"2002:a9fe:a9fe::1"}, "deny:blocked-address"},
      {"compat.example.com:443", {"::7f00:1"}, "deny:blocked-address"},
      {"ula.example.com:443", {"fd00:ec2::254"}, "deny:blocked-address"},
      {"azure.example.com:443", {"168.63.129.16"}, "deny:blocked-address"},
      {"zero.example.com:443", {"0.0.0.0"}, "deny:blocked-address"},
      {"broadcast.example.com:443", {"255.255.255.255"}, "deny:blocked-address"},
      {"multicast.example.com:443", {"ff02::1"}, "deny:blocked-address"},
      {"empty.example.com:443", {}, "deny:unresolved:no-answer"},
      {"public.example.com:443", {"2606:4700::1", kPublicAnswer}, "allow"},
  };
  NetworkPolicy policy;
  policy.mode = Mode::kOpen;
  for (const AnswerRow& row : rows) {
    TargetDecision decision = decide_target(row.target, policy);
    ASSERT_TRUE(decision.pending.has_value()) << row.target;
    std::vector<Address> answers;
    for (std::string_view text : row.answers) {
      std::optional<Address> address = parse_answer(text);
      ASSERT_TRUE(address.has_value()) << text;
      answers.push_back(*address);
    }
    EXPECT_EQ(decide_answers(*decision.pending, answers, {}).decision.text(), row.word)
        << row.target;
  }
}

// Answer texts a strict parser must not read (they reach `gatekeeper explain --answer`).
TEST(HostileSpellingsTest, AnswerParserRefusesAddressSpellings) {
  for (std::string text : {"127.1"s, "2130706433"s, "0177.0.0.1"s, "0x7f000001"s, "1.1.257"s,
                           "127.000.000.001"s, "0.0x0.0"s, "[::1]"s, "fe80::1%eth0"s,
                           "127.0.0.1 "s, " 127.0.0.1"s, "127.0.0.1\0"s, "\uff11.1.1.1"s,
                           "::1/128"s, "localhost"s, ""s}) {
    EXPECT_FALSE(parse_answer(text).has_value()) << printable(text);
  }
}

}  // namespace
}  // namespace policy
