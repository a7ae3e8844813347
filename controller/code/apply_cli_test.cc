// `spacectl apply` and `apply-state` end to end on a real repository: the repository comes from
// the space's host record, every answer is one JSON document with --json, and each refusal exits
// with its own status.
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/testing/apply_fixture.h"

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

}  // namespace
}  // namespace controller::code
