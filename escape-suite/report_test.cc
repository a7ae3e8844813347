// The report formats are a contract with CI systems: exact bytes for a fixed result list, and
// hostile evidence text (markup, quotes, control bytes, non-ASCII) escaped in every format.
#include "escape-suite/report.h"

#include <gtest/gtest.h>

namespace escape {
namespace {

std::vector<CaseResult> fixed_results() {
  return {
      {"identity.uid-not-root", "identity", Verdict::kPass, "uid 1000/1000/1000", 1},
      {"corridor.metadata-ipv4", "corridor", Verdict::kFail, "CONNECT 169.254.169.254:443 -> 200", 12},
      {"net.tcp-test-net-1", "net", Verdict::kInconclusive, "tcp control failed", 1500},
      {"res.no-swap", "res", Verdict::kNotApplicable, "swap accounting is off", 0},
  };
}

TEST(ReportTest, TextIsOneLinePerCaseAndASummary) {
  EXPECT_EQ(format_text(fixed_results()),
            "PASS         identity.uid-not-root  uid 1000/1000/1000\n"
            "FAIL         corridor.metadata-ipv4  CONNECT 169.254.169.254:443 -> 200\n"
            "INCONCLUSIVE net.tcp-test-net-1  tcp control failed\n"
            "N/A          res.no-swap  swap accounting is off\n"
            "4 cases: 1 passed, 1 failed, 1 inconclusive, 1 not applicable\n");
}

TEST(ReportTest, JsonHasSummaryAndCases) {
  EXPECT_EQ(format_json(fixed_results()),
            "{\"suite\":\"escape-suite\",\"version\":1,\"summary\":{\"total\":4,\"pass\":1,\"fail\":1,"
            "\"inconclusive\":1,\"not_applicable\":1},\"cases\":["
            "{\"id\":\"identity.uid-not-root\",\"group\":\"identity\",\"verdict\":\"PASS\","
            "\"evidence\":\"uid 1000/1000/1000\",\"duration_ms\":1},"
            "{\"id\":\"corridor.metadata-ipv4\",\"group\":\"corridor\",\"verdict\":\"FAIL\","
            "\"evidence\":\"CONNECT 169.254.169.254:443 -> 200\",\"duration_ms\":12},"
            "{\"id\":\"net.tcp-test-net-1\",\"group\":\"net\",\"verdict\":\"INCONCLUSIVE\","
            "\"evidence\":\"tcp control failed\",\"duration_ms\":1500},"
            "{\"id\":\"res.no-swap\",\"group\":\"res\",\"verdict\":\"N/A\","
            "\"evidence\":\"swap accounting is off\",\"duration_ms\":0}]}\n");
}

TEST(ReportTest, TapMarksFailAndInconclusiveNotOkAndNaAsSkip) {
  EXPECT_EQ(format_tap(fixed_results()),
            "TAP version 13\n1..4\n"
            "ok 1 - identity.uid-not-root\n  ---\n  verdict: PASS\n  evidence: \"uid 1000/1000/1000\"\n  ...\n"
            "not ok 2 - corridor.metadata-ipv4\n  ---\n  verdict: FAIL\n"
            "  evidence: \"CONNECT 169.254.169.254:443 -> 200\"\n  ...\n"
            "not ok 3 - net.tcp-test-net-1\n  ---\n  verdict: INCONCLUSIVE\n"
            "  evidence: \"tcp control failed\"\n  ...\n"
            "ok 4 - res.no-swap # SKIP swap accounting is off\n");
}

TEST(ReportTest, JunitMapsVerdictsToFailureErrorSkipped) {
  EXPECT_EQ(format_junit(fixed_results()),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"escape-suite\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"1.513\">\n"
            "  <testsuite name=\"escape-suite\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"1.513\">\n"
            "    <testcase classname=\"escape.identity\" name=\"identity.uid-not-root\" time=\"0.001\">"
            "<system-out>uid 1000/1000/1000</system-out></testcase>\n"
            "    <testcase classname=\"escape.corridor\" name=\"corridor.metadata-ipv4\" time=\"0.012\">"
            "<failure type=\"FAIL\" message=\"CONNECT 169.254.169.254:443 -&gt; 200\"/></testcase>\n"
            "    <testcase classname=\"escape.net\" name=\"net.tcp-test-net-1\" time=\"1.500\">"
            "<error type=\"INCONCLUSIVE\" message=\"tcp control failed\"/></testcase>\n"
            "    <testcase classname=\"escape.res\" name=\"res.no-swap\" time=\"0.000\">"
            "<skipped message=\"swap accounting is off\"/></testcase>\n"
            "  </testsuite>\n</testsuites>\n");
}

constexpr char kHostileBytes[] = "</failure><x a=\"1\" b='2'>&amp;\n\r\t\x01\x7f\xc3\xa9]]>\\";
const std::string kHostile(kHostileBytes, sizeof kHostileBytes - 1);

TEST(ReportTest, JunitEscapesHostileEvidence) {
  const std::vector<CaseResult> r = {{"fs.x", "fs", Verdict::kFail, kHostile, 0}};
  const std::string xml = format_junit(r);
  EXPECT_NE(xml.find("message=\"&lt;/failure&gt;&lt;x a=&quot;1&quot; b=&apos;2&apos;&gt;&amp;amp;"
                     "\\x0a\\x0d\\x09\\x01\\x7f\\xc3\\xa9]]&gt;\\\\\"/>"),
            std::string::npos)
      << xml;
  for (const char c : xml) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u < 0x7f)) << "byte " << int(u);
  }
}

TEST(ReportTest, TextAndTapKeepOneLinePerCaseWithHostileEvidence) {
  const std::vector<CaseResult> r = {{"fs.x", "fs", Verdict::kNotApplicable, kHostile, 0}};
  const std::string text = format_text(r);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  const std::string tap = format_tap(r);
  EXPECT_EQ(std::count(tap.begin(), tap.end(), '\n'), 3);  // version, plan, one test line
}

// A case id is printed in every format: one holding a newline and a terminal escape must not
// start a line of its own nor reach the terminal raw.
TEST(ReportTest, TextAndTapEscapeAHostileId) {
  const std::vector<CaseResult> r = {{"fs.x\n\x1b[2KPASS         fs.all", "fs", Verdict::kFail, "e", 0}};
  for (const std::string& out : {format_text(r), format_tap(r)}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find("\nPASS"), std::string::npos) << out;
    EXPECT_NE(out.find("fs.x\\x0a\\x1b[2KPASS"), std::string::npos) << out;
  }
}

TEST(ReportTest, JsonEscapesHostileEvidence) {
  const std::vector<CaseResult> r = {{"fs.x", "fs", Verdict::kFail, "a\"b\\c\nd", 0}};
  EXPECT_NE(format_json(r).find("\"evidence\":\"a\\\"b\\\\c\\nd\""), std::string::npos);
}

TEST(ReportTest, ExitCodeIsZeroOnlyWhenEveryCasePassedOrIsNaWithAReason) {
  EXPECT_EQ(exit_code({{"a", "a", Verdict::kPass, "x", 0}, {"b", "b", Verdict::kNotApplicable, "why", 0}}), 0);
  EXPECT_EQ(exit_code({{"b", "b", Verdict::kNotApplicable, "", 0}}), 1);
  EXPECT_EQ(exit_code({{"a", "a", Verdict::kInconclusive, "x", 0}}), 1);
  EXPECT_EQ(exit_code({{"a", "a", Verdict::kFail, "x", 0}}), 1);
  EXPECT_EQ(exit_code({}), 1);
}

TEST(ReportTest, EvidenceIsBoundedAtTheLimit) {
  EXPECT_EQ(bound_evidence(std::string(kMaxEvidenceBytes, 'a')).size(), kMaxEvidenceBytes);
  const std::string cut = bound_evidence(std::string(kMaxEvidenceBytes + 1, 'a'));
  EXPECT_EQ(cut.size(), kMaxEvidenceBytes);
  EXPECT_NE(cut.find("[truncated]"), std::string::npos);
}

TEST(ReportTest, HostFactsAppearInEveryFormat) {
  const std::vector<CaseResult> results = {{"res.core-limit-zero", "res", Verdict::kPass, "0/0", 1}};
  const std::vector<Fact> facts = {{"engine", "20.10.24"}, {"residual.tmp-exec", "/tmp <is> \"exec\""}};
  const std::string text = format_report(Format::kText, results, facts);
  EXPECT_EQ(text.rfind("Host facts\n  engine: 20.10.24\n", 0), 0u) << text;
  EXPECT_NE(text.find("1 cases: 1 passed"), std::string::npos);
  const std::string json = format_report(Format::kJson, results, facts);
  EXPECT_NE(json.find("\"host_facts\":{\"engine\":\"20.10.24\",\"residual.tmp-exec\":\"/tmp <is> \\\"exec\\\"\"},\"summary\":"),
            std::string::npos) << json;
  const std::string junit = format_report(Format::kJunit, results, facts);
  EXPECT_NE(junit.find("<properties>\n      <property name=\"engine\" value=\"20.10.24\"/>\n"), std::string::npos) << junit;
  EXPECT_NE(junit.find("value=\"/tmp &lt;is&gt; &quot;exec&quot;\""), std::string::npos) << junit;
  const std::string tap = format_report(Format::kTap, results, facts);
  EXPECT_EQ(tap.rfind("TAP version 13\n1..1\n# host engine: 20.10.24\n", 0), 0u) << tap;
  // Without facts the report is the plain one.
  EXPECT_EQ(format_report(Format::kJson, results, std::vector<Fact>{}), format_report(Format::kJson, results));
}

}  // namespace
}  // namespace escape
