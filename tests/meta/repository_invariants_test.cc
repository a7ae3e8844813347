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

#include "policy/decision.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = GK_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cc" || ext == ".h" || ext == ".c" || ext == ".cpp" || ext == ".hpp";
}

bool is_test_source(const fs::path& path) {
  const std::string stem = path.stem().string();
  return stem.ends_with("_test") || path.string().find("/tests/") != std::string::npos;
}

std::vector<fs::path> sources_under(const std::string& folder) {
  std::vector<fs::path> out;
  const fs::path dir = kRoot / folder;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && is_source(entry.path())) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// policy/ is pure: standard library only, no I/O, clocks, threads or randomness
// (docs/decisions.md#policy-is-pure).
TEST(RepositoryInvariantsTest, PolicyIncludesOnlyPureStandardHeaders) {
  const std::set<std::string> allowed = {
      "algorithm", "array",    "cctype",   "charconv", "cstddef",  "cstdint",  "cstdlib",
      "cstring",   "limits",   "map",      "memory",   "optional", "set",      "span",
      "string",    "string_view", "utility", "variant", "vector",  "compare",  "iterator",
      "type_traits", "initializer_list", "functional", "bit", "cassert", "climits", "tuple",
      "unordered_map", "unordered_set", "numeric"};
  const std::regex include_line(R"re(^\s*#\s*include\s*([<"])([^>"]+)[>"])re");
  const auto sources = sources_under("policy");
  ASSERT_FALSE(sources.empty());
  for (const auto& path : sources) {
    if (is_test_source(path)) continue;  // tests may use anything
    std::istringstream lines(read_file(path));
    std::string line;
    while (std::getline(lines, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string header = m[2];
      if (m[1] == "\"") {
        EXPECT_TRUE(header.starts_with("policy/"))
            << path << " includes \"" << header << "\": policy/ includes only policy/ headers";
      } else {
        EXPECT_TRUE(allowed.count(header))
            << path << " includes <" << header << ">: not on policy/'s pure-header list";
      }
    }
  }
}

// llhttp stays strict: no leniency switch anywhere in product code.
TEST(RepositoryInvariantsTest, NoLlhttpLeniencyInProductCode) {
  for (const std::string folder : {"appliance", "controller", "policy", "escape-suite"}) {
    for (const auto& path : sources_under(folder)) {
      EXPECT_EQ(read_file(path).find("llhttp_set_lenient"), std::string::npos)
          << path << " switches an llhttp leniency on";
    }
  }
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

// Argv only, never a shell (DEVELOPERS.md; hooks/before-stop).
TEST(RepositoryInvariantsTest, NoShellOrSystemCallsInProductCode) {
  const std::regex shell(R"re(\b(system|popen)\s*\(|"/bin/sh"|"sh",\s*"-c")re");
  for (const std::string folder : {"appliance", "controller", "policy", "escape-suite"}) {
    for (const auto& path : sources_under(folder)) {
      if (is_test_source(path)) continue;
      const std::string text = read_file(path);
      EXPECT_FALSE(std::regex_search(text, shell)) << path << " calls a shell or system()/popen()";
    }
  }
}

// Every decision word has a test that spells it out (docs/decisions.md#invariants-are-tests).
TEST(RepositoryInvariantsTest, EveryDecisionWordAppearsInATest) {
  std::string tests_text;
  for (const std::string folder : {"policy", "appliance", "controller", "tests"}) {
    for (const auto& path : sources_under(folder)) {
      if (is_test_source(path) && path.filename() != "repository_invariants_test.cc") {
        tests_text += read_file(path);
      }
    }
  }
  for (policy::Word word : policy::all_words()) {
    const std::string text(policy::word_text(word));
    EXPECT_NE(tests_text.find("\"" + text), std::string::npos)
        << "decision word '" << text << "' is spelled out in no test";
  }
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
  const std::set<std::string> allowed = {
      "CMakeLists.txt", "CMakePresets.json", "appliance", "controller", "policy", "image",
      "seccomp-profiles", "escape-suite", "tests", "docs", "README.md", "SECURITY.md", ".ci", "cmake",
      ".git", ".gitignore", "build", ".clang-format", ".cache"};
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
