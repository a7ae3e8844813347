#include "policy/git_tree_names.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace policy::git_tree {
namespace {

const std::string kId(20, '\x11');

std::string entry(const std::string& mode, const std::string& name) { return mode + " " + name + std::string(1, '\0') + kId; }

TEST(GitTreeNamesTest, RefusesEveryDotGitSpelling) {
  const std::vector<std::pair<std::string, Reason>> cases = {
      {".git", Reason::kDotGit},
      {".GIT", Reason::kDotGit},
      {".Git", Reason::kDotGit},
      {"git~1", Reason::kDotGitNtfs},
      {"GIT~1", Reason::kDotGitNtfs},
      {".git ", Reason::kDotGitNtfs},
      {".git.", Reason::kDotGitNtfs},
      {".git. . ", Reason::kDotGitNtfs},
      {".git::$INDEX_ALLOCATION", Reason::kDotGitNtfs},
      {"git~1.", Reason::kDotGitNtfs},
      {".g\u200cit", Reason::kDotGitHfs},
      {"\u200d.git", Reason::kDotGitHfs},
      {".gi\u202at", Reason::kDotGitHfs},
      {".G\u206fIT\ufeff", Reason::kDotGitHfs},
  };
  for (const auto& [name, reason] : cases) EXPECT_EQ(check_name(name), reason) << name;
}

TEST(GitTreeNamesTest, PassesNamesJustOutsideDotGit) {
  for (const char* name : {".gitx", "git", ".gi", "x.git", ".git~1", "git~2", ".gitignore", ".github", "git~1x", ".g\u200bit",
                           "\xe2\x80\x8c", ".gitkeep", "ordinary.txt", "..x", "...", ". ", "-rf"})
    EXPECT_EQ(check_name(name), Reason::kOk) << name;
}

TEST(GitTreeNamesTest, RefusesDotsSeparatorsNulAndEmpty) {
  EXPECT_EQ(check_name(""), Reason::kEmptyName);
  EXPECT_EQ(check_name("."), Reason::kDotName);
  EXPECT_EQ(check_name(".."), Reason::kDotDotName);
  EXPECT_EQ(check_name("a/../../x"), Reason::kSlashInName);
  EXPECT_EQ(check_name("a\\..\\x"), Reason::kBackslashInName);
  EXPECT_EQ(check_name(std::string("a\0b", 3)), Reason::kNulInName);
}

TEST(GitTreeNamesTest, NameLengthAtTheLimitAndOnePast) {
  EXPECT_EQ(check_name(std::string(kMaxEntryNameBytes, 'a')), Reason::kOk);
  EXPECT_EQ(check_name(std::string(kMaxEntryNameBytes + 1, 'a')), Reason::kNameTooLong);
}

TEST(GitTreeNamesTest, RefusesGitmodulesSpellingsButTheCanonicalOne) {
  EXPECT_EQ(check_name(".gitmodules"), Reason::kOk);
  EXPECT_TRUE(is_gitmodules(".gitmodules"));
  for (const char* name : {".GITMODULES", ".gitmodules ", ".gitmodules.", "gitmod~1", "GITMOD~4", "gi7eba~1", "gi7eba~9",
                           ".gitmodules::$DATA", ".git\u200cmodules", "\ufeff.gitmodules"})
    EXPECT_EQ(check_name(name), Reason::kGitmodulesSpelling) << name;
  for (const char* name : {"gitmod~5", "gi7ebb~1", ".gitmodulesx", "gitmodules"}) EXPECT_EQ(check_name(name), Reason::kOk) << name;
}

TEST(GitTreeNamesTest, DotFilesMustBeRegularFiles) {
  for (const char* name : {".gitmodules", ".gitattributes", ".gitignore", ".mailmap", "gi7d29~1", ".GITIGNORE", "maba30~2"}) {
    EXPECT_EQ(check_entry(name, kModeSymlink), Reason::kDotFileNotFile) << name;
    EXPECT_EQ(check_entry(name, kModeTree), Reason::kDotFileNotFile) << name;
  }
  EXPECT_EQ(check_entry(".gitattributes", kModeBlob), Reason::kOk);
  EXPECT_EQ(check_entry(".gitignore", kModeExecutable), Reason::kOk);
  EXPECT_EQ(check_entry("link", kModeSymlink), Reason::kOk);
}

TEST(GitTreeNamesTest, OnlyTheFiveModesGitWrites) {
  for (std::uint32_t mode : {kModeTree, kModeBlob, kModeExecutable, kModeSymlink, kModeGitlink})
    EXPECT_EQ(check_entry("a", mode), Reason::kOk) << std::oct << mode;
  for (std::uint32_t mode : {0u, 0100664u, 0100600u, 0100777u, 0120777u, 0140000u, 0170000u, 040755u, 0160644u})
    EXPECT_EQ(check_entry("a", mode), Reason::kBadMode) << std::oct << mode;
}

TEST(GitTreeNamesTest, ParsesATreeStrictly) {
  const std::string tree = entry("100644", "a") + entry("40000", "b") + entry("120000", "c") + entry("160000", "d");
  const TreeCheck t = check_tree(tree, 20);
  ASSERT_EQ(t.reason, Reason::kOk);
  ASSERT_EQ(t.entries.size(), 4u);
  EXPECT_EQ(t.entries[1].mode, kModeTree);
  EXPECT_EQ(t.entries[1].name, "b");
  EXPECT_EQ(t.entries[3].id, kId);
  EXPECT_EQ(check_tree("", 20).reason, Reason::kOk);
}

TEST(GitTreeNamesTest, RefusesMalformedTrees) {
  const std::string ok = entry("100644", "a");
  EXPECT_EQ(check_tree(ok.substr(0, ok.size() - 1), 20).reason, Reason::kMalformedTree);  // id one byte short
  EXPECT_EQ(check_tree("100644 a", 20).reason, Reason::kMalformedTree);                   // no NUL
  EXPECT_EQ(check_tree(entry("1006448", "a"), 20).reason, Reason::kMalformedTree);        // 7 digits
  EXPECT_EQ(check_tree(entry("10064x", "a"), 20).reason, Reason::kMalformedTree);
  EXPECT_EQ(check_tree(entry("", "a"), 20).reason, Reason::kMalformedTree);
  EXPECT_EQ(check_tree(" a" + std::string(1, '\0') + kId, 20).reason, Reason::kMalformedTree);
  EXPECT_EQ(check_tree(entry("100644", ""), 20).reason, Reason::kEmptyName);
  EXPECT_EQ(check_tree(entry("040000", "a"), 20).reason, Reason::kBadMode);  // zero-padded
  EXPECT_EQ(check_tree(entry("100664", "a"), 20).reason, Reason::kBadMode);
}

TEST(GitTreeNamesTest, RefusesForbiddenNamesInsideATree) {
  for (const char* name : {".git", ".GIT", "git~1", ".git ", ".git.", "..", ".", ".gitmodules."}) {
    const TreeCheck t = check_tree(entry("100644", "a") + entry("40000", name), 20);
    EXPECT_NE(t.reason, Reason::kOk) << name;
    EXPECT_EQ(t.entry, 1u) << name;
  }
}

TEST(GitTreeNamesTest, RefusesDuplicatesAndWrongOrder) {
  EXPECT_EQ(check_tree(entry("100644", "a") + entry("100644", "a"), 20).reason, Reason::kDuplicateEntry);
  EXPECT_EQ(check_tree(entry("100644", "b") + entry("100644", "a"), 20).reason, Reason::kTreeNotSorted);
  // A file "a" and a folder "a" sort apart with "a.b" between them (git compares "a/" for trees).
  EXPECT_EQ(check_tree(entry("100644", "a") + entry("100644", "a.b") + entry("40000", "a"), 20).reason, Reason::kDuplicateEntry);
  EXPECT_EQ(check_tree(entry("100644", "a.b") + entry("40000", "a"), 20).reason, Reason::kOk);
  EXPECT_EQ(check_tree(entry("40000", "a") + entry("100644", "a.b"), 20).reason, Reason::kTreeNotSorted);
}

TEST(GitTreeNamesTest, ComparesLikeGit) {
  EXPECT_LT(compare_entries("a", false, "a.b", false), 0);
  EXPECT_GT(compare_entries("a", true, "a.b", false), 0);
  EXPECT_EQ(compare_entries("a", false, "a", false), 0);
  EXPECT_LT(compare_entries("a", false, "a", true), 0);
  EXPECT_LT(compare_entries("a", true, "a0", false), 0);
  EXPECT_LT(compare_entries("Z", false, "a", false), 0);
  EXPECT_LT(compare_entries("a", false, "\xff", false), 0);
}

TEST(GitTreeNamesTest, GitmodulesOrdinaryContentPasses) {
  EXPECT_EQ(check_gitmodules(""), Reason::kOk);
  EXPECT_EQ(check_gitmodules("[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.invalid/lib.git\n"), Reason::kOk);
  EXPECT_EQ(check_gitmodules("# comment\n[submodule \"a/b\"] ; c\n  path = \"a b\" # c\n  url = ../x.git\n  branch\n"), Reason::kOk);
  EXPECT_EQ(check_gitmodules("[core]\n  url = -not-a-submodule-key\n"), Reason::kOk);
  EXPECT_EQ(check_gitmodules("[submodule \"x\"]\n  url = git@host.invalid:x.git\n  update = rebase\n"), Reason::kOk);
}

TEST(GitTreeNamesTest, GitmodulesHostileContentRefused) {
  const std::vector<std::pair<std::string, Reason>> cases = {
      {"[submodule \"x\"]\n url = -u./payload\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n url = \"-u./payload\"\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n url = ext::sh -c touch% /tmp/pwned\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n url = fd::17\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n url = EXT::x\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n url = https://a.invalid/\\nhost=evil\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n url =\n", Reason::kGitmodulesUrl},
      {"[submodule \"x\"]\n path = -x\n", Reason::kGitmodulesPath},
      {"[submodule \"x\"]\n path = ../../outside\n", Reason::kGitmodulesPath},
      {"[submodule \"x\"]\n path = /abs\n", Reason::kGitmodulesPath},
      {"[submodule \"x\"]\n path = a/.git/hooks\n", Reason::kGitmodulesPath},
      {"[submodule \"x\"]\n update = !sh evil\n", Reason::kGitmodulesUpdate},
      {"[submodule \"../../modules/x\"]\n path = x\n", Reason::kGitmodulesName},
      {"[submodule \"-x\"]\n path = x\n", Reason::kGitmodulesName},
      {"[submodule \"\"]\n path = x\n", Reason::kGitmodulesName},
      {"[submodule]\n path = x\n", Reason::kGitmodulesUnparsable},
      {"[submodule \"x\"\n", Reason::kGitmodulesUnparsable},
      {"[submodule \"x\"]\n url = \"unterminated\n", Reason::kGitmodulesUnparsable},
      {"[submodule \"x\"]\n url = bad\\qescape\n", Reason::kGitmodulesUnparsable},
      {"%%%\n", Reason::kGitmodulesUnparsable},
      {std::string("[submodule \"x\"]\0", 16), Reason::kGitmodulesUnparsable},
  };
  for (const auto& [text, reason] : cases) EXPECT_EQ(check_gitmodules(text), reason) << text;
}

TEST(GitTreeNamesTest, GitmodulesContinuationIsFollowed) {
  EXPECT_EQ(check_gitmodules("[submodule \"x\"]\n url = \\\n-u./payload\n"), Reason::kGitmodulesUrl);
}

TEST(GitTreeNamesTest, GitmodulesSizeAtTheLimitAndOnePast) {
  EXPECT_EQ(check_gitmodules(std::string(kMaxGitmodulesBytes, '\n')), Reason::kOk);
  EXPECT_EQ(check_gitmodules(std::string(kMaxGitmodulesBytes + 1, '\n')), Reason::kGitmodulesTooLarge);
}

TEST(GitTreeNamesTest, LinkTargetsAreReportedNeverFollowed) {
  EXPECT_EQ(check_link_target("a", "b").reason, Reason::kOk);
  EXPECT_FALSE(check_link_target("a", "b").leaves_tree);
  EXPECT_FALSE(check_link_target("d/a", "../b").leaves_tree);
  EXPECT_TRUE(check_link_target("a", "../b").leaves_tree);
  EXPECT_TRUE(check_link_target("d/a", "x/../../../b").leaves_tree);
  EXPECT_TRUE(check_link_target("a", "/etc/passwd").leaves_tree);
  EXPECT_TRUE(check_link_target("a", "C:\\Windows").leaves_tree);
  EXPECT_EQ(check_link_target("a", "/etc/passwd").reason, Reason::kOk);
  EXPECT_EQ(check_link_target("a", "").reason, Reason::kLinkTargetEmpty);
  EXPECT_EQ(check_link_target("a", std::string("a\0b", 3)).reason, Reason::kLinkTargetNul);
  EXPECT_EQ(check_link_target("a", std::string(kMaxLinkTargetBytes, 'x')).reason, Reason::kOk);
  EXPECT_EQ(check_link_target("a", std::string(kMaxLinkTargetBytes + 1, 'x')).reason, Reason::kLinkTargetTooLong);
  for (const char* t : {".git/hooks", "x/.GIT/config", "git~1", "../.git ", "a\\.git\\hooks"})
    EXPECT_EQ(check_link_target("a", t).reason, Reason::kLinkIntoGitDir) << t;
}

TEST(GitTreeNamesTest, DefaultVerdictRefuses) {
  const TreeCheck t;
  EXPECT_EQ(t.reason, Reason::kUnchecked);
  EXPECT_NE(LinkCheck{}.reason, Reason::kOk);
  EXPECT_EQ(reason_word(Reason::kUnchecked), "unchecked");
  EXPECT_EQ(reason_word(Reason::kDotGitNtfs), "dot-git-ntfs");
}

}  // namespace
}  // namespace policy::git_tree
