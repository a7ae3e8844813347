// The rich reports against the tools their readers use: the SARIF file against the official OASIS
// SARIF 2.1.0 JSON schema (ajv, from build/report-tools, installed by .ci/setup), the HTML file in
// Debian's headless Chromium with the network cut (it renders, every case is in the DOM, nothing
// hostile became an element) and a screenshot kept in <build>/artifacts/.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "escape-suite/report.h"
#include "escape-suite/report_rich.h"
#include "tests/support/environment.h"

namespace escape {
namespace {

const std::string kTools = std::string(GK_SOURCE_DIR) + "/build/report-tools/node_modules";
const std::string kValidator = std::string(GK_SOURCE_DIR) + "/tests/report-tools/validate-sarif.js";
const std::string kArtifacts = std::string(GK_BINARY_DIR) + "/artifacts";

constexpr std::string_view kHostile = "<script>alert(1)</script><img src=x onerror=y> \"q\" 'a' \x01\xff\xc3\xa9";

bool exists(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

bool on_path(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Every case of the registry, with the verdicts in turn, hostile evidence on every fourth, and the
// runner's host checks: what a full run reports.
std::vector<CaseResult> every_case() {
  std::vector<CaseResult> out;
  const Verdict verdicts[] = {Verdict::kPass, Verdict::kFail, Verdict::kInconclusive, Verdict::kNotApplicable};
  std::size_t i = 0;
  for (const Case& c : all_cases()) {
    const Verdict v = verdicts[i % 4];
    out.push_back({c.id, c.group, v, i % 4 == 3 ? std::string(kHostile) : "evidence of " + c.id, static_cast<std::int64_t>(i)});
    ++i;
  }
  out.push_back({"host.verify", "host", Verdict::kPass, "no difference from the hardening spec", 3});
  out.push_back({"host.key-not-in-logs", "host", Verdict::kFail, std::string(kHostile), 4});
  return out;
}

ReportContext context() {
  ReportContext c;
  c.has_boundary = true;
  c.boundary.space = "3fa9c0d1e2b4";
  c.boundary.gatekeeper = "spacectl-gk-3fa9c0d1e2b4";
  c.boundary.inner_network = "spacectl-in-3fa9c0d1e2b4";
  c.boundary.outer_network = "spacectl-out-3fa9c0d1e2b4";
  c.boundary.mode = "allowlist";
  c.boundary.allowed = {"api.example.com", "registry.npmjs.org", "github.com", "pypi.org", "files.pythonhosted.org"};
  c.boundary.grants = {"model", std::string(kHostile)};
  c.host_facts = {{"kernel", "Linux 6.1.0 x86_64"}, {"docker engine", std::string(kHostile)}};
  c.residuals = {"kernel bugs reachable through an allowed syscall are outside what a case can prove"};
  c.tool_version = "0.1.0";
  return c;
}

class ReportToolsTest : public ::testing::Test {
 protected:
  void SetUp() override { ::mkdir(kArtifacts.c_str(), 0755); }
};

TEST_F(ReportToolsTest, SarifOfEveryCaseValidatesAgainstTheOasisSchema) {
  GK_REQUIRE(on_path("node") && exists(kTools + "/ajv/package.json") &&
                 exists(kTools + "/schemastore/schemas/json/sarif-2.1.0.json"),
             "node and build/report-tools (run .ci/setup) are needed");
  const std::string file = kArtifacts + "/escape-report.sarif";
  write(file, format_sarif(every_case(), context()));
  EXPECT_EQ(run("node " + kValidator + " " + kTools + " " + file), 0);
  const std::string bare = kArtifacts + "/escape-report-bare.sarif";
  write(bare, format_sarif(every_case(), ReportContext{}));
  EXPECT_EQ(run("node " + kValidator + " " + kTools + " " + bare), 0);
}

// The validator can say no: a file that breaks the schema in two known ways is refused.
TEST_F(ReportToolsTest, SchemaValidatorRefusesSarifThatBreaksTheSchema) {
  GK_REQUIRE(on_path("node") && exists(kTools + "/ajv/package.json"), "node and build/report-tools are needed");
  std::string wrong_version = format_sarif(every_case(), context());
  wrong_version.replace(wrong_version.find("\"version\":\"2.1.0\""), 17, "\"version\":\"2.0.0\"");
  write(kArtifacts + "/broken-version.sarif", wrong_version);
  EXPECT_EQ(run("node " + kValidator + " " + kTools + " " + kArtifacts + "/broken-version.sarif 2>/dev/null"), 1);
  std::string wrong_level = format_sarif(every_case(), context());
  wrong_level.replace(wrong_level.find("\"level\":\"error\""), 15, "\"level\":\"fatal\"");
  write(kArtifacts + "/broken-level.sarif", wrong_level);
  EXPECT_EQ(run("node " + kValidator + " " + kTools + " " + kArtifacts + "/broken-level.sarif 2>/dev/null"), 1);
}

// Chromium as root needs --no-sandbox; the page is our own file. With root it runs in a fresh
// network namespace (unshare --net), so a fetch the page tried could not succeed.
std::string chromium_command() {
  std::string prefix = gk_test::running_as_root() && on_path("unshare") ? "unshare --net " : "";
  return prefix + "chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                  "--hide-scrollbars --user-data-dir=" + kArtifacts + "/chromium-profile ";
}

TEST_F(ReportToolsTest, HtmlRendersInHeadlessChromiumWithEveryCase) {
  GK_REQUIRE(on_path("chromium"), "Debian's chromium is needed (run .ci/setup)");
  const std::vector<CaseResult> results = every_case();
  const std::string page = kArtifacts + "/escape-report.html";
  write(page, format_html(results, context()));
  const std::string dom_file = kArtifacts + "/escape-report.dom.html";
  ASSERT_EQ(run(chromium_command() + "--dump-dom file://" + page + " > " + dom_file + " 2>" + kArtifacts + "/chromium-dom.log"), 0)
      << slurp(kArtifacts + "/chromium-dom.log");
  const std::string dom = slurp(dom_file);
  ASSERT_FALSE(dom.empty());
  // The browser parsed one row per case, each with its anchor, and hostile evidence stayed text.
  std::size_t rows = 0;
  for (std::size_t at = dom.find("<tr class=\"case "); at != std::string::npos; at = dom.find("<tr class=\"case ", at + 1)) ++rows;
  EXPECT_EQ(rows, results.size());
  for (const CaseResult& r : results) EXPECT_NE(dom.find("id=\"case-" + r.id + "\""), std::string::npos) << r.id;
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_NE(dom.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(dom.find("<svg"), std::string::npos);

  const std::string shot = kArtifacts + "/escape-report.png";
  ::unlink(shot.c_str());
  ASSERT_EQ(run(chromium_command() + "--window-size=1280,2200 --screenshot=" + shot + " file://" + page + " >" + kArtifacts +
                "/chromium-shot.log 2>&1"),
            0)
      << slurp(kArtifacts + "/chromium-shot.log");
  const std::string png = slurp(shot);
  ASSERT_GT(png.size(), 20000u) << "a blank page compresses to a few kilobytes";
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
}  // namespace escape
