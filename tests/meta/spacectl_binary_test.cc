// What the built spacectl contains: the escape suite's verdict words and report writers, but no
// attacker case (escape-suite/CMakeLists.txt: spacectl links escape_report, whose case
// descriptions come from a catalogue generated at build time, never the cases themselves).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/meta/elf_reader.h"

namespace {

const std::string kSpacectl = GK_BINARY_DIR "/bin/spacectl";

// Mangled names of the suite's case code: the registry (all_cases, run_cases), the group files'
// add_*_cases, the controls the cases lean on, and anything defined in a case file's own
// namespace (escape::(anonymous namespace) in cases_*.cc, which the probes' code also uses).
std::vector<std::string> case_symbols(const std::set<std::string>& symbols) {
  static const std::regex kCase(
      "_ZN6escape(9all_cases|9run_cases|[0-9]+add_[a-z_]+_cases|16corridor_control|11tcp_control|"
      "11dns_control|8add_case)");
  std::vector<std::string> found;
  for (const std::string& name : symbols) {
    if (std::regex_search(name, kCase)) found.push_back(name);
  }
  return found;
}

TEST(SpacectlBinaryTest, TheCaseSymbolCheckFindsTheCasesOfARegistry) {
  // The check itself, on names the escape-suite binary carries.
  const std::set<std::string> suite = {
      "_ZN6escape9all_casesEv", "_ZN6escape18add_identity_casesERSt6vectorINS_4CaseESaIS1_EE",
      "_ZN6escape16corridor_controlERNS_7ContextE", "_ZN6escape12format_sarifEv"};
  EXPECT_EQ(case_symbols(suite).size(), 3u);
  EXPECT_TRUE(case_symbols({"_ZN6escape12verdict_wordENS_7VerdictE"}).empty());
}

TEST(SpacectlBinaryTest, LinksTheReportWritersButNoEscapeCase) {
  const std::string bytes = meta::read_file(kSpacectl);
  ASSERT_FALSE(bytes.empty()) << kSpacectl << " is not built";
  const meta::Elf elf = meta::parse_elf(bytes);
  ASSERT_TRUE(elf.ok) << kSpacectl << ": " << elf.error;
  ASSERT_GT(elf.symbols.size(), 1000u) << kSpacectl << " is stripped; the check needs .symtab";
  // The positive side: the report writers and the verdict words are in (or the absence below
  // would prove nothing about the escape-test it can run).
  bool sarif = false, verdicts = false;
  for (const std::string& name : elf.symbols) {
    sarif = sarif || name.starts_with("_ZN6escape12format_sarif");
    verdicts = verdicts || name.starts_with("_ZN6escape12verdict_word");
  }
  EXPECT_TRUE(sarif) << "spacectl writes SARIF reports: escape::format_sarif must be linked";
  EXPECT_TRUE(verdicts) << "spacectl prints verdict words: escape::verdict_word must be linked";
  for (const std::string& name : case_symbols(elf.symbols)) {
    ADD_FAILURE() << "spacectl links escape-suite case code: " << name;
  }
}

}  // namespace
