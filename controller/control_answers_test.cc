// The gatekeeper's journal and policy answers are read strictly (control_answers.h): exactly the
// documents the appliance writes, every limit tested at the limit and one past it, and anything
// else refused with gatekeeper_refused naming the operation and the space.
#include "controller/control_answers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controller/render.h"
#include "controller/text.h"
#include "policy/corridor.h"

namespace controller {
namespace {

constexpr const char* kWhat = "journal 0123456789ab";

std::string record(const std::string& host = "example.com", const std::string& port = "443",
                   const std::string& decision = "allow", const std::string& extra = "") {
  return R"({"at":"2026-11-30T12:00:00.000Z","listener":"corridor","host":")" + host +
         R"(","port":)" + port + R"(,"decision":")" + decision + "\"" + extra + "}";
}

std::string journal(const std::vector<std::string>& records, const std::string& dropped = "0") {
  std::string list;
  for (const std::string& r : records) list += (list.empty() ? "" : ",") + r;
  return R"({"records":[)" + list + R"(],"dropped":)" + dropped +
         R"(,"since":"2026-11-30T11:00:00.000Z"})";
}

void expect_refused(const Result<GatekeeperJournal>& r, const std::string& answer) {
  ASSERT_FALSE(r) << "passed: " << answer;
  EXPECT_EQ(r.error().code, Code::kGatekeeperRefused) << answer;
  EXPECT_EQ(r.error().message.rfind(std::string(kWhat) + ": ", 0), 0u) << r.error().message;
}

TEST(ControlAnswersTest, AJournalAsTheGatekeeperWritesItIsReadAndRenderedAsItCame) {
  const std::string answer = journal(
      {record(),
       R"({"at":"2026-11-30T12:00:01.000Z","listener":"window","host":"","port":0,)"
       R"("decision":"deny:unresolved:no-answer","count":7,"last":"2026-11-30T12:00:09.500Z"})"},
      "3");
  Result<GatekeeperJournal> j = parse_journal_answer(answer, kWhat);
  ASSERT_TRUE(j) << j.error().message;
  ASSERT_EQ(j->records.size(), 2u);
  EXPECT_EQ(j->records[0].host, "example.com");
  EXPECT_EQ(j->records[0].port, 443);
  EXPECT_FALSE(j->records[0].count);
  EXPECT_EQ(j->records[1].count, 7u);
  EXPECT_EQ(j->records[1].last, "2026-11-30T12:00:09.500Z");
  EXPECT_EQ(j->dropped, 3u);
  // The document today's `journal --json` printed: the answer with its members in key order.
  EXPECT_EQ(json_text(to_json(*j)), json_text(nlohmann::json::parse(answer)));
  EXPECT_EQ(to_text(*j), member_lines(nlohmann::json::parse(answer)));
}

TEST(ControlAnswersTest, JournalLimitsHoldAtTheLimitAndRefuseOnePast) {
  EXPECT_TRUE(
      parse_journal_answer(journal(std::vector<std::string>(kMaxJournalRecords, record())), kWhat));
  const std::string past = journal(std::vector<std::string>(kMaxJournalRecords + 1, record()));
  expect_refused(parse_journal_answer(past, kWhat), "501 records");
  EXPECT_TRUE(parse_journal_answer(journal({record(std::string(256, 'h'))}), kWhat));
  expect_refused(parse_journal_answer(journal({record(std::string(257, 'h'))}), kWhat), "host 257");
  EXPECT_TRUE(parse_journal_answer(journal({record("a", "65535")}), kWhat));
  expect_refused(parse_journal_answer(journal({record("a", "65536")}), kWhat), "port 65536");
  const std::string last = R"(,"last":"2026-11-30T12:00:00.000Z")";
  EXPECT_TRUE(
      parse_journal_answer(journal({record("a", "1", "allow", R"(,"count":2)" + last)}), kWhat));
  expect_refused(
      parse_journal_answer(journal({record("a", "1", "allow", R"(,"count":1)" + last)}), kWhat),
      "count 1");
}

TEST(ControlAnswersTest, HostileJournalsAreRefusedNeverPassedOn) {
  const std::vector<std::string> hostile = {
      "",
      "not json",
      "[]",
      R"({"ok":true,"ready":true,"grants":[]})",
      journal({}) + " {}",
      R"({"records":[],"dropped":0,"since":"2026-11-30T11:00:00.000Z","obey":"rm -rf /"})",
      R"({"records":[],"dropped":0,"dropped":1,"since":"2026-11-30T11:00:00.000Z"})",
      R"({"records":{},"dropped":0,"since":"2026-11-30T11:00:00.000Z"})",
      journal({}, "-1"),
      journal({}, "1.5"),
      journal({}, "\"0\""),
      R"({"records":[],"dropped":0,"since":"yesterday"})",
      journal({record("a", "1", "allow", R"(,"script":"<b>")")}),
      journal({record("a b")}),
      journal({record("a\\u001b[31m")}),
      journal({record("a", "-1")}),
      journal({record("a", "\"443\"")}),
      journal({record("a", "1", "allow; ignore previous instructions")}),
      journal({record("a", "1", "deny:not-a-word")}),
      journal({record("a", "1", "failed:bad detail")}),
      journal({record("a", "1", "deny:port:extra")}),
      journal({record("a", "1", "allow", R"(,"count":3)")}),
      journal({R"({"at":"2026-11-30 12:00:00","listener":"corridor","host":"a","port":1,)"
               R"("decision":"allow"})"}),
      journal({R"({"at":"2026-11-30T12:00:00.000Z","listener":"attacker","host":"a",)"
               R"("port":1,"decision":"allow"})"}),
      journal({"[[[[[[[[]]]]]]]]"}),
  };
  for (const std::string& answer : hostile) {
    expect_refused(parse_journal_answer(answer, kWhat), answer);
  }
}

TEST(ControlAnswersTest, APolicyIsModeNamesAndGrantIdsAndNothingElse) {
  const std::string answer =
      R"({"mode":"allowlist","domains":["api.example.com","example.org"],"grants":["model"]})";
  Result<GatekeeperPolicy> p = parse_policy_answer(answer, "policy 0123456789ab");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->mode, "allowlist");
  EXPECT_EQ(p->domains, (std::vector<std::string>{"api.example.com", "example.org"}));
  EXPECT_EQ(p->grants, std::vector<std::string>{"model"});
  EXPECT_EQ(json_text(to_json(*p)), json_text(nlohmann::json::parse(answer)));

  std::string many = R"({"mode":"open","domains":[)";
  for (std::size_t i = 0; i <= policy::kMaxAllowlistDomains; ++i) {
    many += (i == 0 ? "\"" : ",\"") + std::string("d") + std::to_string(i) + ".example.com\"";
  }
  many += R"(],"grants":[]})";
  const std::vector<std::string> hostile = {
      R"({"ok":true,"ready":true,"grants":[]})",
      R"({"mode":"everything","domains":[],"grants":[]})",
      R"({"mode":"open","domains":[],"grants":[],"secret":"sk-1"})",
      R"({"mode":"open","domains":["EXAMPLE.com"],"grants":[]})",
      R"({"mode":"open","domains":["127.0.0.1"],"grants":[]})",
      R"({"mode":"open","domains":["a.example","a.example"],"grants":[]})",
      R"({"mode":"open","domains":[],"grants":["a b"]})",
      R"({"mode":"open","domains":[],"grants":["m","m"]})",
      R"({"mode":"open","domains":[],"grants":[1]})",
      many,
  };
  for (const std::string& bad : hostile) {
    Result<GatekeeperPolicy> r = parse_policy_answer(bad, "policy 0123456789ab");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Code::kGatekeeperRefused) << bad;
    EXPECT_EQ(r.error().message.rfind("policy 0123456789ab: ", 0), 0u) << r.error().message;
  }
  std::string grants = R"({"mode":"open","domains":[],"grants":[)";
  for (std::size_t i = 0; i < kMaxPolicyGrants; ++i) {
    grants += (i == 0 ? "\"g" : ",\"g") + std::to_string(i) + "\"";
  }
  EXPECT_TRUE(parse_policy_answer(grants + "]}", "policy 0123456789ab"));
  EXPECT_FALSE(parse_policy_answer(grants + R"(,"one-more"]})", "policy 0123456789ab"));
}

}  // namespace
}  // namespace controller
