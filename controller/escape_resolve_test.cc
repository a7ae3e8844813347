// The escape runner's test resolver (escape_dns.h) answering hand-made queries, and the judgement
// of the resolution cases (escape_resolve.h): a 403 counts only with the twin's journal showing
// the address check refused the name and the resolver having been asked.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "controller/escape_dns.h"
#include "controller/escape_resolve.h"
#include "escape-suite/resolve_names.h"

namespace controller {
namespace {

using escape::CaseResult;
using escape::Verdict;

std::string query(const std::string& name, std::uint16_t type, std::uint16_t id = 0x1234) {
  std::string q;
  q += static_cast<char>(id >> 8);
  q += static_cast<char>(id & 0xff);
  q += std::string("\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);  // RD, one question
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    q += static_cast<char>(dot - start);
    q += name.substr(start, dot - start);
    start = dot + 1;
  }
  q += '\0';
  q += static_cast<char>(type >> 8);
  q += static_cast<char>(type & 0xff);
  q += std::string("\x00\x01", 2);
  return q;
}

int rcode(const std::string& reply) { return static_cast<unsigned char>(reply[3]) & 0xf; }
int answer_count(const std::string& reply) { return static_cast<unsigned char>(reply[7]); }
// The rdata of the last answer (each answer ends with it).
std::string last_rdata(const std::string& reply, std::size_t size) {
  return reply.substr(reply.size() - size);
}

TEST(TestResolverTest, AnswersItsNamesWithTtlZeroAndRotatesTheRebindingName) {
  TestResolver r;
  r.set("rebind.resolve.test", {{"198.18.7.2"}, {"127.0.0.2"}}, {});
  r.set("ipv6-loopback.resolve.test", {{"198.18.7.2"}}, {"::1"});
  const std::string first = r.answer(query("Rebind.Resolve.Test", 1));
  ASSERT_GT(first.size(), 12u);
  EXPECT_EQ(first.substr(0, 2), "\x12\x34");
  EXPECT_EQ(static_cast<unsigned char>(first[2]) & 0x80, 0x80);  // a response
  EXPECT_EQ(rcode(first), 0);
  EXPECT_EQ(answer_count(first), 1);
  EXPECT_EQ(last_rdata(first, 4), std::string("\xc6\x12\x07\x02", 4));
  EXPECT_EQ(first.substr(first.size() - 10, 4), std::string(4, '\0'));  // TTL 0
  EXPECT_EQ(last_rdata(r.answer(query("rebind.resolve.test", 1)), 4),
            std::string("\x7f\x00\x00\x02", 4));
  EXPECT_EQ(last_rdata(r.answer(query("rebind.resolve.test", 1)), 4),
            std::string("\xc6\x12\x07\x02", 4));
  EXPECT_EQ(r.questions("rebind.resolve.test"), (std::pair<int, int>{3, 0}));
  const std::string v6 = r.answer(query("ipv6-loopback.resolve.test", 28));
  EXPECT_EQ(answer_count(v6), 1);
  EXPECT_EQ(last_rdata(v6, 16), std::string(15, '\0') + "\x01");
  EXPECT_EQ(answer_count(r.answer(query("rebind.resolve.test", 28))), 0);  // no AAAA: no data
  EXPECT_EQ(rcode(r.answer(query("other.test", 1))), 3);                   // NXDOMAIN
}

TEST(TestResolverTest, DropsWhatIsNotOneWellFormedQuestion) {
  TestResolver r;
  r.set("a.test", {{"198.18.7.2"}}, {});
  EXPECT_EQ(r.answer(""), "");
  EXPECT_EQ(r.answer(std::string(11, '\0')), "");
  std::string response = query("a.test", 1);
  response[2] = static_cast<char>(response[2] | 0x80);
  EXPECT_EQ(r.answer(response), "");  // a response, not a query
  std::string two = query("a.test", 1);
  two[5] = 2;
  EXPECT_EQ(r.answer(two), "");  // two questions
  std::string pointer = query("a.test", 1);
  pointer[12] = static_cast<char>(0xc0);
  EXPECT_EQ(r.answer(pointer), "");  // a compression pointer in the question
  EXPECT_EQ(r.answer(query("a.test", 1).substr(0, 16)), "");          // cut short
  EXPECT_EQ(r.answer(query(std::string(64, 'x') + ".test", 1)), "");  // a label over 63
  EXPECT_EQ(r.answer(std::string(513, '\0')), "");
  EXPECT_EQ(r.questions("a.test"), (std::pair<int, int>{0, 0}));
}

// On Podman the test network's bridge, and the host's address on it, appear only when the first
// container joins, after the twin had to be told the resolver's port: the address is bound ahead.
TEST(TestResolverTest, BindsAnAddressNoInterfaceHoldsYet) {
  TestResolver r;
  const Result<void> started = r.start("198.18.255.254");  // RFC 2544; on no interface here
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_EQ(r.endpoint().rfind("198.18.255.254:", 0), 0u) << r.endpoint();
}

TEST(TestResolverTest, AnswersOverUdpOnLoopback) {
  TestResolver r;
  ASSERT_TRUE(r.start("127.0.0.1"));
  EXPECT_EQ(r.endpoint().rfind("127.0.0.1:", 0), 0u);
}

CaseResult result(const std::string& id, Verdict v, const std::string& evidence) {
  return CaseResult{id, "corridor", v, evidence, 0};
}

TEST(ResolutionJudgeTest, A403CountsOnlyWhenTheAddressCheckRefusedTheName) {
  const std::string id = escape::kResolveCases[0].id;
  const CaseResult merged = result(id, Verdict::kPass, "twin: CONNECT -> 403 || release: -> 403");
  EXPECT_EQ(judge_resolution(merged, nullptr, {"deny:blocked-address"}, {1, 1}).verdict,
            Verdict::kPass);
  // A 403 for another reason never reached the check.
  EXPECT_EQ(judge_resolution(merged, nullptr, {"deny:unresolved:timeout"}, {1, 1}).verdict,
            Verdict::kInconclusive);
  EXPECT_EQ(judge_resolution(merged, nullptr, {"deny:not-on-allowlist"}, {0, 0}).verdict,
            Verdict::kInconclusive);
  EXPECT_EQ(judge_resolution(merged, nullptr, {"deny:blocked-address"}, {0, 0}).verdict,
            Verdict::kInconclusive);
  EXPECT_EQ(judge_resolution(merged, nullptr, {}, {1, 1}).verdict, Verdict::kInconclusive);
  EXPECT_EQ(judge_resolution(merged, nullptr, {"deny:blocked-address", "allow"}, {2, 2}).verdict,
            Verdict::kFail);
  EXPECT_EQ(
      judge_resolution(result(id, Verdict::kFail, "-> 200"), nullptr, {"allow"}, {1, 1}).verdict,
      Verdict::kFail);
}

TEST(ResolutionJudgeTest, RebindingNeedsADialledPublicAnswerAndARefusedPrivateOne) {
  const CaseResult merged = result(escape::kRebindCase, Verdict::kPass, "merged");
  const CaseResult twin =
      result(escape::kRebindCase, Verdict::kPass, "200 echoed; 403; 200 echoed; 403; control");
  const CaseResult only_refused =
      result(escape::kRebindCase, Verdict::kPass, "403; 403; 403; 403; control");
  EXPECT_EQ(judge_resolution(merged, &twin, {"allow", "deny:blocked-address"}, {4, 4}).verdict,
            Verdict::kPass);
  EXPECT_EQ(judge_resolution(merged, &only_refused, {"deny:blocked-address"}, {4, 4}).verdict,
            Verdict::kInconclusive);
  EXPECT_EQ(judge_resolution(merged, &twin, {"allow"}, {4, 4}).verdict, Verdict::kInconclusive);
  EXPECT_EQ(judge_resolution(merged, &twin, {"allow", "deny:blocked-address"}, {1, 1}).verdict,
            Verdict::kInconclusive);
}

TEST(ResolutionJudgeTest, TheTwinAllowsEveryNameAndTheResolverAnswersEachPublicFirst) {
  const std::vector<std::string> allowed = twin_allowlist("upstream.test");
  TestResolver r;
  fill_test_resolver(r, "upstream.test", "198.18.7.2", "198.18.7.3", "198.18.7.1");
  for (const escape::ResolveCase& c : escape::kResolveCases) {
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), c.name), allowed.end()) << c.name;
    EXPECT_EQ(resolution_name(c.id), c.name);
    EXPECT_TRUE(is_resolution_case(c.id));
    const std::string a = r.answer(query(c.name, 1));
    ASSERT_GT(a.size(), 12u) << c.name;
    // The first A answer is the test upstream: with the check gone, that is what gets dialled.
    const std::size_t first_rdata = query(c.name, 1).size() + 12;
    EXPECT_EQ(a.substr(first_rdata, 4), std::string("\xc6\x12\x07\x02", 4)) << c.name;
  }
  EXPECT_EQ(last_rdata(r.answer(query("gatekeeper-own.resolve.test", 1)), 4),
            std::string("\xc6\x12\x07\x03", 4));
  EXPECT_EQ(last_rdata(r.answer(query("host.resolve.test", 1)), 4),
            std::string("\xc6\x12\x07\x01", 4));
  EXPECT_FALSE(is_resolution_case("corridor.loopback-ipv4"));
}

}  // namespace
}  // namespace controller
