// Rounds, throw-aways and interrupted applies, with real repositories (testing/apply_fixture.h).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "controller/code/testing/apply_fixture.h"

namespace controller::code {
namespace {

using testing::ApplyTest;
using testing::git;
using testing::kSpace;
using testing::read_file;
using testing::trim;
using testing::write_file;

void expect_refused(const Result<ChangesApplied>& r, Code code) {
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, code) << r.error().message;
}

class ApplyRoundsTest : public ApplyTest {
 protected:
  // Round 1: the agent edits a.txt and adds new.txt; applied as changes.
  void first_round() {
    code_in();
    first_ = make_result([](const std::string& s) {
      write_file(s + "/a.txt", "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven\n");
      write_file(s + "/new.txt", "new\n");
    });
    Result<ChangesApplied> r = apply();
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->applied_paths, (std::vector<std::string>{"a.txt", "new.txt"}));
  }
  std::string first_;
};

TEST_F(ApplyRoundsTest, ASecondRoundBringsOnlyWhatIsNew) {
  first_round();
  // The user works on: commits part of round 1 and edits another file.
  git(repo_, {"add", "a.txt"});
  git(repo_, {"commit", "-qm", "take the agent's a.txt"});
  write_file(repo_ + "/src/c.txt", "sea (user)\n");
  const std::string second = make_result([](const std::string& s) {
    write_file(s + "/a.txt", "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven (agent, round 2)\n");
    write_file(s + "/src/b.txt", "bee (agent)\n");
  });
  Result<ApplyState> st = describe_apply_state(repo_, kSpace, {});
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->base_reason, "last_apply");
  EXPECT_EQ(st->new_paths, (std::vector<std::string>{"a.txt", "src/b.txt"}));
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->from, first_);
  EXPECT_EQ(r->applied_paths, (std::vector<std::string>{"a.txt", "src/b.txt"}));
  EXPECT_EQ(read_file(repo_ + "/a.txt"), "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven (agent, round 2)\n");
  EXPECT_EQ(read_file(repo_ + "/new.txt"), "new\n");
  EXPECT_EQ(read_file(repo_ + "/src/c.txt"), "sea (user)\n");
  EXPECT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applied")})), second);
}

TEST_F(ApplyRoundsTest, ApplyStateWritesNothingWhateverItFinds) {
  first_round();
  make_result([](const std::string& s) { write_file(s + "/src/b.txt", "bee (agent)\n"); });
  auto unchanged = [&](const char* when) {
    const RepoState before = state();
    Result<ApplyState> st = describe_apply_state(repo_, kSpace, {});
    ASSERT_TRUE(st) << when << ": " << st.error().message;
    for (const auto& f : forbidden_changes(before, state(), Allowed{})) ADD_FAILURE() << when << ": " << f;
  };
  unchanged("a new round waiting");
  ASSERT_EQ(::unlink((repo_ + "/new.txt").c_str()), 0);
  unchanged("part of the last round thrown away");
  ApplyLimits stop;
  stop.testing_stop_after_writes = 0;
  write_file(repo_ + "/new.txt", "new\n");
  expect_refused(apply(stop), Code::kInternal);
  unchanged("an interrupted apply");
}

TEST_F(ApplyRoundsTest, WorkThrownAwayWholeIsBroughtAgainWhole) {
  first_round();
  git(repo_, {"checkout", "--", "a.txt"});
  ASSERT_EQ(::unlink((repo_ + "/new.txt").c_str()), 0);
  Result<ApplyState> st = describe_apply_state(repo_, kSpace, {});
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->base_reason, "thrown_away");
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied_paths, (std::vector<std::string>{"a.txt", "new.txt"}));
  EXPECT_EQ(work_tree_tree(), tree_of(first_));
}

TEST_F(ApplyRoundsTest, EveryRoundThrownAwayStartsFromTheStart) {
  first_round();
  const std::string second = make_result([](const std::string& s) { write_file(s + "/src/b.txt", "bee (agent)\n"); });
  ASSERT_TRUE(apply());
  git(repo_, {"checkout", "--", "a.txt", "src/b.txt"});
  ASSERT_EQ(::unlink((repo_ + "/new.txt").c_str()), 0);
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->from, start_);
  EXPECT_EQ(r->applied_paths, (std::vector<std::string>{"a.txt", "new.txt", "src/b.txt"}));
  EXPECT_EQ(work_tree_tree(), tree_of(second));
}

TEST_F(ApplyRoundsTest, PartlyThrownAwayIsRefusedAndClosesTheRoute) {
  first_round();
  make_result([](const std::string& s) { write_file(s + "/src/b.txt", "bee (agent)\n"); });
  ASSERT_EQ(::unlink((repo_ + "/new.txt").c_str()), 0);  // a.txt stays as applied
  const RepoState before = state();
  Result<ChangesApplied> r = apply();
  expect_refused(r, Code::kChangesDoNotApply);
  EXPECT_NE(r.error().message.find("new.txt"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("a.txt"), std::string::npos) << r.error().message;
  expect_only_marker(before, true);
  expect_refused(apply(), Code::kChangesRouteClosed);
}

TEST_F(ApplyRoundsTest, ARevertCommittedByTheUserIsAnEditNotAThrowAway) {
  first_round();
  git(repo_, {"add", "a.txt", "new.txt"});
  git(repo_, {"commit", "-qm", "take it"});
  git(repo_, {"revert", "--no-edit", "HEAD"});  // the user's own commit changed both back
  make_result([](const std::string& s) { write_file(s + "/src/b.txt", "bee (agent)\n"); });
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied_paths, std::vector<std::string>{"src/b.txt"});  // from the last apply, not again
  EXPECT_NE(::access((repo_ + "/new.txt").c_str(), F_OK), 0);
}

TEST_F(ApplyRoundsTest, WhenTheUsersHistoryCannotBeReadTheNextApplyIsUndecidedAndClosesTheRoute) {
  first_round();
  make_result([](const std::string& s) { write_file(s + "/src/b.txt", "bee (agent)\n"); });
  ASSERT_EQ(::unlink((repo_ + "/new.txt").c_str()), 0);  // a path back as before: history is asked
  // HEAD as it was at the last apply names a commit this repository no longer has.
  write_file(repo_ + "/.git/" + space_ref(kSpace, "applied-head"), std::string(40, 'e') + "\n");
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesUndecided);
  expect_only_marker(before, true);
}

// ---- interrupted applies: the intent refs and the read-back ----

class ApplyInterruptedTest : public ApplyTest {
 protected:
  // An apply of three paths stopped after `writes` of them, as a killed process leaves it.
  void interrupted_after(std::size_t writes) {
    code_in();
    result_ = make_result([](const std::string& s) {
      write_file(s + "/a.txt", "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven\n");
      write_file(s + "/src/b.txt", "bee (agent)\n");
      write_file(s + "/src/c.txt", "sea (agent)\n");
    });
    ApplyLimits stop;
    stop.testing_stop_after_writes = writes;
    expect_refused(apply(stop), Code::kInternal);
    ASSERT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applying")})), result_);
  }
  std::string interrupted_state() {
    Result<ApplyState> st = describe_apply_state(repo_, kSpace, {});
    EXPECT_TRUE(st) << st.error().message;
    return st ? st->interrupted : "";
  }
  bool has_ref(const char* leaf) { return testing::git_status(repo_, {"rev-parse", "--verify", "-q", space_ref(kSpace, leaf)}) == 0; }
  std::string result_;
};

TEST_F(ApplyInterruptedTest, NeverStartedIsDroppedAndAppliedAnew) {
  interrupted_after(0);
  EXPECT_EQ(interrupted_state(), "not_started");
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->recovered, "not_started");
  EXPECT_EQ(r->applied_paths.size(), 3u);
  EXPECT_EQ(work_tree_tree(), tree_of(result_));
  EXPECT_FALSE(has_ref("applying"));
  EXPECT_FALSE(has_ref("applying-manifest"));
}

TEST_F(ApplyInterruptedTest, FinishedButUnrecordedIsRecorded) {
  interrupted_after(3);
  EXPECT_EQ(interrupted_state(), "finished");
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->recovered, "finished");
  EXPECT_TRUE(r->nothing_to_apply);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applied")})), result_);
  EXPECT_FALSE(has_ref("applying"));
}

TEST_F(ApplyInterruptedTest, CutShortIsFinished) {
  interrupted_after(1);
  EXPECT_EQ(interrupted_state(), "cut_short");
  Result<ApplyState> st = describe_apply_state(repo_, kSpace, {});
  ASSERT_TRUE(st);
  EXPECT_NE(st->undecided.find("2 paths left"), std::string::npos) << st->undecided;
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->recovered, "cut_short");
  EXPECT_EQ(work_tree_tree(), tree_of(result_));
  EXPECT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applied")})), result_);
}

TEST_F(ApplyInterruptedTest, CutShortThenEditedIsPartlyAppliedAndClosesTheRoute) {
  interrupted_after(1);
  write_file(repo_ + "/src/c.txt", "sea (the user, meanwhile)\n");
  EXPECT_EQ(interrupted_state(), "edited_since");
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesPartlyApplied);
  // The route closes and the intent goes, in one transaction; the work tree is left alone.
  Allowed allowed;
  allowed.refs_dir = repo_ + "/.git/refs";
  allowed.space_id = kSpace;
  allowed.space_refs = {"changes-closed", "applying", "applying-from", "applying-head", "applying-manifest"};
  for (const auto& f : forbidden_changes(before, state(), allowed)) ADD_FAILURE() << f;
  EXPECT_TRUE(has_ref("changes-closed"));
  EXPECT_FALSE(has_ref("applying"));
  EXPECT_EQ(read_file(repo_ + "/src/c.txt"), "sea (the user, meanwhile)\n");
  expect_refused(apply(), Code::kChangesRouteClosed);
}

// A kill between a ref's lock file and its rename leaves the lock: every later write of that
// ref would be refused. Only spacectl writes the space's own refs (under the space's lock), so
// the next apply clears such locks and goes on.
TEST_F(ApplyInterruptedTest, LockFilesAKilledApplyLeftOnTheSpacesRefsAreCleared) {
  interrupted_after(1);
  const std::string folder = repo_ + "/.git/refs/openchamber/spaces/" + kSpace + "/";
  write_file(folder + "applying.lock", "");
  write_file(folder + "applied.lock", "");
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->recovered, "cut_short");
  EXPECT_EQ(work_tree_tree(), tree_of(result_));
  EXPECT_FALSE(has_ref("applying"));
  EXPECT_EQ(access((folder + "applying.lock").c_str(), F_OK), -1);
  EXPECT_EQ(access((folder + "applied.lock").c_str(), F_OK), -1);
}

// A write killed between its temporary file and the rename leaves the temporary beside its path;
// the next apply removes exactly those names (a user's file of a similar name stays).
TEST_F(ApplyInterruptedTest, TemporaryFilesAKilledWriteLeftAreRemoved) {
  interrupted_after(1);
  write_file(repo_ + "/src/.c.txt.openchamber-0123456789abcdef", "half a file");
  write_file(repo_ + "/src/.b.txt.openchamber-fedcba9876543210", "half another");
  write_file(repo_ + "/src/.c.txt.openchamber-mine", "the user's");
  write_file(repo_ + "/src/.c.txt.openchamber-0123456789abcdeF", "the user's too");
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->recovered, "cut_short");
  EXPECT_EQ(access((repo_ + "/src/.c.txt.openchamber-0123456789abcdef").c_str(), F_OK), -1);
  EXPECT_EQ(access((repo_ + "/src/.b.txt.openchamber-fedcba9876543210").c_str(), F_OK), -1);
  EXPECT_EQ(read_file(repo_ + "/src/.c.txt.openchamber-mine"), "the user's");
  EXPECT_EQ(read_file(repo_ + "/src/.c.txt.openchamber-0123456789abcdeF"), "the user's too");
  EXPECT_EQ(read_file(repo_ + "/src/c.txt"), "sea (agent)\n");
}

// The refs are written one at a time: the intent with `applying` last, the record with
// `applying` removed first. A kill after any prefix of either order is read back and finished,
// and no intent ref is left behind.
TEST_F(ApplyInterruptedTest, AKillAfterAnyPrefixOfTheRefWritesIsFinishedByTheNextApply) {
  interrupted_after(0);  // the whole intent, nothing written
  const std::string from = trim(git(repo_, {"rev-parse", space_ref(kSpace, "applying-from")}));
  const std::string head = trim(git(repo_, {"rev-parse", space_ref(kSpace, "applying-head")}));
  const std::string manifest =
      trim(git(repo_, {"rev-parse", space_ref(kSpace, "applying-manifest")}));
  const std::string old_tree = work_tree_tree();
  const std::vector<std::pair<std::string, std::string>> intent = {{"applying-from", from},
                                                                   {"applying-head", head},
                                                                   {"applying-manifest", manifest},
                                                                   {"applying", result_}};
  const auto set = [&](const std::string& leaf, const std::string& to) {
    if (to.empty()) {
      git(repo_, {"update-ref", "-d", space_ref(kSpace, leaf.c_str())});
    } else {
      git(repo_, {"update-ref", space_ref(kSpace, leaf.c_str()), to});
    }
  };
  const auto clear = [&] {
    for (const char* leaf : {"applied", "applied-from", "applied-head", "applying", "applying-from",
                             "applying-head", "applying-manifest"}) {
      (void)testing::git_status(repo_, {"update-ref", "-d", space_ref(kSpace, leaf)});
    }
  };
  const auto expect_finished = [&](const std::string& where) {
    Result<ChangesApplied> r = apply();
    ASSERT_TRUE(r) << where << ": " << r.error().message;
    EXPECT_EQ(work_tree_tree(), tree_of(result_)) << where;
    EXPECT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applied")})), result_) << where;
    for (const char* leaf : {"applying", "applying-from", "applying-head", "applying-manifest"}) {
      EXPECT_FALSE(has_ref(leaf)) << where << ": " << leaf << " left";
    }
    EXPECT_FALSE(has_ref("changes-closed")) << where;
  };
  // Killed while writing the intent (the work tree untouched): the first k refs of its order.
  for (std::size_t k = 0; k < intent.size(); ++k) {
    clear();
    git(repo_, {"checkout", "-q", "HEAD", "--", "."});
    ASSERT_EQ(work_tree_tree(), old_tree);
    for (std::size_t i = 0; i < k; ++i) set(intent[i].first, intent[i].second);
    expect_finished("intent prefix " + std::to_string(k));
  }
  // Killed while recording (the work tree all new): the whole intent, then the first k of
  // applied, applied-from, applied-head, -applying, -applying-from, -applying-head,
  // -applying-manifest.
  const std::vector<std::pair<std::string, std::string>> record = {
      {"applied", result_},  {"applied-from", from}, {"applied-head", head},   {"applying", ""},
      {"applying-from", ""}, {"applying-head", ""},  {"applying-manifest", ""}};
  for (std::size_t k = 0; k < record.size(); ++k) {
    clear();
    for (const auto& [leaf, to] : intent) set(leaf, to);
    for (std::size_t i = 0; i < k; ++i) set(record[i].first, record[i].second);
    expect_finished("record prefix " + std::to_string(k));
  }
}

// Each step of an apply is named, in order, to the progress callback (spacectl prints them and
// its kill-at-each-step test stops at each).
TEST_F(ApplyInterruptedTest, EveryStepIsNamedInOrder) {
  code_in();
  result_ = make_result([](const std::string& s) {
    write_file(s + "/a.txt", "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    write_file(s + "/src/b.txt", "bee (agent)\n");
  });
  std::vector<std::string> lines;
  Result<ChangesApplied> r =
      apply_as_changes(repo_, kSpace, {}, [&lines](const std::string& l) { lines.push_back(l); });
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0].rfind("checking 2 paths new since start ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], "keeping the new content");
  EXPECT_EQ(lines[2], "recording the intent");
  EXPECT_EQ(lines[3], "writing 2 paths");
  EXPECT_EQ(lines[4], "wrote 1 of 2 paths");
  EXPECT_EQ(lines[5], "wrote 2 of 2 paths");
  EXPECT_EQ(lines[6], "recording the apply");
}

}  // namespace
}  // namespace controller::code
