// Each repository invariant run on a planted checkout that breaks it on purpose: the check must
// name the broken file. The planted checkout sits under a folder called tests/ (as a checkout in
// /home/me/tests/ would), which must not make every file count as test code. Every planted tree
// also gets a clean twin, so a check that refuses everything fails too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "policy/decision.h"
#include "tests/meta/invariants.h"

namespace fs = std::filesystem;

namespace {

bool mentions(const gk_meta::Violations& violations, const std::string& what) {
  for (const std::string& v : violations) {
    if (v.find(what) != std::string::npos) return true;
  }
  return false;
}

std::string all(const gk_meta::Violations& violations) {
  std::string out;
  for (const std::string& v : violations) out += "  " + v + "\n";
  return out;
}

class PlantedTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gk-planted-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    base_ = pattern;
    root_ = base_ / "tests" / "checkout";  // "/tests/" in the absolute path, on purpose
    fs::create_directories(root_);
    plant("policy/CMakeLists.txt", "add_library(policy STATIC clean.cc)\n");
    plant("policy/clean.cc", "#include <string>\n#include \"policy/clean.h\"\n");
  }
  void TearDown() override { fs::remove_all(base_); }

  void plant(const std::string& inside, const std::string& text) {
    const fs::path path = root_ / inside;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  fs::path base_;
  fs::path root_;
};

TEST_F(PlantedTreeTest, TestCodeIsDecidedByThePathInsideTheRepository) {
  EXPECT_FALSE(gk_meta::is_test_source(root_, root_ / "policy" / "name.cc"));
  EXPECT_FALSE(gk_meta::is_test_source(root_, root_ / "appliance" / "serve" / "window.cc"));
  EXPECT_TRUE(gk_meta::is_test_source(root_, root_ / "tests" / "meta" / "x.cc"));
  EXPECT_TRUE(gk_meta::is_test_source(root_, root_ / "policy" / "name_test.cc"));
}

TEST_F(PlantedTreeTest, CleanPolicyPasses) {
  EXPECT_TRUE(gk_meta::policy_purity(root_).empty()) << all(gk_meta::policy_purity(root_));
}

TEST_F(PlantedTreeTest, PolicyIncludingCstdlibIsRefused) {
  plant("policy/env.cc", "#include <cstdlib>\nconst char* mode() { return std::getenv(\"MODE\"); }\n");
  EXPECT_TRUE(mentions(gk_meta::policy_purity(root_), "policy/env.cc includes <cstdlib>"))
      << all(gk_meta::policy_purity(root_));
}

TEST_F(PlantedTreeTest, PolicyIncludingFstreamIsRefused) {
  plant("policy/file.cc", "#include <fstream>\n");
  EXPECT_TRUE(mentions(gk_meta::policy_purity(root_), "policy/file.cc includes <fstream>"));
}

TEST_F(PlantedTreeTest, PolicyLinkingALibraryIsRefused) {
  plant("policy/CMakeLists.txt",
        "add_library(policy STATIC clean.cc)\n# comment: target_link_libraries is fine here\n"
        "target_link_libraries(policy PRIVATE uv)\n");
  const gk_meta::Violations v = gk_meta::policy_purity(root_);
  ASSERT_EQ(v.size(), 1u) << all(v);
  EXPECT_TRUE(mentions(v, "target_link_libraries(policy PRIVATE uv)")) << all(v);
}

TEST_F(PlantedTreeTest, CleanProductCodeHasNoShell) {
  plant("controller/docker.cc", "const char* argv[] = {\"docker\", \"exec\", \"--interactive\", \"ssh\"};\n"
                                "// a comment may say sh -c or \"bash\"\n");
  plant("controller/git.cc", "const char* argv[] = {\"git\", \"-c\", \"core.hooksPath=/dev/null\", \"status\"};\n");
  EXPECT_TRUE(gk_meta::shell_calls(root_).empty()) << all(gk_meta::shell_calls(root_));
}

TEST_F(PlantedTreeTest, EveryShellSpellingIsRefused) {
  plant("controller/a.cc", "const char* argv[] = {\"bash\", \"script\"};\n");
  plant("controller/b.cc", "const char* argv[] = {\"/usr/bin/sh\", \"script\"};\n");
  plant("controller/c.cc", "const char* argv[] = {\"run\", \"-ec\", \"true\"};\n");
  plant("appliance/d.cc", "int x = system (\"true\");\n");
  plant("escape-suite/e.cc", "const char* shell = \"/bin/dash\";\n");
  plant("controller/f.cc", "const char* argv[] = {\"run\", \"-c\", \"echo x=1\"};\n");
  const gk_meta::Violations v = gk_meta::shell_calls(root_);
  EXPECT_TRUE(mentions(v, "controller/a.cc names a shell")) << all(v);
  EXPECT_TRUE(mentions(v, "controller/b.cc names a shell")) << all(v);
  EXPECT_TRUE(mentions(v, "controller/c.cc passes a shell's command flag")) << all(v);
  EXPECT_TRUE(mentions(v, "appliance/d.cc calls system()")) << all(v);
  EXPECT_TRUE(mentions(v, "escape-suite/e.cc names a shell")) << all(v);
  EXPECT_TRUE(mentions(v, "controller/f.cc passes a shell's command flag")) << all(v);
}

TEST_F(PlantedTreeTest, DecisionWordInATableOrACommentIsNotATest) {
  std::string table = "// \"allow\" in a comment\nconst char* kWords[] = {\n";
  std::string asserted;
  for (policy::Word word : policy::all_words()) {
    table += "  \"" + std::string(policy::word_text(word)) + "\",\n";
    if (word != policy::Word::kDenyPort) {
      asserted += "  EXPECT_EQ(decide(x),\n            \"" + std::string(policy::word_text(word)) + "\");\n";
    }
  }
  table += "};\n";
  plant("policy/words_test.cc", table + "TEST(W, W) {\n" + asserted + "}\n");
  const gk_meta::Violations v = gk_meta::untested_decision_words(root_);
  ASSERT_EQ(v.size(), 1u) << all(v);
  EXPECT_TRUE(mentions(v, "'deny:port'")) << all(v);
  // The same word inside an assertion (over two lines, after a string holding a parenthesis).
  plant("tests/port_test.cc", "TEST(P, P) { ASSERT_EQ(f(\")\"),\n \"deny:port\"); }\n");
  EXPECT_TRUE(gk_meta::untested_decision_words(root_).empty()) << all(gk_meta::untested_decision_words(root_));
}

TEST_F(PlantedTreeTest, RawExecSyscallIsRefused) {
  plant("appliance/clean.cc", "long r = syscall(SYS_capget, 0, 0); // SYS_execve in a comment\n");
  EXPECT_TRUE(gk_meta::raw_exec_syscalls(root_).empty()) << all(gk_meta::raw_exec_syscalls(root_));
  plant("appliance/named.cc", "long r = syscall(SYS_execve, path, argv, envp);\n");
  plant("appliance/numbered.cc", "long r = syscall( 57 );\n");
  plant("appliance/nr.cc", "long r = syscall(__NR_clone3, &args, sizeof args);\n");
  const gk_meta::Violations v = gk_meta::raw_exec_syscalls(root_);
  EXPECT_TRUE(mentions(v, "appliance/named.cc")) << all(v);
  EXPECT_TRUE(mentions(v, "appliance/numbered.cc")) << all(v);
  EXPECT_TRUE(mentions(v, "appliance/nr.cc")) << all(v);
  EXPECT_EQ(v.size(), 3u) << all(v);
}

TEST_F(PlantedTreeTest, AnUncheckedNumberReadIsRefusedInProductAndTestCode) {
  // The checked reader itself, a name in a comment or a string, and a longer name are clean.
  plant("policy/number.h", "auto r = std::from_chars(b, e, v, base);\n");
  plant("controller/clean.cc",
        "// atoi(x) reads 0\nconst char* help = \"use atoi(\";\nint n = my_atoi2(x) + "
        "parse_number<int>(t);\n");
  EXPECT_TRUE(gk_meta::unchecked_number_reads(root_).empty())
      << all(gk_meta::unchecked_number_reads(root_));
  plant("controller/a.cc", "int n = std::atoi(text);\n");
  plant("escape-suite/b.cc", "if (sscanf(line, \"%x\", &v) != 1) return;\n");
  plant("appliance/c.cc", "auto [p, ec] = std::from_chars(b, e, v);\n");
  plant("tests/integration/d.cc", "long n = strtol (s, nullptr, 10);\n");
  plant("controller/e_test.cc", "EXPECT_EQ(std::stoi(out), 3);\n");
  plant("image/testing/f.cc", "double d = std::strtod(s, nullptr);\n");
  plant("newfolder/g.h", "inline long g(const char* s) { return atol(s); }\n");
  const gk_meta::Violations v = gk_meta::unchecked_number_reads(root_);
  for (const char* file :
       {"controller/a.cc", "escape-suite/b.cc", "appliance/c.cc", "tests/integration/d.cc",
        "controller/e_test.cc", "image/testing/f.cc", "newfolder/g.h"}) {
    EXPECT_TRUE(mentions(v, file)) << file << "\n" << all(v);
  }
  EXPECT_EQ(v.size(), 7u) << all(v);
}

TEST(CodeOnlyTest, BlanksCommentsAndLiteralContents) {
  EXPECT_EQ(gk_meta::code_only("f(\"atoi(\") // x\n"), "f(\"     \")     \n");
  EXPECT_EQ(gk_meta::code_only("c == '(' && n == 1'000"), "c == ' ' && n == 1'000");
  EXPECT_EQ(gk_meta::code_only("R\"(atoi()\" g()"), "R\"       \" g()");
}

TEST(StripCommentsTest, KeepsLiteralsAndDropsComments) {
  EXPECT_EQ(gk_meta::strip_comments("a // b\nc"), "a     \nc");
  EXPECT_EQ(gk_meta::strip_comments("\"http://x\" /* y */z"), "\"http://x\"        z");
  EXPECT_EQ(gk_meta::strip_comments("'\"' // q"), "'\"'     ");
  EXPECT_EQ(gk_meta::strip_comments("R\"(// not a comment)\" //c"), "R\"(// not a comment)\"    ");
}

}  // namespace
