// SARIF and HTML reports: their structure for a fixed result list, and hostile evidence and
// context (markup, quotes, control bytes, invalid UTF-8) that must stay text in both. The schema
// check and the browser check are in report_tools_test.cc.
#include "escape-suite/report_rich.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "escape-suite/report.h"
#include "policy/json.h"

namespace escape {
namespace {

constexpr std::string_view kHostile = "<script>alert(1)</script><img src=x onerror=y> \"q\" 'a' &amp; \x01\xff\xc3\xa9 ]]>";

std::vector<CaseResult> fixed_results() {
  return {
      {"identity.uid-not-root", "identity", Verdict::kPass, "uid 1000/1000/1000", 1},
      {"corridor.metadata-ipv4", "corridor", Verdict::kFail, "CONNECT 169.254.169.254:443 -> 200", 12},
      {"net.tcp-test-net-1", "net", Verdict::kInconclusive, std::string(kHostile), 1500},
      {"res.no-swap", "res", Verdict::kNotApplicable, "swap accounting is off", 0},
      {"host.verify", "host", Verdict::kPass, "no difference from the hardening spec", 0},
  };
}

ReportContext full_context() {
  ReportContext c;
  c.has_boundary = true;
  c.boundary.space = "3fa9c0d1e2b4";
  c.boundary.gatekeeper = "gk-3fa9c0d1e2b4";
  c.boundary.inner_network = "spacectl-in-3fa9c0d1e2b4";
  c.boundary.outer_network = "spacectl-out-3fa9c0d1e2b4";
  c.boundary.mode = "allowlist";
  c.boundary.allowed = {"api.example.com", std::string(kHostile)};
  c.boundary.grants = {"model"};
  c.host_facts = {{"kernel", "Linux 6.1.0 x86_64"}, {"docker engine", std::string(kHostile)}};
  c.residuals = {"a kernel bug in an allowed syscall is out of reach of every case"};
  c.tool_version = "0.1.0";
  return c;
}

policy::json::Value parse_or_die(const std::string& text) {
  policy::json::Limits limits;
  limits.max_bytes = 8u << 20;
  limits.max_elements = 1u << 20;
  limits.max_depth = 32;
  auto v = policy::json::parse(text, limits);
  EXPECT_TRUE(v.ok()) << (v ? "" : v.error().message);
  return v ? std::move(*v) : policy::json::Value{};
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

TEST(SarifReportTest, HasOneRulePerCaseAndResultsOnlyForFailAndInconclusive) {
  const std::string sarif = format_sarif(fixed_results(), full_context());
  EXPECT_TRUE(is_ascii(sarif));
  const policy::json::Value doc = parse_or_die(sarif);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.find("version")->as_string(), "2.1.0");
  const policy::json::Value& run = doc.find("runs")->items().at(0);
  const auto& rules = run.find("tool")->find("driver")->find("rules")->items();
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[1].find("id")->as_string(), "corridor.metadata-ipv4");
  const auto& results = run.find("results")->items();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].find("ruleId")->as_string(), "corridor.metadata-ipv4");
  EXPECT_EQ(results[0].find("level")->as_string(), "error");
  EXPECT_EQ(results[0].find("ruleIndex")->as_string(), "1");
  EXPECT_EQ(results[1].find("ruleId")->as_string(), "net.tcp-test-net-1");
  EXPECT_EQ(results[1].find("level")->as_string(), "warning");
  EXPECT_EQ(results[1].find("message")->find("text")->as_string().substr(0, 14), "INCONCLUSIVE: ");
}

TEST(SarifReportTest, RunPropertiesCarrySummaryBoundaryAndHostFacts) {
  const policy::json::Value doc = parse_or_die(format_sarif(fixed_results(), full_context()));
  const policy::json::Value* props = doc.find("runs")->items().at(0).find("properties");
  ASSERT_NE(props, nullptr);
  EXPECT_EQ(props->find("summary")->find("fail")->as_string(), "1");
  EXPECT_EQ(props->find("summary")->find("inconclusive")->as_string(), "1");
  EXPECT_EQ(props->find("boundary")->find("mode")->as_string(), "allowlist");
  EXPECT_EQ(props->find("hostFacts")->find("kernel")->as_string(), "Linux 6.1.0 x86_64");
  EXPECT_EQ(props->find("residuals")->items().size(), 1u);
}

TEST(SarifReportTest, WithoutContextHasNoBoundaryOrHostFacts) {
  const policy::json::Value doc = parse_or_die(format_sarif(fixed_results(), ReportContext{}));
  const policy::json::Value* props = doc.find("runs")->items().at(0).find("properties");
  EXPECT_EQ(props->find("boundary"), nullptr);
  EXPECT_EQ(props->find("hostFacts"), nullptr);
}

TEST(SarifReportTest, KnownCaseRuleCarriesThreatTechniqueAndProof) {
  const std::vector<Case> cases = all_cases();
  ASSERT_FALSE(cases.empty());
  const CaseResult r{cases[0].id, cases[0].group, Verdict::kFail, "x", 0};
  const policy::json::Value doc = parse_or_die(format_sarif({r}, ReportContext{}));
  const policy::json::Value& rule = doc.find("runs")->items().at(0).find("tool")->find("driver")->find("rules")->items().at(0);
  EXPECT_EQ(rule.find("shortDescription")->find("text")->as_string(), cases[0].threat);
  EXPECT_EQ(rule.find("fullDescription")->find("text")->as_string(), cases[0].technique);
  EXPECT_NE(rule.find("help")->find("text")->as_string().find(cases[0].proof), std::string::npos);
}

TEST(HtmlReportTest, EscapesHostileEvidenceAndContext) {
  const std::string html = format_html(fixed_results(), full_context());
  EXPECT_TRUE(is_ascii(html));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("onerror=y>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&quot;q&quot; &#39;a&#39; &amp;amp; \\x01\\xff\\xc3\\xa9"), std::string::npos);
}

TEST(HtmlReportTest, FetchesNothingAndNeedsNoScript) {
  // Ids the registry does not know (no case text) and plain evidence: every byte left is ours.
  const std::vector<CaseResult> plain = {{"x.one", "x", Verdict::kPass, "e", 0}, {"y.two", "y", Verdict::kFail, "e", 0}};
  ReportContext context = full_context();
  context.boundary.allowed = {"api.example.com"};
  context.host_facts = {{"kernel", "Linux"}};
  const std::string html = format_html(plain, context);
  EXPECT_NE(html.find("content=\"default-src 'none'; style-src 'unsafe-inline'\""), std::string::npos);
  for (std::string_view banned : {"<script", "<link", "<iframe", "<object", "<embed", " src=", "@import", "href=\"http",
                                  "href=\"//", "url(http", "url(//"})
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  // The only URL is the SVG namespace, which no browser fetches.
  std::size_t n = 0;
  for (std::size_t at = html.find("://"); at != std::string::npos; at = html.find("://", at + 1)) ++n;
  EXPECT_EQ(n, 1u);
  EXPECT_NE(html.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
}

TEST(HtmlReportTest, OneSectionPerGroupWithCountsAndEveryCase) {
  const std::string html = format_html(fixed_results(), full_context());
  for (std::string_view g : {"identity", "corridor", "net", "res", "host"})
    EXPECT_NE(html.find("<section class=\"group\" id=\"group-" + std::string(g) + "\">"), std::string::npos) << g;
  EXPECT_NE(html.find("corridor <span class=\"muted\">(0 passed, 1 failed, 0 inconclusive, 0 not applicable)</span>"),
            std::string::npos);
  for (const CaseResult& r : fixed_results())
    EXPECT_NE(html.find("id=\"case-" + r.id + "\""), std::string::npos) << r.id;
  std::size_t rows = 0;
  for (std::size_t at = html.find("<tr class=\"case "); at != std::string::npos; at = html.find("<tr class=\"case ", at + 1)) ++rows;
  EXPECT_EQ(rows, fixed_results().size());
  EXPECT_NE(html.find("The boundary is NOT proved"), std::string::npos);
}

TEST(HtmlReportTest, DrawsTheBoundaryFromTheContext) {
  const std::string html = format_html(fixed_results(), full_context());
  const std::size_t svg = html.find("<svg");
  ASSERT_NE(svg, std::string::npos);
  const std::string picture = html.substr(svg, html.find("</svg>") - svg);
  for (std::string_view part : {"3fa9c0d1e2b4", "gk-3fa9c0d1e2b4", "spacectl-in-3fa9c0d1e2b4", "spacectl-out-3fa9c0d1e2b4",
                                "corridor :3128", "window :8080", "control 127.0.0.1:9099", "mode allowlist",
                                "api.example.com", "window: grants 1", "model"})
    EXPECT_NE(picture.find(part), std::string::npos) << part;
  EXPECT_NE(html.find("<section id=\"host-facts\">"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"residuals\">"), std::string::npos);
}

// Docker names are long (gk-<id>-outer-network): the picture shows them whole.
TEST(HtmlReportTest, DrawsRealNetworkNamesWhole) {
  ReportContext c = full_context();
  c.boundary.inner_network = "gk-aaf6246cf3c8-inner-network";
  c.boundary.outer_network = "gk-aaf6246cf3c8-outer-network";
  c.boundary.gatekeeper = "gk-aaf6246cf3c8-gatekeeper";
  const std::string html = format_html(fixed_results(), c);
  const std::size_t svg = html.find("<svg");
  const std::string picture = html.substr(svg, html.find("</svg>") - svg);
  for (const std::string& name : {c.boundary.inner_network, c.boundary.outer_network, c.boundary.gatekeeper})
    EXPECT_NE(picture.find(name), std::string::npos) << name;
}

TEST(HtmlReportTest, WithoutContextDrawsNoBoundaryAndShowsNoFacts) {
  const std::string html = format_html(fixed_results(), ReportContext{});
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("host-facts"), std::string::npos);
  EXPECT_EQ(html.find("residuals"), std::string::npos);
}

TEST(HtmlReportTest, AllPassedSaysTheBoundaryHeld) {
  const std::vector<CaseResult> ok = {{"identity.uid-not-root", "identity", Verdict::kPass, "uid 1000", 1}};
  EXPECT_NE(format_html(ok, ReportContext{}).find("The boundary held"), std::string::npos);
}

TEST(RichReportTest, FormatReportDispatchesSarifAndHtml) {
  const ReportContext c = full_context();
  EXPECT_EQ(format_report(Format::kSarif, fixed_results(), c), format_sarif(fixed_results(), c));
  EXPECT_EQ(format_report(Format::kHtml, fixed_results(), c), format_html(fixed_results(), c));
}

TEST(RichReportTest, HostFactsAndResidualsComeFromTheRunnersFacts) {
  ReportContext c;
  add_facts(c, {{"kernel", "6.1"}, {"residual.disk", "volumes have no size limit"}, {"engine", "20.10"}});
  EXPECT_EQ(c.host_facts, (std::vector<std::pair<std::string, std::string>>{{"kernel", "6.1"}, {"engine", "20.10"}}));
  EXPECT_EQ(c.residuals, std::vector<std::string>{"disk: volumes have no size limit"});
  // The facts overload gives SARIF and HTML the same sections.
  const std::string html = format_report(Format::kHtml, fixed_results(), std::vector<Fact>{{"kernel", "6.1"}, {"residual.disk", "no limit"}});
  EXPECT_NE(html.find("<section id=\"host-facts\">"), std::string::npos);
  EXPECT_NE(html.find("disk: no limit"), std::string::npos);
  const std::string sarif = format_report(Format::kSarif, fixed_results(), std::vector<Fact>{{"kernel", "6.1"}});
  EXPECT_NE(sarif.find("\"hostFacts\":{\"kernel\":\"6.1\"}"), std::string::npos);
}

TEST(RichReportTest, ContextFromOptionsNeverShowsTheWindowKey) {
  Options o;
  o.space_id = "3fa9c0d1e2b4";
  o.window_base = "http://gatekeeper:8080/k/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  o.allowed_target = "upstream.test:443";
  o.window_grant = "escape-test";
  const ReportContext c = context_from_options(o);
  EXPECT_EQ(c.boundary.allowed, std::vector<std::string>{"upstream.test"});
  const std::string html = format_html(fixed_results(), c);
  const std::string sarif = format_sarif(fixed_results(), c);
  EXPECT_EQ(html.find("0123456789abcdef0123"), std::string::npos);
  EXPECT_EQ(sarif.find("0123456789abcdef0123"), std::string::npos);
}

}  // namespace
}  // namespace escape
