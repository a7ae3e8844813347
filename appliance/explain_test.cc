// `gatekeeper explain` prints the corridor's word for a target; exit 0 for a word, 2 for usage.
#include "appliance/explain.h"

#include <gtest/gtest.h>

#include <string>

#include "policy/special_names.h"

namespace {

using appliance::run_explain;

TEST(ExplainTest, AllowsListedNameWithPublicAnswer) {
  auto outcome = run_explain({"--allow", "example.com", "--answer", "93.184.215.14", "example.com:443"});
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.out, "allow\n");
  EXPECT_EQ(outcome.err, "");
}

TEST(ExplainTest, DefaultModeIsAllowlist) {
  auto outcome = run_explain({"--answer", "93.184.215.14", "example.com:443"});
  EXPECT_EQ(outcome.out, "deny:not-on-allowlist\n");
}

TEST(ExplainTest, PassingNameWithoutAnswerIsUnresolved) {
  auto outcome = run_explain({"--mode", "open", "example.com:443"});
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.out, "deny:unresolved:no-answer\n");
}

TEST(ExplainTest, AnyBlockedAnswerRefusesTheName) {
  auto outcome = run_explain(
      {"--mode", "open", "--answer", "93.184.215.14", "--answer", "169.254.169.254", "example.com:443"});
  EXPECT_EQ(outcome.out, "deny:blocked-address\n");
}

TEST(ExplainTest, ReleaseBuildRefusesBenchmarkingRange) {
  auto outcome = run_explain({"--mode", "open", "--answer", "198.18.0.1", "example.com:443"});
  EXPECT_EQ(outcome.out, "deny:blocked-address\n");
}

TEST(ExplainTest, WordsBeforeDnsNeedNoAnswer) {
  EXPECT_EQ(run_explain({"--mode", "open", "2130706433:443"}).out, "deny:not-a-name\n");
  EXPECT_EQ(run_explain({"--mode", "open", "[::1]:443"}).out, "deny:not-a-name\n");
  EXPECT_EQ(run_explain({"--mode", "open", "example.com:22"}).out, "deny:port\n");
  EXPECT_EQ(run_explain({"--mode", "open", "example.com"}).out, "deny:malformed\n");
  EXPECT_EQ(run_explain({"--allow", "auth.openai.com", "auth.openai.com:443"}).out,
            "deny:always-refused\n");
}

TEST(ExplainTest, ServerNameGivesTheTunnelsFirstFlightWord) {
  const std::vector<std::string> base = {"--allow", "example.com", "--answer", "93.184.215.14"};
  auto with = [&](const std::string& name) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--server-name", name, "example.com:443"});
    return run_explain(args).out;
  };
  EXPECT_EQ(with("example.com"), "allow\n");
  EXPECT_EQ(with("EXAMPLE.com."), "allow\n");
  EXPECT_EQ(with("auth.openai.com"), "deny:tls-sni-mismatch\n");
  // A CONNECT refused before the first flight keeps its own word.
  EXPECT_EQ(run_explain({"--server-name", "example.com", "--answer", "93.184.215.14", "example.com:443"}).out,
            "deny:not-on-allowlist\n");
  EXPECT_EQ(run_explain({"--server-name"}).exit_code, 2);
}

TEST(ExplainTest, BlockedRangeRefusesAnAnswerTheTableCallsPublic) {
  EXPECT_EQ(run_explain({"--mode", "open", "--block", "93.184.215.0/24", "--answer", "93.184.215.14", "example.com:443"}).out,
            "deny:blocked-address\n");
  EXPECT_EQ(run_explain({"--mode", "open", "--block", "93.184.216.0/24", "--answer", "93.184.215.14", "example.com:443"}).out,
            "allow\n");
  auto bad = run_explain({"--block", "93.184.215.14/24", "example.com:443"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--block '93.184.215.14/24'"), std::string::npos);
}

TEST(ExplainTest, BadUsageExitsTwoAndNamesTheProblem) {
  auto no_target = run_explain({"--mode", "open"});
  EXPECT_EQ(no_target.exit_code, 2);
  EXPECT_NE(no_target.err.find("missing TARGET"), std::string::npos);
  EXPECT_EQ(no_target.out, "");

  auto bad_mode = run_explain({"--mode", "closed", "example.com:443"});
  EXPECT_EQ(bad_mode.exit_code, 2);
  EXPECT_NE(bad_mode.err.find("--mode 'closed'"), std::string::npos);

  auto bad_answer = run_explain({"--answer", "127.1", "example.com:443"});
  EXPECT_EQ(bad_answer.exit_code, 2);
  EXPECT_NE(bad_answer.err.find("--answer '127.1'"), std::string::npos);

  auto wildcard = run_explain({"--allow", "*.example.com", "example.com:443"});
  EXPECT_EQ(wildcard.exit_code, 2);
  EXPECT_NE(wildcard.err.find("--allow '*.example.com'"), std::string::npos);

  auto two_targets = run_explain({"a.com:443", "b.com:443"});
  EXPECT_EQ(two_targets.exit_code, 2);

  auto unknown = run_explain({"--frobnicate", "a.com:443"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown option '--frobnicate'"), std::string::npos);
}

TEST(ExplainTest, DoubleDashAllowsATargetThatLooksLikeAnOption) {
  auto outcome = run_explain({"--mode", "open", "--", "--x.com:443"});
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.out, "deny:not-a-name\n");
}

TEST(ExplainTest, DoubleDashAllowsATargetThatIsAnOptionName) {
  EXPECT_EQ(run_explain({"--", "-h"}).out, "deny:malformed\n");
  EXPECT_EQ(run_explain({"--", "--mode"}).out, "deny:malformed\n");
  EXPECT_EQ(run_explain({"--mode", "open", "--", "-localhost:443"}).out, "deny:not-a-name\n");
}

TEST(ExplainTest, AnswersEverySpecialUseNameWithItsWord) {
  for (const policy::SpecialUseName& row : policy::special_use_names()) {
    for (const std::string& host : {std::string(row.suffix), "a." + std::string(row.suffix)}) {
      for (const char* mode : {"open", "allowlist"}) {
        const auto outcome = run_explain({"--mode", mode, "--allow", "a.example.com", "--answer", "93.184.215.14",
                                          host + ":443"});
        EXPECT_EQ(outcome.exit_code, 0) << host;
        EXPECT_EQ(outcome.out, "deny:special-use-name\n") << host << " " << mode;
      }
    }
  }
}

TEST(ExplainTest, ABadALabelIsNotAName) {
  EXPECT_EQ(run_explain({"--mode", "open", "xn--zz.example.com:443"}).out, "deny:not-a-name\n");
  EXPECT_EQ(run_explain({"--mode", "open", "--answer", "93.184.215.14", "xn--bcher-kva.example.com:443"}).out,
            "allow\n");
}

}  // namespace
