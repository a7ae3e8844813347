// `grant add` with presets and secret sources, `space start` re-saying them and `grant refresh`,
// through the real spacectl against the recording fake docker: each secret must reach only the
// stdin of the gatekeeper's `control POST /grants`, never an argv, the record or an answer.
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"  // random_hex
#include "controller/testing/fake_docker_fixture.h"

namespace controller::grants {
namespace {

using nlohmann::json;

constexpr const char* kId = "0123456789ab";

class GrantSourceTest : public FakeDockerTest {
 protected:
  std::string record_text() {
    std::ifstream in(dir_ + "/state/spaces/" + kId + ".json");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Every POST /grants body the fake gatekeeper received, in order.
  std::vector<std::string> grant_bodies() {
    std::vector<std::string> out;
    for (const Call& c : calls()) {
      if (!c.argv.empty() && c.argv.back() == "/grants") out.push_back(c.stdin_bytes);
    }
    return out;
  }
  void expect_nowhere_but_stdin(const std::string& secret, const ProcessOutcome& o) {
    EXPECT_EQ(o.out.find(secret), std::string::npos) << "secret in the answer";
    EXPECT_EQ(o.err.find(secret), std::string::npos) << "secret on stderr";
    for (const Call& c : calls()) {
      for (const std::string& a : c.argv) {
        EXPECT_EQ(a.find(secret), std::string::npos) << "secret in argv";
      }
    }
    EXPECT_EQ(record_text().find(secret), std::string::npos) << "secret in the record";
  }
  std::string helper(const std::string& mode_and_args) const {
    return std::string(TOKEN_HELPER) + " " + mode_and_args.substr(0, mode_and_args.find(' ')) +
           " " + dir_ + "/count" +
           (mode_and_args.find(' ') == std::string::npos
                ? ""
                : mode_and_args.substr(mode_and_args.find(' ')));
  }
  int helper_calls() const {
    std::ifstream in(dir_ + "/count");
    int n = 0;
    in >> n;
    return n;
  }
};

TEST_F(GrantSourceTest, EnvSourceWithAPresetSendsTheValueOnStdinAndRecordsOnlyTheName) {
  const std::string secret = "sk-env-" + random_hex(8);
  ProcessOutcome o = spacectl(
      {"grant", "add", kId, "--provider", "anthropic", "--secret-env", "SPACECTL_TEST_KEY"}, "",
      {"env", "SPACECTL_TEST_KEY=" + secret});
  ASSERT_TRUE(o.succeeded()) << o.out << o.err;
  const json answer = json::parse(o.out);
  EXPECT_EQ(answer["grant"], "anthropic");
  EXPECT_EQ(answer["upstream"], "https://api.anthropic.com/v1");
  EXPECT_EQ(answer["header"], "x-api-key");
  EXPECT_EQ(answer["source"], "env");
  const std::vector<std::string> bodies = grant_bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_NE(bodies[0].find(secret), std::string::npos);
  expect_nowhere_but_stdin(secret, o);
  EXPECT_NE(record_text().find("\"SPACECTL_TEST_KEY\""), std::string::npos) << record_text();
}

TEST_F(GrantSourceTest, AnUnsetOrEmptyVariableIsSecretSourceMissingAndNothingIsSent) {
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{"env", "-u", "SPACECTL_TEST_KEY"},
        std::vector<std::string>{"env", "SPACECTL_TEST_KEY="}}) {
    ProcessOutcome o =
        spacectl({"grant", "add", kId, "--provider", "openai", "--secret-env", "SPACECTL_TEST_KEY"},
                 "", env);
    EXPECT_EQ(o.exit_code, 43) << o.out << o.err;
    EXPECT_EQ(json::parse(o.out)["error"]["code"], "secret_source_missing") << o.out;
  }
  EXPECT_TRUE(grant_bodies().empty());
}

TEST_F(GrantSourceTest, ProvidersThatSignRequestsAreRefusedWithTheReason) {
  ProcessOutcome o =
      spacectl({"grant", "add", kId, "--provider", "amazon-bedrock", "--secret-env", "X"});
  EXPECT_EQ(o.exit_code, 45) << o.out << o.err;
  EXPECT_EQ(json::parse(o.out)["error"]["code"], "provider_not_supported");
  EXPECT_NE(o.out.find("SigV4"), std::string::npos) << o.out;
  o = spacectl({"grant", "add", kId, "--provider", "openai", "--upstream", "https://x.example/v1"});
  EXPECT_EQ(o.exit_code, 2) << o.out;
  o = spacectl({"grant", "add", kId, "g", "--upstream", "https://x.example/v1", "--header",
                "x-api-key", "--secret-env", "A", "--secret-helper", "tool"});
  EXPECT_EQ(o.exit_code, 2) << o.out;
  o = spacectl({"grant", "add", kId, "g", "--upstream", "https://x.example/v1", "--header",
                "x-api-key", "--secret-helper", "tool | head"});
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_TRUE(grant_bodies().empty());
  o = spacectl({"grant", "providers"});
  ASSERT_TRUE(o.succeeded()) << o.err;
  EXPECT_EQ(json::parse(o.out)["providers"].size(), 8u);
}

TEST_F(GrantSourceTest, PolicyShowsEachGrantsSourceKindAndExpiryNeverAValue) {
  const std::string env_secret = "sk-env-" + random_hex(8);
  ASSERT_TRUE(
      spacectl({"grant", "add", kId, "--provider", "openai", "--secret-env", "SPACECTL_TEST_KEY"},
               "", {"env", "SPACECTL_TEST_KEY=" + env_secret})
          .succeeded());
  ASSERT_TRUE(spacectl({"grant", "add", kId, "tokens", "--upstream", "https://api.example.com/v1",
                        "--header", "authorization", "--secret-helper", helper("ok 600")})
                  .succeeded());
  ASSERT_TRUE(spacectl({"grant", "add", kId, "typed", "--upstream", "https://api.example.com/v1",
                        "--header", "x-api-key"},
                       "sk-typed-value\n")
                  .succeeded());
  ProcessOutcome o = spacectl({"policy", kId});
  ASSERT_TRUE(o.succeeded()) << o.out << o.err;
  const json sources = json::parse(o.out)["grant_sources"];
  ASSERT_EQ(sources.size(), 3u) << o.out;
  EXPECT_EQ(sources[0]["source"], "env");
  EXPECT_TRUE(sources[0]["expires_at"].is_null());
  EXPECT_EQ(sources[1]["source"], "helper");
  EXPECT_TRUE(sources[1]["expires_at"].is_string());
  EXPECT_EQ(sources[2]["source"], "stdin");
  expect_nowhere_but_stdin(env_secret, o);
  expect_nowhere_but_stdin("sk-helper-token-1", o);
  expect_nowhere_but_stdin("sk-typed-value", o);
}

TEST_F(GrantSourceTest, RefreshRunsTheHelperOnceAndReplacesTheTokenInPlace) {
  ASSERT_TRUE(spacectl({"grant", "add", kId, "tokens", "--upstream", "https://api.example.com/v1",
                        "--header", "authorization", "--secret-helper", helper("ok 600")})
                  .succeeded());
  ProcessOutcome o = spacectl({"grant", "refresh", kId});
  ASSERT_TRUE(o.succeeded()) << o.out << o.err;
  EXPECT_EQ(json::parse(o.out)["refreshed"][0]["id"], "tokens") << o.out;
  EXPECT_EQ(helper_calls(), 2);
  EXPECT_NE(grant_bodies().back().find("sk-helper-token-2"), std::string::npos);
  expect_nowhere_but_stdin("sk-helper-token-2", o);
  // A stdin grant has nothing to read again.
  ASSERT_TRUE(spacectl({"grant", "add", kId, "typed", "--upstream", "https://api.example.com/v1",
                        "--header", "x-api-key"},
                       "sk-typed\n")
                  .succeeded());
  o = spacectl({"grant", "refresh", kId, "typed"});
  EXPECT_EQ(o.exit_code, 2) << o.out;
}

TEST_F(GrantSourceTest, AFailingHelperRefusesTheGrantAndSaysWhy) {
  for (const char* mode : {"fail", "bad-json", "flood", "expired"}) {
    ProcessOutcome o =
        spacectl({"grant", "add", kId, "tokens", "--upstream", "https://api.example.com/v1",
                  "--header", "authorization", "--secret-helper", helper(mode)});
    EXPECT_EQ(o.exit_code, 44) << mode << ": " << o.out << o.err;
    EXPECT_EQ(json::parse(o.out)["error"]["code"], "secret_helper_failed") << o.out;
    EXPECT_EQ(o.out.find("sk-helper-token"), std::string::npos) << o.out;
  }
  EXPECT_TRUE(grant_bodies().empty());
  EXPECT_EQ(record_text().find("tokens"), std::string::npos) << "a refused grant is not remembered";
}

}  // namespace
}  // namespace controller::grants
