// The pack writer against git itself: each pack it writes must pass `git index-pack --strict`
// (every object checked, the trailer verified) and give back exactly the objects collected, all
// whole. Host git only checks here; the code under test never runs it.
#include "controller/code/pack_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/code/git2.h"
#include "controller/code/testing/git_fixture.h"

namespace controller::code {
namespace {

using testing::git;
using testing::git_status;
using testing::write_file;

class PackWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_git_environment(home_.path());
    repo_ = dir_.path() + "/repo";
    git(dir_.path(), {"init", "-q", "--initial-branch=main", repo_});
  }

  Repository open() {
    git2_init();
    git_repository* raw = nullptr;
    EXPECT_EQ(git_repository_open(&raw, repo_.c_str()), 0) << git2_message(-1);
    return Repository(raw);
  }

  static git_oid oid(const std::string& hex) {
    git_oid id;
    git_oid_fromstrn(&id, hex.c_str(), 40);
    return id;
  }

  // The pack for `commits` (each with everything its tree reaches), as one string.
  std::string pack_of(const std::vector<std::string>& commits, std::size_t* count = nullptr) {
    Repository repo = open();
    Result<PackWriter> pack = PackWriter::make(repo.get(), "test pack", 1);
    EXPECT_TRUE(pack) << pack.error().message;
    if (!pack) return "";
    for (const std::string& c : commits) {
      Result<void> r = pack->insert_commit(oid(c));
      EXPECT_TRUE(r) << r.error().message;
    }
    if (count != nullptr) *count = pack->count();
    std::string bytes;
    Result<void> r = pack->write([&bytes](std::string_view chunk) -> Result<void> {
      EXPECT_LE(chunk.size(), kPackChunk);
      bytes.append(chunk);
      return {};
    });
    EXPECT_TRUE(r) << r.error().message;
    return bytes;
  }

  // Indexes `pack` with --strict into a new bare repository and returns its folder.
  std::string indexed(const std::string& pack) {
    const std::string bare = dir_.path() + "/bare" + std::to_string(++bares_);
    git(dir_.path(), {"init", "-q", "--bare", bare});
    git(bare, {"index-pack", "--strict", "--stdin"}, pack);
    return bare;
  }

  static std::set<std::string> lines_of(const std::string& text) {
    std::set<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.insert(line.substr(0, 40));
    return lines;
  }

  // Every object the commits reach, as git lists them.
  std::set<std::string> reachable(const std::vector<std::string>& commits) {
    std::vector<std::string> args = {"rev-list", "--objects", "--no-walk"};
    args.insert(args.end(), commits.begin(), commits.end());
    return lines_of(git(repo_, args));
  }

  static std::set<std::string> held(const std::string& bare) {
    return lines_of(git(bare, {"cat-file", "--batch-all-objects", "--batch-check=%(objectname)"}));
  }

  std::string commit(const std::string& message) {
    git(repo_, {"add", "-A"});
    git(repo_, {"commit", "-q", "--allow-empty", "-m", message});
    return git(repo_, {"rev-parse", "HEAD"}).substr(0, 40);
  }

  testing::TempTree home_, dir_;
  std::string repo_;
  int bares_ = 0;
};

TEST_F(PackWriterTest, AnOrdinaryRepositorysPackPassesIndexPackStrictWithEveryObjectWhole) {
  write_file(repo_ + "/README", "hello\n");
  ASSERT_EQ(mkdir((repo_ + "/src").c_str(), 0755), 0);
  write_file(repo_ + "/src/main.c", "int main(void) { return 0; }\n");
  const std::string first = commit("first");
  write_file(repo_ + "/src/main.c", "int main(void) { return 1; }\n");
  write_file(repo_ + "/src/util.c", "void util(void) {}\n");
  const std::string second = commit("second");

  std::size_t count = 0;
  const std::string pack = pack_of({second, first}, &count);
  const std::string bare = indexed(pack);
  EXPECT_EQ(held(bare), reachable({second, first}));
  EXPECT_EQ(count, reachable({second, first}).size());
  git(bare, {"update-ref", "refs/heads/main", second});
  EXPECT_EQ(git_status(bare, {"fsck", "--strict", "--no-dangling", "--no-progress"}), 0);
  // No delta at all: every object whole.
  std::string listing;
  for (const auto& e : std::filesystem::directory_iterator(bare + "/objects/pack")) {
    if (e.path().extension() == ".idx") {
      listing = git(bare, {"verify-pack", "-v", e.path().string()});
    }
  }
  EXPECT_NE(listing.find("non delta: " + std::to_string(count) + " objects"), std::string::npos)
      << listing;
  EXPECT_EQ(listing.find("chain length"), std::string::npos) << listing;
}

// Links, executable bits, empty blobs, Unicode and space-containing names, a blob larger than
// several chunks that does not compress, and a gitlink (a submodule's commit: not an object of
// this repository, so it never goes into the pack).
TEST_F(PackWriterTest, LinksExecBitsEmptyBlobsUnicodePathsAndLargeBlobsPassIndexPackStrict) {
  write_file(repo_ + "/run.sh", "#!/bin/sh\necho hi\n", 0755);
  write_file(repo_ + "/empty", "");
  ASSERT_EQ(mkdir((repo_ + "/na\xC3\xAFve").c_str(), 0755), 0);
  write_file(repo_ + "/na\xC3\xAFve/\xE6\x97\xA5\xE6\x9C\xAC.txt", "unicode\n");
  ASSERT_EQ(mkdir((repo_ + "/with space").c_str(), 0755), 0);
  write_file(repo_ + "/with space/a file.txt", "space\n");
  ASSERT_EQ(symlink("run.sh", (repo_ + "/link").c_str()), 0);
  ASSERT_EQ(symlink("../nowhere", (repo_ + "/dangling").c_str()), 0);
  std::string noise(300000, '\0');
  unsigned state = 12345;
  for (char& c : noise) {
    state = state * 1103515245u + 12345u;
    c = static_cast<char>(state >> 24);
  }
  write_file(repo_ + "/noise.bin", noise);
  git(repo_, {"add", "-A"});
  git(repo_, {"update-index", "--add", "--cacheinfo",
              "160000,0123456789012345678901234567890123456789,sub"});
  git(repo_, {"commit", "-q", "-m", "kinds"});
  const std::string head = git(repo_, {"rev-parse", "HEAD"}).substr(0, 40);

  std::size_t count = 0;
  const std::string pack = pack_of({head}, &count);
  EXPECT_GT(pack.size(), 3 * kPackChunk);
  const std::string bare = indexed(pack);
  EXPECT_EQ(held(bare), reachable({head}));
  EXPECT_EQ(count, reachable({head}).size());
  EXPECT_EQ(held(bare).count("0123456789012345678901234567890123456789"), 0u);
  git(bare, {"update-ref", "refs/heads/main", head});
  EXPECT_EQ(git_status(bare, {"fsck", "--strict", "--no-dangling", "--no-progress"}), 0);
  EXPECT_EQ(git(bare, {"cat-file", "blob", head + ":noise.bin"}), noise);
  EXPECT_EQ(git(bare, {"ls-tree", "-r", head}), git(repo_, {"ls-tree", "-r", head}));
}

// A blob the repository does not hold is refused when it is collected, before any byte goes.
TEST_F(PackWriterTest, AMissingObjectIsRefusedNamingItBeforeAnyByteIsWritten) {
  write_file(repo_ + "/kept.txt", "kept\n");
  write_file(repo_ + "/lost.txt", "lost\n");
  const std::string head = commit("one");
  const std::string lost = git(repo_, {"rev-parse", "HEAD:lost.txt"}).substr(0, 40);
  ASSERT_EQ(unlink((repo_ + "/.git/objects/" + lost.substr(0, 2) + "/" + lost.substr(2)).c_str()),
            0);
  Repository repo = open();
  Result<PackWriter> pack = PackWriter::make(repo.get(), "test pack", 1);
  ASSERT_TRUE(pack) << pack.error().message;
  Result<void> r = pack->insert_commit(oid(head));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kCodeInFailed);
  EXPECT_NE(r.error().message.find(lost), std::string::npos) << r.error().message;
}

// An object that goes between collecting and writing ends the write naming it; what was written
// has no trailer, so index-pack refuses it.
TEST_F(PackWriterTest, AnObjectLostWhileWritingEndsThePackUnfinished) {
  write_file(repo_ + "/a.txt", "a\n");
  write_file(repo_ + "/b.txt", "b\n");
  const std::string head = commit("one");
  const std::string lost = git(repo_, {"rev-parse", "HEAD:b.txt"}).substr(0, 40);
  Repository repo = open();
  Result<PackWriter> pack = PackWriter::make(repo.get(), "test pack", 1);
  ASSERT_TRUE(pack) << pack.error().message;
  ASSERT_TRUE(pack->insert_commit(oid(head)));
  ASSERT_EQ(unlink((repo_ + "/.git/objects/" + lost.substr(0, 2) + "/" + lost.substr(2)).c_str()),
            0);
  std::string bytes;
  Result<void> r = pack->write([&bytes](std::string_view chunk) -> Result<void> {
    bytes.append(chunk);
    return {};
  });
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(lost), std::string::npos) << r.error().message;
  const std::string file = dir_.path() + "/unfinished.pack";
  write_file(file, bytes);
  const std::string bare = dir_.path() + "/bare";
  git(dir_.path(), {"init", "-q", "--bare", bare});
  EXPECT_NE(git_status(bare, {"index-pack", "--strict", file}), 0);
}

// The sink's failure (the space's stdin gone) ends the write at once with that failure.
TEST_F(PackWriterTest, ASinkFailureEndsTheWriteWithThatFailure) {
  std::string noise(3 * kPackChunk, '\0');
  unsigned state = 7;
  for (char& c : noise) {
    state = state * 1103515245u + 12345u;
    c = static_cast<char>(state >> 24);
  }
  write_file(repo_ + "/noise.bin", noise);
  const std::string head = commit("one");
  Repository repo = open();
  Result<PackWriter> pack = PackWriter::make(repo.get(), "test pack", 1);
  ASSERT_TRUE(pack) << pack.error().message;
  ASSERT_TRUE(pack->insert_commit(oid(head)));
  int calls = 0;
  Result<void> r = pack->write([&calls](std::string_view) -> Result<void> {
    if (++calls == 2) return fail(Code::kCodeTransferFailed, "stdin closed");
    return {};
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kCodeTransferFailed);
  EXPECT_EQ(calls, 2);
}

TEST_F(PackWriterTest, ACompressionLevelOutsideZlibsIsRefused) {
  Repository repo = open();
  EXPECT_TRUE(PackWriter::make(repo.get(), "test pack", 0));
  EXPECT_TRUE(PackWriter::make(repo.get(), "test pack", 9));
  EXPECT_FALSE(PackWriter::make(repo.get(), "test pack", -1));
  EXPECT_FALSE(PackWriter::make(repo.get(), "test pack", 10));
}

}  // namespace
}  // namespace controller::code
