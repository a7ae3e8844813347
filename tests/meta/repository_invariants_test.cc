// Repository invariants as tests (docs/decisions.md#invariants-are-tests). Each reads the source
// tree as text.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/meta/invariants.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = GK_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> sources_under(const std::string& folder) { return gk_meta::sources_under(kRoot, folder); }

std::string lines(const gk_meta::Violations& violations) {
  std::string out;
  for (const std::string& v : violations) out += "  " + v + "\n";
  return out;
}

// policy/ is pure: standard library only, no I/O, clocks, threads or randomness, and it links
// nothing (docs/decisions.md#policy-is-pure). planted_tree_test.cc shows each rule turning red.
TEST(RepositoryInvariantsTest, PolicyIncludesOnlyPureStandardHeadersAndLinksNothing) {
  const gk_meta::Violations violations = gk_meta::policy_purity(kRoot);
  EXPECT_TRUE(violations.empty()) << lines(violations);
}

// llhttp stays strict: no leniency switch anywhere in product code.
TEST(RepositoryInvariantsTest, NoLlhttpLeniencyInProductCode) {
  std::size_t files = 0;
  for (const std::string folder : {"appliance", "controller", "policy", "escape-suite"}) {
    for (const auto& path : sources_under(folder)) {
      ++files;
      EXPECT_EQ(read_file(path).find("llhttp_set_lenient"), std::string::npos)
          << path << " switches an llhttp leniency on";
    }
  }
  EXPECT_GT(files, 50u) << "the product folders hold almost no source: the check would be vacuous";
}

// llhttp.c builds its loose state machine unless LLHTTP_STRICT_MODE is set (HTAB, form feed and
// 0x80-0xFF in the target, any byte after CR). The define must stay on the llhttp target;
// llhttp_strict_test.cc proves the built library behaves strictly.
TEST(RepositoryInvariantsTest, LlhttpIsBuiltInStrictMode) {
  const std::string cmake = read_file(kRoot / "cmake" / "Llhttp.cmake");
  const std::regex define(R"re(target_compile_definitions\(\s*deps_llhttp\s+(PRIVATE|PUBLIC)\s+LLHTTP_STRICT_MODE=1\s*\))re");
  EXPECT_TRUE(std::regex_search(cmake, define)) << "cmake/Llhttp.cmake does not build llhttp with LLHTTP_STRICT_MODE=1";
  const std::regex loose(R"re(LLHTTP_STRICT_MODE=0)re");
  EXPECT_FALSE(std::regex_search(cmake, loose)) << "cmake/Llhttp.cmake builds the loose llhttp";
}

// Argv only, never a shell.
TEST(RepositoryInvariantsTest, NoShellOrSystemCallsInProductCode) {
  const gk_meta::Violations violations = gk_meta::shell_calls(kRoot);
  EXPECT_TRUE(violations.empty()) << lines(violations);
}

// Every decision word is asserted by a test (docs/decisions.md#invariants-are-tests).
TEST(RepositoryInvariantsTest, EveryDecisionWordIsAssertedInATest) {
  const gk_meta::Violations violations = gk_meta::untested_decision_words(kRoot);
  EXPECT_TRUE(violations.empty()) << lines(violations);
}

// The appliance starts no program and no process, not even through a raw syscall
// (appliance_binary_test.cc checks the linked symbols and the machine code).
TEST(RepositoryInvariantsTest, ApplianceMakesNoRawExecOrForkSyscall) {
  const gk_meta::Violations violations = gk_meta::raw_exec_syscalls(kRoot);
  EXPECT_TRUE(violations.empty()) << lines(violations);
}

// A number read from text is the whole text or no number: bad input is refused by name, never
// read as 0 or as the digits it starts with (policy/number.h).
TEST(RepositoryInvariantsTest, EveryNumberIsReadThroughTheCheckedParser) {
  const gk_meta::Violations violations = gk_meta::unchecked_number_reads(kRoot);
  EXPECT_TRUE(violations.empty()) << lines(violations);
}

// Each top-level folder says what it owns, what it must never do and how to test it.
TEST(RepositoryInvariantsTest, EveryTopLevelFolderHasAReadme) {
  for (const std::string folder : {"appliance", "controller", "policy", "image", "seccomp-profiles",
                                   "escape-suite", "tests"}) {
    EXPECT_TRUE(fs::exists(kRoot / folder / "README.md")) << folder << "/README.md is missing";
  }
  EXPECT_TRUE(fs::exists(kRoot / "README.md"));
  EXPECT_TRUE(fs::exists(kRoot / "SECURITY.md"));
}

// .ci/run calls exactly the README's test command.
TEST(RepositoryInvariantsTest, CiRunCallsTheReadmeTestCommand) {
  const std::string readme = read_file(kRoot / "README.md");
  const std::string run = read_file(kRoot / ".ci" / "run");
  ASSERT_NE(readme.find(".ci/test"), std::string::npos) << "README.md names no .ci/test command";
  EXPECT_NE(run.find("exec .ci/test\n"), std::string::npos) << ".ci/run does not exec .ci/test";
}

// The top-level layout is fixed (docs/architecture.md#folders).
TEST(RepositoryInvariantsTest, TopLevelLayoutIsTheFixedOne) {
  const std::set<std::string> allowed = {"CMakeLists.txt",
                                         "CMakePresets.json",
                                         "appliance",
                                         "controller",
                                         "policy",
                                         "image",
                                         "seccomp-profiles",
                                         "escape-suite",
                                         "tests",
                                         "docs",
                                         "README.md",
                                         "SECURITY.md",
                                         ".ci",
                                         "cmake",
                                         ".git",
                                         ".gitignore",
                                         "build",
                                         ".clang-format",
                                         ".clang-tidy",
                                         ".cache"};
  for (const auto& entry : fs::directory_iterator(kRoot)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(allowed.count(name)) << "unexpected top-level entry '" << name << "'";
  }
}

// The appliance contains no libgit2 (docs/decisions.md#the-appliance-spawns-nothing): nothing in
// its build mentions it.
TEST(RepositoryInvariantsTest, ApplianceBuildDoesNotMentionLibgit2) {
  const std::string cmake = read_file(kRoot / "appliance" / "CMakeLists.txt");
  EXPECT_EQ(cmake.find("git2"), std::string::npos);
  for (const auto& path : sources_under("appliance")) {
    EXPECT_EQ(read_file(path).find("git2.h"), std::string::npos) << path;
  }
}

}  // namespace
