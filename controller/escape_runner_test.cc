// The escape runner's pure pieces: report parsing, the twin merge, host judgements, the argv.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "controller/escape_facts.h"
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

// Everything in the report comes out of the space: a wrong type is a refused report (it used to
// throw out of nlohmann's value() and end as `internal`), and so is an id outside the alphabet.
TEST(EscapeReportTest, RefusesAWrongTypedFieldAsARefusedReport) {
  const char* refused[] = {
      R"({"suite":"escape-suite","version":1,"cases":[{"id":"fs.a","group":7,"verdict":"PASS","evidence":""}]})",
      R"({"suite":"escape-suite","version":1,"cases":[{"id":"fs.a","verdict":"PASS","evidence":"","duration_ms":"1"}]})",
      R"({"suite":"escape-suite","version":1,"cases":[{"id":"fs.a","verdict":"PASS","evidence":"","extra":1}]})",
      R"({"suite":"escape-suite","version":"1","cases":[]})",
      R"({"suite":"escape-suite","version":1,"summary":[],"cases":[]})",
      R"({"suite":"escape-suite","version":1,"cases":[{"id":"fs.a\n\u001b[2KPASS","verdict":"PASS","evidence":""}]})",
      R"({"suite":"escape-suite","version":1,"cases":[{"id":"fs.a","group":"net","verdict":"PASS","evidence":""}]})",
  };
  for (const char* text : refused) {
    Result<std::vector<CaseResult>> r = parse_suite_report(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, Code::kCommandFailed) << text;
    EXPECT_NE(r.error().message.find("refused"), std::string::npos);
  }
}

TEST(EscapeReportTest, ReportedIdsMustBeExactlyTheHostsList) {
  const std::vector<std::string> listed = {"fs.a", "fs.b", "net.c"};
  const std::vector<CaseResult> all = {result("fs.a", Verdict::kPass, ""), result("fs.b", Verdict::kPass, ""),
                                       result("net.c", Verdict::kPass, "")};
  EXPECT_TRUE(check_reported_ids(all, listed));
  // "2 cases: 2 passed" from a replaced binary.
  EXPECT_FALSE(check_reported_ids({all[0], all[1]}, listed));
  std::vector<CaseResult> dup = all;
  dup.push_back(all[0]);
  EXPECT_FALSE(check_reported_ids(dup, listed));
  std::vector<CaseResult> unknown = all;
  unknown[2] = result("net.forged", Verdict::kPass, "");
  EXPECT_FALSE(check_reported_ids(unknown, listed));
}

TEST(EscapeReportTest, ListedIdsAreTheUnindentedIdLines) {
  const std::string list = "fs.a\n  threat:    x y\n  technique: t\n  proof:     p\nnet.b-c\n  threat: q\n2 cases\n";
  EXPECT_EQ(listed_ids(list), (std::vector<std::string>{"fs.a", "net.b-c"}));
}

TEST(EscapeQuietTest, OnlyTheSuiteBesideInitAndItsCommandIsQuiet) {
  const std::string top = "PID                 PPID                COMMAND\n"
                          "100                 90                  /sbin/docker-init -- sleep 2147483647\n"
                          "101                 100                 sleep 2147483647\n"
                          "200                 80                  /tmp/escape-suite-ab/escape-suite --format json\n"
                          "201                 200                 /tmp/escape-suite-ab/escape-suite --format json\n";
  Result<std::vector<SpaceProcess>> quiet = parse_top(top);
  ASSERT_TRUE(quiet) << quiet.error().message;
  ASSERT_EQ(quiet->size(), 4u);
  EXPECT_EQ((*quiet)[3].ppid, 200);
  EXPECT_EQ(judge_quiet({*quiet, *quiet}, "/tmp/escape-suite-ab/escape-suite", 100, "sleep 2147483647").verdict, Verdict::kPass);
  // A loop the agent left running (exec'd from outside, or a child of the command) is named.
  Result<std::vector<SpaceProcess>> busy = parse_top(top + "300                 80                  sh -c while :; do cp x y; done\n");
  ASSERT_TRUE(busy);
  const escape::Outcome o = judge_quiet({*quiet, *busy}, "/tmp/escape-suite-ab/escape-suite", 100, "sleep 2147483647");
  EXPECT_EQ(o.verdict, Verdict::kInconclusive);
  EXPECT_NE(o.evidence.find("pid 300"), std::string::npos) << o.evidence;
  Result<std::vector<SpaceProcess>> child = parse_top(top + "301                 101                 sh\n");
  ASSERT_TRUE(child);
  EXPECT_EQ(judge_quiet({*child}, "/tmp/escape-suite-ab/escape-suite", 100, "sleep 2147483647").verdict, Verdict::kInconclusive);
  // A process named like the suite but below the command is not the suite.
  Result<std::vector<SpaceProcess>> mimic = parse_top(top + "302                 101                 /tmp/escape-suite-ab/escape-suite\n");
  ASSERT_TRUE(mimic);
  EXPECT_EQ(judge_quiet({*mimic}, "/tmp/escape-suite-ab/escape-suite", 100, "sleep 2147483647").verdict, Verdict::kInconclusive);
  EXPECT_EQ(judge_quiet({}, "/x", 1, "").verdict, Verdict::kInconclusive);
  EXPECT_FALSE(parse_top("PID PPID COMMAND\nabc 1 x\n"));
}

// The logs check used to search only what run_process kept of stderr (its last 16 KiB); a key
// written early in a long log was then never seen. The finder sees a match wherever it lies,
// also across two chunks.
TEST(EscapeLogTest, AKeyAnywhereInAStreamIsFoundAlsoAcrossChunks) {
  const std::string key = "escfake0123456789abcdef";
  StreamFinder early(key);
  early.feed("start " + key + " more\n");
  for (int i = 0; i < 100; ++i) early.feed(std::string(65536, 'x'));
  EXPECT_TRUE(early.found());
  StreamFinder split(key);
  split.feed(std::string(70000, 'y') + key.substr(0, 7));
  split.feed(key.substr(7) + "\n");
  EXPECT_TRUE(split.found());
  StreamFinder none(key);
  for (int i = 0; i < 10; ++i) none.feed(key.substr(0, 10) + std::string(100, 'z'));
  EXPECT_FALSE(none.found());
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
  EXPECT_EQ(std::find(b.begin(), b.end(), "--engine"), b.end());  // Docker: the suite's defaults
  EXPECT_EQ(std::find(b.begin(), b.end(), "--resolver"), b.end());
  c.podman = true;
  const std::vector<std::string> p = suite_argv(c);
  const auto engine = std::find(p.begin(), p.end(), "--engine");
  ASSERT_NE(engine, p.end());
  EXPECT_EQ(*(engine + 1), "podman");
  const auto resolver = std::find(p.begin(), p.end(), "--resolver");
  ASSERT_NE(resolver, p.end());
  EXPECT_EQ(*(resolver + 1), "none");
}

// The suite's progress lines come from the space: only listed ids, once each, with a verdict
// word, and lines split across reads; a forged id, a repeat, junk and an overlong line are skipped.
TEST(EscapeProgressTest, OnlyListedCasesOnceWithAVerdictWordCount) {
  ProgressLines lines({"fs.root-read-only", "net.no-default-route"});
  std::vector<std::string> seen;
  const auto add = [&](const std::string& id, const std::string& verdict) {
    seen.push_back(id + "=" + verdict);
  };
  lines.feed("case fs.root-read-only PA", add);
  EXPECT_TRUE(seen.empty());  // not a whole line yet
  lines.feed(
      "SS\ncase fs.root-read-only FAIL\ncase host.forged PASS\ncase net.no-default-route "
      "MAYBE\nnoise\n",
      add);
  lines.feed("case " + std::string(300, 'x') + " PASS\ncase net.no-default-route N/A\n", add);
  EXPECT_EQ(seen, (std::vector<std::string>{"fs.root-read-only=PASS", "net.no-default-route=N/A"}));
  SuiteControls c;
  const std::vector<std::string> quiet = suite_argv(c);
  EXPECT_EQ(std::count(quiet.begin(), quiet.end(), "--progress"), 0);
  c.progress = true;
  const std::vector<std::string> a = suite_argv(c);
  EXPECT_EQ(std::count(a.begin(), a.end(), "--progress"), 1);
}

TEST(EscapeFactsTest, FieldsSplitBoundedAndPadded) {
  EXPECT_EQ(split_fields("20.10|1.1.5|6.1\n", 3), (std::vector<std::string>{"20.10", "1.1.5", "6.1"}));
  EXPECT_EQ(split_fields("a", 3), (std::vector<std::string>{"a", "", ""}));
  EXPECT_EQ(split_fields("a|b|c|d", 2), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split_fields(std::string(500, 'x'), 1)[0].size(), 200u);
}

TEST(EscapeFactsTest, ResidualsNameTheKnownGaps) {
  std::set<std::string> keys;
  for (const escape::Fact& f : residual_facts()) keys.insert(f.key);
  for (const char* k : {"residual.allowed-names", "residual.tmp-exec", "residual.disk"}) EXPECT_EQ(keys.count(k), 1u) << k;
}

TEST(EscapeBoundaryTest, ComesFromTheSpacesPolicyAnswer) {
  const escape::Boundary b = boundary_from_policy("0123456789ab", "gk", "in", "out",
                                                  R"({"mode":"allowlist","domains":["api.example.com","pypi.org"],"grants":["model"]})");
  EXPECT_EQ(b.space, "0123456789ab");
  EXPECT_EQ(b.gatekeeper, "gk");
  EXPECT_EQ(b.inner_network, "in");
  EXPECT_EQ(b.outer_network, "out");
  EXPECT_EQ(b.mode, "allowlist");
  EXPECT_EQ(b.allowed, (std::vector<std::string>{"api.example.com", "pypi.org"}));
  EXPECT_EQ(b.grants, std::vector<std::string>{"model"});
}

TEST(EscapeBoundaryTest, MalformedOrUnknownAnswersAreDrawnAsUnknown) {
  EXPECT_EQ(boundary_from_policy("0123456789ab", "gk", "in", "out", "not json").mode, "");
  const escape::Boundary b = boundary_from_policy("0123456789ab", "gk", "in", "out",
                                                  R"({"mode":"everything","domains":"x","grants":[1,"g"]})");
  EXPECT_EQ(b.mode, "");
  EXPECT_TRUE(b.allowed.empty());
  EXPECT_EQ(b.grants, std::vector<std::string>{"g"});
}

TEST(EscapeBoundaryTest, NamesAreBoundedInCountAndLength) {
  std::string doc = R"({"mode":"open","domains":[)";
  for (std::size_t i = 0; i <= escape::kMaxContextItems; ++i) doc += std::string(i > 0 ? "," : "") + "\"" + std::string(300, 'a') + "\"";
  doc += "]}";
  const escape::Boundary b = boundary_from_policy("0123456789ab", "gk", "in", "out", doc);
  EXPECT_EQ(b.allowed.size(), escape::kMaxContextItems);
  EXPECT_EQ(b.allowed[0].size(), escape::kMaxContextText);
}

}  // namespace
}  // namespace controller
