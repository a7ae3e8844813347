// The escape runner's pure pieces: report parsing, the twin merge, host judgements, the argv.
#include <gtest/gtest.h>

#include <algorithm>

#include "controller/escape_runner.h"
#include "escape-suite/report.h"

namespace controller {
namespace {

using escape::CaseResult;
using escape::Verdict;

CaseResult result(const std::string& id, Verdict v, const std::string& evidence) {
  CaseResult r;
  r.id = id;
  r.group = id.substr(0, id.find('.'));
  r.verdict = v;
  r.evidence = evidence;
  return r;
}

TEST(EscapeReportTest, ParsesTheBinarysOwnJsonFormat) {
  const std::vector<CaseResult> in = {result("fs.readonly-chmod", Verdict::kPass, "EROFS"),
                                      result("net.raw", Verdict::kFail, "socket opened \"quoted\""),
                                      result("res.disk-fill-home", Verdict::kNotApplicable, "no quota")};
  Result<std::vector<CaseResult>> out = parse_suite_report(escape::format_json(in));
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[1].verdict, Verdict::kFail);
  EXPECT_EQ((*out)[1].evidence, "socket opened \"quoted\"");
  EXPECT_EQ((*out)[2].group, "res");
}

TEST(EscapeReportTest, RefusesAReportThatIsNotTheSuites) {
  EXPECT_FALSE(parse_suite_report("not json"));
  EXPECT_FALSE(parse_suite_report(R"({"suite":"other","cases":[]})"));
  EXPECT_FALSE(parse_suite_report(R"({"suite":"escape-suite","cases":[{"id":"a.b","verdict":"OK","evidence":""}]})"));
  EXPECT_FALSE(parse_suite_report(R"({"suite":"escape-suite","cases":[{"id":"a.b","verdict":"PASS"}]})"));
}

TEST(EscapeMergeTest, PassesOnlyWhenTheReleaseRefusedAndTheTwinsControlWorked) {
  const CaseResult rel = result("corridor.metadata-ipv4", Verdict::kInconclusive,
                                "CONNECT 169.254.169.254:443 -> 403; corridor control: CONNECT upstream.test:443 -> 403");
  const CaseResult twin = result("corridor.metadata-ipv4", Verdict::kPass,
                                 "CONNECT 169.254.169.254:443 -> 403; corridor control: CONNECT upstream.test:443 -> 200");
  EXPECT_EQ(merge_twin_result(rel, &twin).verdict, Verdict::kPass);
  EXPECT_EQ(merge_twin_result(rel, nullptr).verdict, Verdict::kInconclusive);
}

TEST(EscapeMergeTest, ANoAnswerFromTheReleaseGatekeeperIsNotARefusal) {
  const CaseResult rel = result("corridor.metadata-ipv4", Verdict::kInconclusive, "CONNECT 169.254.169.254:443: no answer (ETIMEDOUT)");
  const CaseResult twin = result("corridor.metadata-ipv4", Verdict::kPass, "CONNECT ... -> 403; control 200");
  EXPECT_EQ(merge_twin_result(rel, &twin).verdict, Verdict::kInconclusive);
}

TEST(EscapeMergeTest, AFailOnEitherSideIsAFail) {
  const CaseResult ok = result("corridor.loopback-ipv4", Verdict::kPass, "CONNECT 127.0.0.1:443 -> 403");
  const CaseResult bad = result("corridor.loopback-ipv4", Verdict::kFail, "CONNECT 127.0.0.1:443 -> 200: tunnel opened");
  EXPECT_EQ(merge_twin_result(bad, &ok).verdict, Verdict::kFail);
  EXPECT_EQ(merge_twin_result(ok, &bad).verdict, Verdict::kFail);
}

TEST(EscapeMergeTest, TheCorridorControlComesFromTheTwinOnly) {
  const CaseResult rel = result("corridor.allowed-target-works", Verdict::kFail, "corridor control: CONNECT upstream.test:443 -> 403");
  const CaseResult twin = result("corridor.allowed-target-works", Verdict::kPass, "corridor control: CONNECT upstream.test:443 -> 200");
  EXPECT_EQ(merge_twin_result(rel, &twin).verdict, Verdict::kPass);
}

TEST(EscapeMergeTest, OnlyCorridorAndWindowCasesAreTwinCases) {
  EXPECT_TRUE(is_twin_case("corridor.metadata-ipv4"));
  EXPECT_TRUE(is_twin_case("window.no-key"));
  EXPECT_FALSE(is_twin_case("net.other-space-direct"));
  EXPECT_FALSE(is_twin_case("corridorx.y"));
}

constexpr const char* kHardened =
    "Name:\tgatekeeper\nUid:\t65532\t65532\t65532\t65532\nNoNewPrivs:\t1\nSeccomp:\t2\n"
    "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
    "CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n";

TEST(EscapeHostTest, AHardenedGatekeeperStatusPasses) {
  EXPECT_EQ(judge_gatekeeper_status(kHardened).verdict, Verdict::kPass);
}

TEST(EscapeHostTest, EachMissingHardeningFails) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kHardened;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_EQ(judge_gatekeeper_status(with("Seccomp:\t2", "Seccomp:\t0")).verdict, Verdict::kFail);
  EXPECT_EQ(judge_gatekeeper_status(with("NoNewPrivs:\t1", "NoNewPrivs:\t0")).verdict, Verdict::kFail);
  EXPECT_EQ(judge_gatekeeper_status(with("CapEff:\t0000000000000000", "CapEff:\t00000000a80425fb")).verdict, Verdict::kFail);
  EXPECT_EQ(judge_gatekeeper_status(with("CapBnd:\t0000000000000000", "CapBnd:\t0000000000000400")).verdict, Verdict::kFail);
  EXPECT_EQ(judge_gatekeeper_status(with("Uid:\t65532\t65532\t65532\t65532", "Uid:\t0\t0\t0\t0")).verdict, Verdict::kFail);
  EXPECT_EQ(judge_gatekeeper_status("Name:\tx\n").verdict, Verdict::kInconclusive);
}

TEST(EscapeHostTest, LogSizeIsJudgedAtTheCapAndOnePastIt) {
  EXPECT_EQ(judge_log_size(kLogCapBytes + kLogCapSlack, true, true).verdict, Verdict::kPass);
  EXPECT_EQ(judge_log_size(kLogCapBytes + kLogCapSlack + 1, true, true).verdict, Verdict::kFail);
  EXPECT_EQ(judge_log_size(1000, false, false).verdict, Verdict::kInconclusive);  // no flood, nothing proved
  EXPECT_EQ(judge_log_size(1000, true, false).verdict, Verdict::kInconclusive);
}

TEST(EscapeArgvTest, CarriesDigestsAndControlsButNeverTheKey) {
  SuiteControls c;
  c.space_id = "0123456789ab";
  c.secret_sha256 = std::string(64, 'a');
  c.allowed_target = "upstream.test:443";
  c.probe_addresses = {"192.0.2.2:40000", "172.17.0.1:40001"};
  c.exhaustion = true;
  const std::vector<std::string> a = suite_argv(c);
  auto has = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); };
  EXPECT_TRUE(has("--secret-sha256"));
  EXPECT_TRUE(has("--allow-exhaustion"));
  EXPECT_TRUE(has("172.17.0.1:40001"));
  EXPECT_TRUE(has("json"));
  EXPECT_FALSE(has("--unsafe-privileged"));
  EXPECT_FALSE(has("--control-sha256"));  // empty values are not passed
  EXPECT_FALSE(has("--gateway-unowned"));  // only after verify proved the inner bridge addressless
  c.gateway_unowned = true;
  const std::vector<std::string> b = suite_argv(c);
  EXPECT_NE(std::find(b.begin(), b.end(), "--gateway-unowned"), b.end());
}

}  // namespace
}  // namespace controller
