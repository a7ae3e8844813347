// Secret sources, presets and the keeper's timing: pure parts directly, the helper through the
// test helper program (testing/token_helper.cc), which counts its runs.
#include "controller/grants/source.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "controller/grants/presets.h"
#include "controller/records.h"
#include "controller/serve/keeper.h"

namespace controller::grants {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

TEST(PresetsTest, EveryProviderOfTheTableHasAnHttpsUpstreamAndAKnownHeader) {
  const std::vector<std::string> want = {"anthropic", "openai",  "google",   "openrouter",
                                         "groq",      "mistral", "deepseek", "xai"};
  ASSERT_EQ(presets().size(), want.size());
  for (const std::string& name : want) {
    Result<Preset> p = find_preset(name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(p->upstream.rfind("https://", 0), 0u) << name;
    EXPECT_TRUE(p->header == "x-api-key" || p->header == "x-goog-api-key" ||
                p->header == "authorization")
        << name;
    EXPECT_FALSE(p->source.empty()) << name;
  }
  EXPECT_EQ(find_preset("anthropic")->header, "x-api-key");
  EXPECT_EQ(find_preset("google")->header, "x-goog-api-key");
  EXPECT_EQ(find_preset("openai")->upstream, "https://api.openai.com/v1");
}

TEST(PresetsTest, RefusesProvidersThatSignRequestsAndSaysSo) {
  Result<Preset> bedrock = find_preset("amazon-bedrock");
  ASSERT_FALSE(bedrock);
  EXPECT_EQ(bedrock.error().code, Code::kProviderNotSupported);
  EXPECT_NE(bedrock.error().message.find("signs every request"), std::string::npos)
      << bedrock.error().message;
  Result<Preset> unknown = find_preset("acme");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Code::kProviderNotSupported);
  EXPECT_NE(unknown.error().message.find("--upstream and --header"), std::string::npos);
}

TEST(HelperCommandTest, SplitsWordsAndKeepsQuotedTextLiterally) {
  using V = std::vector<std::string>;
  EXPECT_EQ(*parse_helper_command("pass show api/openai"), (V{"pass", "show", "api/openai"}));
  EXPECT_EQ(*parse_helper_command("  a\tb  "), (V{"a", "b"}));
  EXPECT_EQ(*parse_helper_command("tool 'a b' \"c \\\" d\" e\\ f ''"),
            (V{"tool", "a b", "c \" d", "e f", ""}));
  EXPECT_EQ(*parse_helper_command("tool '$HOME|x' \"*\""), (V{"tool", "$HOME|x", "*"}));
  EXPECT_EQ(*parse_helper_command(helper_command_text({"a b", "it's", "$x", ""})),
            (V{"a b", "it's", "$x", ""}));
}

TEST(HelperCommandTest, RefusesWhatOnlyAShellWouldMeanAndBrokenQuoting) {
  for (const char* bad :
       {"", "   ", "pass show x | head -1", "tool $HOME", "tool `id`", "tool > out", "a;b",
        "tool *", "tool ~/x", "tool 'open", "tool \"open", "tool \\", "tool\nx", "'' arg"}) {
    Result<std::vector<std::string>> r = parse_helper_command(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code, Code::kUsage) << bad;
    }
  }
}

TEST(HelperCommandTest, LimitsHoldAtTheLimitAndOnePast) {
  std::string words = "p";
  for (std::size_t i = 1; i < kMaxHelperArgs; ++i) words += " a";
  EXPECT_TRUE(parse_helper_command(words));
  EXPECT_FALSE(parse_helper_command(words + " a"));
  EXPECT_TRUE(parse_helper_command("p " + std::string(kMaxHelperArgBytes, 'a')));
  EXPECT_FALSE(parse_helper_command("p " + std::string(kMaxHelperArgBytes + 1, 'a')));
  EXPECT_FALSE(parse_helper_command(std::string(kMaxHelperCommandBytes + 1, 'a')));
}

TEST(EnvNameTest, AcceptsShellNamesOnly) {
  EXPECT_TRUE(is_env_name("OPENAI_API_KEY"));
  EXPECT_TRUE(is_env_name("_x1"));
  EXPECT_TRUE(is_env_name(std::string(kMaxEnvNameLength, 'A')));
  EXPECT_FALSE(is_env_name(std::string(kMaxEnvNameLength + 1, 'A')));
  for (const char* bad : {"", "1A", "A-B", "A B", "A=B"}) EXPECT_FALSE(is_env_name(bad)) << bad;
}

TEST(Rfc3339Test, ReadsUtcOffsetsAndFractionsAndRefusesTheRest) {
  const auto t = parse_rfc3339("2026-12-01T20:55:00Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(rfc3339(*t), "2026-12-01T20:55:00Z");
  EXPECT_EQ(parse_rfc3339("2026-12-01T21:55:00+01:00"), t);
  EXPECT_EQ(parse_rfc3339("2026-12-01t20:55:00.123456z"), t);
  EXPECT_EQ(parse_rfc3339("2026-12-01T19:25:00-01:30"), t);
  for (const char* bad : {"2026-12-01 20:55:00Z", "2026-12-01T20:55:00", "2026-13-01T20:55:00Z",
                          "2026-02-29T00:00:00Z", "2026-12-01T24:00:00Z",
                          "2026-12-01T20:55:00+0100", "2026-12-01T20:55:00.Z", "tomorrow"}) {
    EXPECT_FALSE(parse_rfc3339(bad)) << bad;
  }
  EXPECT_TRUE(parse_rfc3339("2028-02-29T00:00:00Z"));
}

TEST(HelperOutputTest, TakesExactlySecretAndExpiry) {
  const auto now = *parse_rfc3339("2026-12-01T20:00:00Z");
  Result<Token> t =
      parse_helper_output(R"({"secret":"sk-1","expires_at":"2026-12-01T21:00:00Z"})", now);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->secret, "sk-1");
  EXPECT_EQ(rfc3339(*t->expires), "2026-12-01T21:00:00Z");
  Result<Token> forever = parse_helper_output(R"({"secret":"sk-1","expires_at":null})", now);
  ASSERT_TRUE(forever);
  EXPECT_FALSE(forever->expires);
  for (const char* bad :
       {R"({"secret":"sk-1"})", R"({"secret":"sk-1","expires_at":"2026-12-01T21:00:00Z","x":1})",
        R"({"secret":"sk-1","secret":"sk-2","expires_at":null})",
        R"({"secret":"","expires_at":null})", R"({"secret":"a\nb","expires_at":null})",
        R"({"secret":7,"expires_at":null})",
        R"({"secret":"sk-1","expires_at":"2026-12-01T19:00:00Z"})",
        R"({"secret":"sk-1","expires_at":"soon"})", R"(["sk-1"])",
        R"({"secret":"sk-1","expires_at":null} {})", "", "sk-1"}) {
    Result<Token> r = parse_helper_output(bad, now);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code, Code::kSecretHelperFailed) << bad;
      EXPECT_EQ(r.error().message.find("sk-2"), std::string::npos)
          << "the answer's secret is never in a message";
    }
  }
  EXPECT_TRUE(parse_helper_output(
      R"({"secret":")" + std::string(8192, 'k') + R"(","expires_at":null})", now));
  EXPECT_FALSE(parse_helper_output(
      R"({"secret":")" + std::string(8193, 'k') + R"(","expires_at":null})", now));
}

class HelperRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spacectl-helper-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::vector<std::string> helper(std::vector<std::string> args) {
    std::vector<std::string> argv = {TOKEN_HELPER, args[0], counter()};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return argv;
  }
  std::string counter() const { return dir_ + "/count"; }
  int calls() const {
    std::ifstream in(counter());
    int n = 0;
    in >> n;
    return n;
  }
  std::string dir_;
};

TEST_F(HelperRunTest, EachRunIsOneCallAndGivesAFreshToken) {
  Result<Token> first = run_helper(helper({"ok", "600"}));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->secret, "sk-helper-token-1");
  ASSERT_TRUE(first->expires);
  EXPECT_GT(*first->expires, Clock::now() + 590s);
  Result<Token> second = fetch({SourceKind::kHelper, {}, helper({"ok", "600"})});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->secret, "sk-helper-token-2");
  EXPECT_EQ(calls(), 2);
}

TEST_F(HelperRunTest, AHelperThatHangsIsKilledAtTheDeadline) {
  const auto started = std::chrono::steady_clock::now();
  Result<Token> r = run_helper(helper({"hang"}), HelperLimits{1000ms, kMaxHelperOutput});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kSecretHelperFailed);
  EXPECT_NE(r.error().message.find("no answer within 1000 ms"), std::string::npos)
      << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
}

TEST_F(HelperRunTest, AHelperThatPrintsTooMuchIsKilledAtTheCap) {
  Result<Token> r = run_helper(helper({"flood"}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kSecretHelperFailed);
  EXPECT_NE(r.error().message.find("more than 65536 bytes"), std::string::npos)
      << r.error().message;
}

TEST_F(HelperRunTest, BadJsonExtraMembersExpiredTokensAndFailuresAreRefused) {
  for (const char* mode : {"bad-json", "extra", "expired", "fail"}) {
    Result<Token> r = run_helper(helper({mode}));
    ASSERT_FALSE(r) << mode;
    EXPECT_EQ(r.error().code, Code::kSecretHelperFailed) << mode;
    EXPECT_EQ(r.error().message.find("sk-helper-token"), std::string::npos)
        << mode << ": " << r.error().message;
  }
  Result<Token> failed = run_helper(helper({"fail"}));
  ASSERT_FALSE(failed);
  // The exit status is named; the helper's stderr is not repeated (it may echo a token).
  EXPECT_NE(failed.error().message.find("exit 3"), std::string::npos) << failed.error().message;
  EXPECT_EQ(failed.error().message.find("sk-helper-token"), std::string::npos)
      << failed.error().message;
  Result<Token> missing = run_helper({dir_ + "/no-such-helper"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Code::kSecretHelperFailed);
}

TEST(EnvSourceTest, SetUnsetAndEmpty) {
  setenv("SPACECTL_TEST_ENV_SECRET", "sk-env-value", 1);
  Result<Token> t = fetch({SourceKind::kEnv, "SPACECTL_TEST_ENV_SECRET", {}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->secret, "sk-env-value");
  EXPECT_FALSE(t->expires);
  setenv("SPACECTL_TEST_ENV_SECRET", "", 1);
  Result<Token> empty = read_env("SPACECTL_TEST_ENV_SECRET");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, Code::kSecretSourceMissing);
  unsetenv("SPACECTL_TEST_ENV_SECRET");
  Result<Token> unset = read_env("SPACECTL_TEST_ENV_SECRET");
  ASSERT_FALSE(unset);
  EXPECT_EQ(unset.error().code, Code::kSecretSourceMissing);
  EXPECT_FALSE(fetch({SourceKind::kStdin, {}, {}}));
}

TEST(GrantRecordTest, KeepsTheSourceAndNeverAValue) {
  const std::string text = R"({"version":1,"mode":"allowlist","domains":[],"grants":[
    {"id":"a","upstream":"https://x/v1","header":"x-api-key","secret":true},
    {"id":"b","upstream":"https://x/v1","header":"x-api-key","secret":true,"source":{"kind":"env","name":"KEY"},"provider":"anthropic"},
    {"id":"c","upstream":"https://x/v1","header":"authorization","secret":true,"source":{"kind":"helper","argv":["tok","a b"]},
     "expires_at":"2026-12-01T21:00:00Z","obtained_at":"2026-12-01T20:00:00Z"},
    {"id":"d","upstream":"https://x/v1","header":"","secret":false}]})";
  Result<SpaceRecord> r = parse_record(text, "test");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->grants.size(), 4u);
  EXPECT_EQ(r->grants[0].source.kind, SourceKind::kStdin);  // written before sources existed
  EXPECT_EQ(r->grants[1].source.env, "KEY");
  EXPECT_EQ(r->grants[1].provider, "anthropic");
  EXPECT_EQ(r->grants[2].source.helper, (std::vector<std::string>{"tok", "a b"}));
  EXPECT_EQ(r->grants[2].expires_at, "2026-12-01T21:00:00Z");
  EXPECT_EQ(r->grants[3].source.kind, SourceKind::kNone);
  for (const char* bad : {R"({"kind":"env","name":"KEY","value":"sk"})",
                          R"({"kind":"typed","value":"sk"})", R"({"kind":"env","name":"1X"})",
                          R"({"kind":"helper","argv":[]})", R"({"kind":"helper","argv":"tok"})"}) {
    const std::string one =
        std::string(
            R"({"version":1,"mode":"allowlist","domains":[],"grants":[{"id":"b","upstream":"https://x/v1",)") +
        R"("header":"x-api-key","secret":true,"source":)" + bad + "}]}";
    EXPECT_FALSE(parse_record(one, "test")) << bad;
  }
  EXPECT_FALSE(parse_record(
      R"({"version":1,"mode":"allowlist","domains":[],"grants":[{"id":"b","upstream":"https://x/v1",)"
      R"("header":"x-api-key","secret":true,"secret_value":"sk"}]})",
      "test"));
}

TEST(KeeperTimingTest, RenewsAWindowBeforeExpiryOrAtHalfLifeForShortTokens) {
  using serve::renew_at;
  const auto expires = *parse_rfc3339("2026-12-01T21:00:00Z");
  EXPECT_EQ(renew_at(expires, std::nullopt, 600s), expires - 600s);
  EXPECT_EQ(renew_at(expires, expires - 3600s, 600s), expires - 600s);
  EXPECT_EQ(renew_at(expires, expires - 20s, 600s), expires - 10s);
  EXPECT_EQ(serve::keeper_backoff(1, 600s), 30s);
  EXPECT_EQ(serve::keeper_backoff(2, 600s), 60s);
  EXPECT_EQ(serve::keeper_backoff(10, 600s), 600s);
  EXPECT_EQ(serve::keeper_backoff(3, 45s), 45s);
}

}  // namespace
}  // namespace controller::grants
