// `spacectl apply` and `apply-state` end to end on a real repository: the repository comes from
// the space's host record, every answer is one JSON document with --json, and each refusal exits
// with its own status.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/testing/apply_fixture.h"
#include "controller/testing/spawn.h"

extern char** environ;

namespace controller::code {
namespace {

using nlohmann::json;
using testing::kSpace;
using testing::write_file;

class ApplyCliTest : public testing::ApplyTest {
 protected:
  void SetUp() override {
    ApplyTest::SetUp();
    state_ = dir_.path() + "/state";
    ASSERT_EQ(mkdir(state_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((state_ + "/spaces").c_str(), 0700), 0);
    const json record = {{"version", 1}, {"mode", "allowlist"}, {"domains", json::array()}, {"grants", json::array()},
                         {"code", {{"repository", repo_}, {"space_path", "/spaces/x/repo"}, {"project_path", "/spaces/x/repo"},
                                   {"base", std::string(40, '0')}, {"history", "sent"}}}};
    const std::string path = state_ + "/spaces/" + kSpace + ".json";
    std::ofstream(path) << record.dump() << "\n";
    chmod(path.c_str(), 0600);
  }
  struct Ran {
    int status = -1;
    json doc;
  };
  Ran spacectl(std::vector<std::string> args) {
    ProcessRequest r;
    r.argv = {SPACECTL, "--json", "--state-dir", state_};
    r.argv.insert(r.argv.end(), args.begin(), args.end());
    const ProcessOutcome o = run_process(r);
    Ran ran;
    ran.status = o.exited ? o.exit_code : -1;
    ran.doc = json::parse(o.out, nullptr, false);
    return ran;
  }
  // Starts `spacectl` told to stop itself right after the step line starting with `step`, and
  // waits until it has: it holds the space's lock there, as a slow or hung apply would. -1 when
  // it ended instead.
  pid_t stopped_at(const std::vector<std::string>& args, const std::string& step) {
    std::vector<std::string> argv = {SPACECTL, "--json", "--state-dir", state_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("SPACECTL_TEST_STOP_AT_STEP=" + step);
    const pid_t pid = controller::testing::spawn_quiet(argv, &env);
    if (pid < 0) return -1;
    int status = 0;
    if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) return -1;
    return pid;
  }
  std::string state_;
};

TEST_F(ApplyCliTest, EachAnswerIsOneDocumentAndEachRefusalItsOwnStatus) {
  Ran none = spacectl({"apply", kSpace, "--as-changes"});
  EXPECT_EQ(none.status, 24);  // no code in yet: no start ref
  EXPECT_EQ(spacectl({"apply", kSpace, "--as-branch", "work"}).status, 29);  // a branch needs only a result
  code_in();
  none = spacectl({"apply", kSpace, "--as-changes"});
  EXPECT_EQ(none.status, 29);
  EXPECT_EQ(none.doc["error"]["code"], "result_missing");
  make_result([](const std::string& s) { write_file(s + "/a.txt", "one\ntwo (agent)\nthree\nfour\nfive\nsix\nseven\n"); });

  EXPECT_EQ(spacectl({"apply", kSpace}).status, 2);  // neither way given
  EXPECT_EQ(spacectl({"apply", kSpace, "--as-branch", "w", "--as-changes"}).status, 2);
  Ran state = spacectl({"apply-state", kSpace});
  ASSERT_EQ(state.status, 0);
  EXPECT_EQ(state.doc["changes_route"], "open");
  EXPECT_EQ(state.doc["new_paths"], json::array({"a.txt"}));

  Ran branch = spacectl({"apply", kSpace, "--as-branch", "work"});
  ASSERT_EQ(branch.status, 0);
  EXPECT_EQ(branch.doc["branch"], "refs/heads/work");
  Ran again = spacectl({"apply", kSpace, "--as-branch", "work"});
  EXPECT_EQ(again.status, 32);
  EXPECT_EQ(again.doc["error"]["code"], "branch_exists");
  EXPECT_EQ(spacectl({"apply", kSpace, "--as-branch", "-x"}).status, 15);

  write_file(repo_ + "/a.txt", "one\ntwo (user)\nthree\nfour\nfive\nsix\nseven\n");
  Ran refused = spacectl({"apply", kSpace, "--as-changes"});
  EXPECT_EQ(refused.status, 38);
  EXPECT_EQ(refused.doc["error"]["code"], "changes_do_not_apply");
  EXPECT_EQ(spacectl({"apply", kSpace, "--as-changes"}).status, 33);
  state = spacectl({"apply-state", kSpace});
  EXPECT_EQ(state.doc["changes_route"], "closed");
}

TEST_F(ApplyCliTest, ChangesApplyAndTheSecondCallHasNothingToApply) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/new.txt", "new\n"); });
  Ran applied = spacectl({"apply", kSpace, "--as-changes"});
  ASSERT_EQ(applied.status, 0);
  EXPECT_EQ(applied.doc["status"], "applied");
  EXPECT_EQ(applied.doc["applied_paths"], json::array({"new.txt"}));
  Ran again = spacectl({"apply", kSpace, "--as-changes"});
  ASSERT_EQ(again.status, 0);
  EXPECT_EQ(again.doc["status"], "nothing_to_apply");
}

// A second apply (either way) or apply-state while an apply holds the space: space_busy at once,
// nothing written. The first, killed with SIGKILL in the middle of its writes, releases the
// space, apply-state names what it left, and the next apply finishes it.
TEST_F(ApplyCliTest, ASecondApplyWhileOneRunsIsSpaceBusyAndAKilledOneIsFinishedByTheNext) {
  code_in();
  const std::string result = make_result([](const std::string& s) {
    write_file(s + "/new.txt", "new\n");
    write_file(s + "/src/b.txt", "bee (agent)\n");
  });
  const pid_t first = stopped_at({"apply", kSpace, "--as-changes"}, "wrote 1 of 2 paths");
  ASSERT_GT(first, 0);
  const RepoState before = state();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"apply", kSpace, "--as-changes"},
        {"apply", kSpace, "--as-branch", "w"},
        {"apply-state", kSpace}}) {
    const Ran busy = spacectl(args);
    EXPECT_NE(busy.status, 0) << args[0];
    EXPECT_EQ(busy.doc["error"]["code"], "space_busy") << args[0] << ": " << busy.doc.dump();
  }
  for (const auto& f : forbidden_changes(before, state(), Allowed{})) ADD_FAILURE() << f;
  ASSERT_EQ(kill(first, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(first, &status, 0), first);

  const Ran left = spacectl({"apply-state", kSpace});
  ASSERT_EQ(left.status, 0) << left.doc.dump();
  EXPECT_EQ(left.doc["interrupted_apply"], "cut_short");
  const Ran next = spacectl({"apply", kSpace, "--as-changes"});
  ASSERT_EQ(next.status, 0) << next.doc.dump();
  EXPECT_EQ(next.doc["recovered"], "cut_short");
  EXPECT_EQ(work_tree_tree(), tree_of(result));
  EXPECT_EQ(testing::trim(testing::git(repo_, {"rev-parse", space_ref(kSpace, "applied")})),
            result);
}

}  // namespace
}  // namespace controller::code
