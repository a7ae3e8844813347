// Hostile results built by the space's git past its own checks (hash-object --literally, a
// forged shallow file, sparse files, deep trees): each is refused in the quarantine and leaves
// the user's repository exactly as it was (the fixture compares it, with no allowance), and
// each has a control that comes out.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "controller/code/testing/out_fixture.h"

namespace controller::code {
namespace {

using testing::git;
using testing::write_file;

class CodeOutHostileTest : public testing::OutTest {
 protected:
  void expect_refused(const Result<BringOut>& r, Code code, const std::string& words, const std::string& what) {
    ASSERT_FALSE(r) << what << " came out";
    EXPECT_EQ(r.error().code, code) << what << ": " << r.error().message;
    EXPECT_NE(r.error().message.find(words), std::string::npos) << what << ": " << r.error().message;
    EXPECT_EQ(user_result(), "") << what;
  }
};

TEST_F(CodeOutHostileTest, ForbiddenTreeEntriesAreRefusedInTheQuarantine) {
  const std::string head = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
  const std::string b = blob("payload\n");
  const std::string hooks = literal_tree(entry("100755", "x", b));
  const std::string dotgit_with_hooks = literal_tree(entry("40000", "hooks", hooks));
  struct Case {
    std::string what, tree_bytes, reason;
  };
  std::vector<Case> cases;
  for (const std::string name : {".git", ".GIT", ".Git", "git~1", ".git ", ".git.", "..", ".", "a/../../x", "a\\..\\x",
                                 ".g\xe2\x80\x8cit", ".gitmodules.", "gitmod~1"})
    cases.push_back({"file '" + name + "'", entry("100644", name, b), ""});
  cases.push_back({"nested .git/hooks/x", entry("40000", ".git", dotgit_with_hooks), "dot-git"});
  cases.push_back({"mode 100664", entry("100664", "a", b), "bad-mode"});
  cases.push_back({"zero-padded 040000", entry("040000", "a", hooks), "bad-mode"});
  cases.push_back({"duplicate", entry("100644", "a", b) + entry("100644", "a", b), "duplicate-entry"});
  cases.push_back({".gitmodules url", entry("100644", ".gitmodules", blob("[submodule \"x\"]\n\tpath = x\n\turl = -u./payload\n")),
                   "gitmodules-url"});
  cases.push_back({".gitmodules ext::", entry("100644", ".gitmodules", blob("[submodule \"x\"]\n\tpath = x\n\turl = ext::sh -c id\n")),
                   "gitmodules-url"});
  cases.push_back({".gitmodules link", entry("120000", ".gitmodules", blob("elsewhere")), "dot-file-not-a-file"});
  cases.push_back({"link into .git", entry("120000", "l", blob(".git/hooks")), "link-into-git-dir"});
  for (const Case& c : cases) {
    plant_head(literal_tree(c.tree_bytes));
    write_file(inside_ + "/work.txt", "work\n");
    expect_refused(out(), Code::kResultRefused, c.reason, c.what);
    git(inside_, {"update-ref", "HEAD", head});
  }
  // Control: an ordinary name built the same way comes out, and a link to /etc/passwd comes out
  // as a link (reported as leaving the tree, never followed).
  plant_head(literal_tree(entry("100644", "ordinary.txt", b) + entry("120000", "passwd", blob("/etc/passwd"))));
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  const auto link = std::find_if(r->symlinks.begin(), r->symlinks.end(), [](const SymlinkOut& l) { return l.path == "passwd"; });
  ASSERT_NE(link, r->symlinks.end());
  EXPECT_EQ(link->target, "/etc/passwd");
  EXPECT_TRUE(link->leaves_tree);
}

TEST_F(CodeOutHostileTest, ForgedShallowNeverMakesTheUserShallow) {
  write_file(inside_ + "/c1.txt", "1\n");
  git(inside_, {"add", "c1.txt"});
  git(inside_, {"commit", "-q", "-m", "c1"});
  const std::string c1 = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
  write_file(inside_ + "/c2.txt", "2\n");
  git(inside_, {"add", "c2.txt"});
  git(inside_, {"commit", "-q", "-m", "c2"});
  const std::string c2 = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
  const std::string shallow = git(inside_, {"rev-parse", "--git-path", "shallow"});
  const std::string shallow_path = inside_ + "/" + shallow.substr(0, shallow.size() - 1);
  // The space claims its history ends at c2: c1 never arrives.
  write_file(shallow_path, c2 + "\n");
  expect_refused(out(), Code::kResultMissing, "did not arrive", "shallow at c2");
  EXPECT_NE(access((repo_ + "/.git/shallow").c_str(), F_OK), 0);
  // Control: ending at c1, whose parent the user has, comes out; the user's repository stays whole.
  write_file(shallow_path, c1 + "\n");
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(access((repo_ + "/.git/shallow").c_str(), F_OK), 0);
  EXPECT_EQ(git(repo_, {"rev-parse", "--is-shallow-repository"}), "false\n");
}

TEST_F(CodeOutHostileTest, FileOfZerosOverTheByteCapIsSizedNotInflated) {
  // Zeros travel as a tiny pack; the size is read from the object header, never from the wire.
  // (The 1.5 GB case is in tests/bench/code_out, which also measures the host's peak memory.)
  const std::string big = inside_ + "/zeros.bin";
  const int fd = open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, (128ll << 20) + 1), 0);
  close(fd);
  Result<BringOut> r = out();
  expect_refused(r, Code::kResultTooLarge, "new objects hold more than 134217728 bytes", "128 MiB + 1 of zeros");
}

TEST_F(CodeOutHostileTest, NewBytesCapAtTheLimitAndOnePast) {
  write_file(inside_ + "/two-mib.bin", std::string(2u << 20, '\0'));
  OutOptions o = options();
  o.limits.max_new_bytes = 1u << 20;
  expect_refused(out("ok", o), Code::kResultTooLarge, "new objects hold more than", "2 MiB under a 1 MiB cap");
  o.limits.max_new_bytes = 4u << 20;
  Result<BringOut> r = out("ok", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GE(r->new_bytes, 2u << 20);
  EXPECT_LE(r->new_bytes, 4u << 20);
}

TEST_F(CodeOutHostileTest, MegabyteCommitMessage) {
  write_file(dir_.path() + "/message", std::string(1u << 20, 'm') + "\n");
  write_file(inside_ + "/work.txt", "work\n");
  git(inside_, {"add", "work.txt"});
  git(inside_, {"commit", "-q", "-F", dir_.path() + "/message"});
  OutOptions o = options();
  o.limits.max_object_bytes = 512u << 10;
  expect_refused(out("ok", o), Code::kResultTooLarge, "commit", "1 MiB message under a 512 KiB cap");
  Result<BringOut> r = out();  // the default 4 MiB cap takes it
  ASSERT_TRUE(r) << r.error().message;
}

TEST_F(CodeOutHostileTest, TransferCapHoldsWhileBytesArrive) {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string bytes(3u << 20, '\0');
  random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  write_file(inside_ + "/random.bin", bytes);
  OutOptions o = options();
  o.limits.max_transfer_bytes = 1u << 20;
  expect_refused(out("ok", o), Code::kResultTransferTooLarge, "while it arrived", "3 MiB of random bytes under a 1 MiB cap");
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GT(r->transfer_bytes, 3u << 20);
}

TEST_F(CodeOutHostileTest, PackAnnouncingMoreObjectsThanTheCapIsRefusedAtItsHeader) {
  for (int i = 0; i < 6; ++i) write_file(inside_ + "/f" + std::to_string(i), std::to_string(i) + " distinct\n");
  OutOptions o = options();
  o.limits.max_entries = 4;
  expect_refused(out("ok", o), Code::kResultTooManyChanges, "the pack announces", "6 files under a cap of 4");
}

TEST_F(CodeOutHostileTest, TwentyThousandFilesFiveHundredFoldersDeep) {
  // One chain x<i>/a/…/a/f shared by every x<i>: about 500 objects, 10 million folders to enter.
  std::string t = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, entry("100644", "f", blob("deep\n"))).substr(0, 40);
  for (int depth = 1; depth < 500; ++depth)
    t = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, entry("40000", "a", t)).substr(0, 40);
  std::vector<std::string> names;
  for (int i = 0; i < 20000; ++i) names.push_back("x" + std::to_string(i));
  std::sort(names.begin(), names.end());
  std::string top;
  for (const std::string& n : names) top += entry("40000", n, t);
  const std::string top_id = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, top).substr(0, 40);
  // The space's git reports that tree as its work tree (a space may run any git it likes).
  write_file(root_ + "/tree-id", top_id + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(out("lietree"), Code::kResultTooManyChanges, "steps", "20,000 files 500 deep");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
}

// Chains 470 folders deep with a file at every level, all chains sharing their trees: 13 chains
// stay just under the 3,200,000 nesting steps (each chain: 470·471/2 for its folders plus as much
// again and 470 for its files, 221,840) and come out; 15 chains pass it and are refused.
TEST_F(CodeOutHostileTest, NestingStepsJustUnderTheCapComeOutJustOverAreRefused) {
  const std::string f = blob("level\n");
  std::string t = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, entry("100644", "f", f)).substr(0, 40);
  for (int depth = 1; depth < 470; ++depth)
    t = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, entry("40000", "a", t) + entry("100644", "f", f)).substr(0, 40);
  auto top_of = [&](int chains) {
    std::vector<std::string> names;
    for (int i = 0; i < chains; ++i) names.push_back("c" + std::to_string(i));
    std::sort(names.begin(), names.end());
    std::string top;
    for (const std::string& n : names) top += entry("40000", n, t);
    return git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, top);
  };
  write_file(root_ + "/tree-id", top_of(15));
  expect_refused(out("lietree"), Code::kResultTooManyChanges, "steps", "15 chains 470 deep");
  write_file(root_ + "/tree-id", top_of(13));
  Result<BringOut> r = out("lietree");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->changed_folders, 13u * 470u);
  EXPECT_GT(r->steps, 13u * 221840u - 1);
  EXPECT_LE(r->steps, 3200000u);
}

TEST_F(CodeOutHostileTest, ChangedFoldersCapAtTheLimitAndOnePast) {
  // 300 paths x<i>/y/f sharing one subtree: 4 new objects, 300 paths, 600 folders.
  const std::string f = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, entry("100644", "f", blob("f\n"))).substr(0, 40);
  const std::string y = git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, entry("40000", "y", f)).substr(0, 40);
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("x" + std::to_string(i));
  std::sort(names.begin(), names.end());
  std::string top;
  for (const std::string& n : names) top += entry("40000", n, y);
  write_file(root_ + "/tree-id", git(inside_, {"hash-object", "-t", "tree", "-w", "--stdin"}, top));
  OutOptions o = options();
  o.limits.max_entries = 599;
  expect_refused(out("lietree", o), Code::kResultTooManyChanges, "more than 599 changed folders", "600 folders under a cap of 599");
  o.limits.max_entries = 600;
  Result<BringOut> r = out("lietree", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->changed_folders, 600u);
  // Folders entered: depth 1 and 2 for each x<i>; each path its own depth (x<i>/y/f: 3). The
  // bait's top-level files the lie deleted are depth 1 each.
  EXPECT_EQ(r->steps, 300u * (1 + 2) + 300u * 3 + (r->changed.size() - 300));
}

}  // namespace
}  // namespace controller::code
