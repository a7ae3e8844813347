// Code out on real Docker (label docker; skip without an engine, fail under CI=true): one space,
// its git the default image's. The agent's work comes out through `spacectl code out`; then the
// space turns hostile step by step (a hook planting an id, a tree named `.git` built past its
// git's checks, a 1.5 GB file of zeros, a never-ending upload-pack) and each refusal leaves the
// user's repository exactly as it was, not even an object added.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/out.h"
#include "controller/code/repo_state.h"
#include "controller/code/snapshot.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/code/testing/live_code.h"
#include "controller/process.h"
#include "tests/support/environment.h"

namespace controller::code {
namespace {

using nlohmann::json;
using testing::git;
using testing::write_file;

ProcessOutcome run(std::vector<std::string> argv, std::chrono::seconds timeout = std::chrono::seconds(120)) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.timeout = timeout;
  r.output_cap = 64u << 20;
  return run_process(r);
}

// printf format that writes exactly these bytes (octal escapes only, so no byte is special).
std::string printf_format(const std::string& bytes) {
  std::string out;
  char buffer[8];
  for (unsigned char c : bytes) {
    std::snprintf(buffer, sizeof buffer, "\\%03o", c);
    out += buffer;
  }
  return out;
}

// The shared code fixture (controller/code/testing/live_code.h): owner, state, HOME, the leftover
// check.
class CodeOutDockerTest : public testing::LiveCodeTest {
 protected:
  CodeOutDockerTest() : LiveCodeTest("codeout") {}
  std::string inside(const std::vector<std::string>& argv) const {
    return LiveCodeTest::inside(id_, argv);
  }
  std::string sh(const std::string& script) { return inside({"sh", "-c", script, "sh", path_}); }

  Allowed after_success() const {
    Allowed a = testing::allowed_for(repo_ + "/.git", id_);
    a.space_refs = {"start", "result"};
    a.loose_objects = false;
    a.new_packs = true;
    a.ref_may_move = true;
    return a;
  }
  // code out refused with `code`; the repository exactly as it was.
  void expect_refused(Code code, const std::string& what, const std::vector<std::string>& extra = {}) {
    const RepoState before = capture_state({repo_});
    std::vector<std::string> args = {"code", "out", id_};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessOutcome o = spacectl(args);
    EXPECT_EQ(o.exit_code, exit_status(code)) << what << ": " << o.out << o.err;
    EXPECT_NE(o.out.find(std::string(code_word(code))), std::string::npos) << what << ": " << o.out;
    for (const auto& f : forbidden_changes(before, capture_state({repo_}), Allowed{})) ADD_FAILURE() << what << ": " << f;
  }

  std::string repo_, id_, path_;
};

TEST_F(CodeOutDockerTest, WorkComesOutAndHostileResultsAreRefused) {
  GK_REQUIRE(ready(), "no Docker engine, images or seccomp profiles");
  repo_ = dir_.path() + "/project";
  testing::make_bait(repo_);
  const ProcessOutcome created = spacectl({"space", "create", "--name", "out", "--memory", "768m", "--repo", repo_});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const json d = json::parse(created.out, nullptr, false);
  id_ = d["id"].get<std::string>();
  path_ = d["code"]["space_path"].get<std::string>();

  // The agent commits, edits and adds; a planted hook would print an id into its parent's stdout.
  sh("cd \"$1\" && printf 'agent\\n' > committed.txt && git add committed.txt && git commit -qm agent && "
     "printf 'edited\\n' > second.txt && printf '#!/bin/sh\\n' > tool.sh && chmod 755 tool.sh && "
     "mkdir -p .planted && printf '#!/bin/sh\\necho 0123456789012345678901234567890123456789 > /proc/$PPID/fd/1\\ntouch /tmp/hook-ran\\n' "
     "> .planted/reference-transaction && chmod 755 .planted/reference-transaction && git config core.hooksPath .planted");
  const std::string status_before = sh("cd \"$1\" && git status --porcelain=v1 --untracked-files=all --branch");
  const std::string head = sh("cd \"$1\" && git -c core.hooksPath=/dev/null rev-parse HEAD").substr(0, 40);
  RepoState before = capture_state({repo_});
  const ProcessOutcome o = spacectl({"code", "out", id_});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json r = json::parse(o.out, nullptr, false);
  for (const auto& f : forbidden_changes(before, capture_state({repo_}), after_success())) ADD_FAILURE() << f;
  const std::string result = r["result"].get<std::string>();
  EXPECT_EQ(git(repo_, {"rev-parse", result_ref_name(id_)}).substr(0, 40), result);
  EXPECT_EQ(git(repo_, {"rev-parse", result + "^"}).substr(0, 40), head);
  EXPECT_EQ(r["changed_paths"], 4) << o.out;  // committed.txt, .planted/reference-transaction, second.txt, tool.sh
  EXPECT_EQ(git(repo_, {"ls-tree", result, "tool.sh"}).substr(0, 6), "100755");
  EXPECT_EQ(sh("cd \"$1\" && git status --porcelain=v1 --untracked-files=all --branch"), status_before);
  EXPECT_EQ(spacectl({"space", "exec", id_, "--", "test", "-e", "/tmp/hook-ran"}, false).exit_code, 1) << "a space hook ran";
  // Control: the planted hook does run when the space's git is not told otherwise.
  sh("cd \"$1\" && git update-ref refs/x HEAD > /dev/null");
  EXPECT_EQ(spacectl({"space", "exec", id_, "--", "test", "-e", "/tmp/hook-ran"}, false).exit_code, 0) << "control: the hook never ran";
  sh("cd \"$1\" && git -c core.hooksPath=/dev/null update-ref -d refs/x");

  // A tree holding `.git`, written with the space's own git past its checks, on the space's HEAD.
  const std::string blob = sh("cd \"$1\" && printf 'x\\n' | git hash-object -w --stdin").substr(0, 40);
  const std::string raw = testing::raw_object_id(blob);
  const std::string tree_bytes = "100644 .git" + std::string(1, '\0') + raw;
  const std::string tree =
      sh("cd \"$1\" && printf '" + printf_format(tree_bytes) + "' | git hash-object -t tree --literally -w --stdin").substr(0, 40);
  sh("cd \"$1\" && git -c core.hooksPath=/dev/null update-ref HEAD $(git commit-tree " + tree + " -p HEAD -m hostile)");
  expect_refused(Code::kResultRefused, "a tree named .git");
  sh("cd \"$1\" && git -c core.hooksPath=/dev/null update-ref HEAD " + head);

  // 1.5 GB of zeros (a sparse file) travels as a small pack and is refused by its size.
  sh("cd \"$1\" && busybox truncate -s 1500000000 zeros.bin");
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(Code::kResultTooLarge, "1.5 GB of zeros");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(300));
  sh("cd \"$1\" && rm zeros.bin");

  // A never-ending upload-pack (a pack-objects hook in the space's global config): the host
  // deadline kills the process group; the inner limit ends what runs inside.
  inside({"sh", "-c", "printf '#!/bin/sh\\ntouch /tmp/hang-started\\nexec sleep 1000\\n' > \"$HOME/hang.sh\" && chmod 755 \"$HOME/hang.sh\" && "
                      "git config --global uploadpack.packObjectsHook \"$HOME/hang.sh\""});
  const auto t1 = std::chrono::steady_clock::now();
  expect_refused(Code::kCodeOutFailed, "a never-ending upload-pack", {"--timeout", "5"});
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(60));
  // No host process (the docker CLI running the exec) is left; inside, the hook's sleeper (which
  // busybox's timeout alone would leave running) is gone too.
  const ProcessOutcome host_ps = run({"pgrep", "-f", "^[^ ]*docker exec .*upload-pack " + path_});
  EXPECT_NE(host_ps.exit_code, 0) << "a host process still runs: " << host_ps.out;
  EXPECT_EQ(spacectl({"space", "exec", id_, "--", "test", "-e", "/tmp/hang-started"}, false).exit_code, 0)
      << "control: the never-ending hook was never started";
  EXPECT_EQ(inside({"ps", "-o", "args"}).find("sleep 1000"), std::string::npos) << "the hook's sleeper outlived the fetch";

  EXPECT_EQ(spacectl({"space", "remove", id_}).exit_code, 0);
}

}  // namespace
}  // namespace controller::code
