// Test fixture for code out: the bait project brought in through the stand-in for the place's
// exec (a script mapping /spaces/ to a temporary folder and running this host's git as the
// space's git), then brought out again. Every bring-out is wrapped in the state comparison: a
// refusal must leave the user's repository exactly as it was (not even an object), a success
// may add pack files and the result ref only. The stand-in's upload-pack can also hang with a
// grandchild, send garbage, or move the space's result ref before it answers; its write-tree can
// report a tree the test built, or its pack-objects can be made to send an object more.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/code/out.h"
#include "controller/code/repo_state.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/code/transfer.h"
#include "controller/process.h"

namespace controller::code::testing {

inline constexpr const char* kOutSpace = "0123456789ab";

inline constexpr const char* kOutStandIn = R"SH(#!/bin/sh
root="$1"; mode="$2"; shift 2
n=$#
for a in "$@"; do
  case "$a" in /spaces/*) a="$root${a#/spaces}";; esac
  set -- "$@" "$a"
done
shift $n
echo "$*" >> "$root/commands.log"
pack=no
for a in "$@"; do [ "$a" = upload-pack ] && pack=yes; done
if [ $pack = yes ]; then
  for a in "$@"; do repo="$a"; done
  case "$mode" in
    hang) sleep 300 & echo $! > "$root/grandchild.pid"; echo $$ > "$root/child.pid"; wait; exit 0;;
    garbage) printf 'zzzz'; sleep 5; exit 0;;
    move) /usr/bin/git -C "$repo" update-ref refs/openchamber/result "$(cat "$root/move-to")";;
    refuse) echo "fatal: the space says no" >&2; exit 1;;
    junk) GIT_CONFIG_PARAMETERS="'uploadpack.packobjectshook=$root/junk-hook.sh'"; export GIT_CONFIG_PARAMETERS;;
  esac
fi
# A space whose git lies about the tree it wrote (the host must check what it then gets).
if [ "$mode" = lietree ]; then
  for a in "$@"; do [ "$a" = write-tree ] && { cat "$root/tree-id"; exit 0; }; done
fi
exec "$@"
)SH";

class OutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    isolate_git_environment(home_.path());
    repo_ = dir_.path() + "/repo";
    make_bait(repo_);
    std::error_code removed;
    std::filesystem::remove_all(repo_ + "/nested", removed);
    ASSERT_FALSE(removed) << "remove " << repo_ << "/nested: " << removed.message();
    root_ = dir_.path() + "/spaces";
    mkdir(root_.c_str(), 0755);
    mkdir((root_ + "/" + kOutSpace).c_str(), 0755);
    state_ = dir_.path() + "/state";
    mkdir(state_.c_str(), 0700);
    stand_in_ = dir_.path() + "/stand-in.sh";
    write_file(stand_in_, kOutStandIn, 0755);
    TransferOptions options;
    options.timeout = std::chrono::milliseconds(60000);
    Result<CodeInResult> in = bring_code_in(repo_, kOutSpace, Mode::kUncommitted, exec("ok"), options);
    ASSERT_TRUE(in) << in.error().message;
    space_path_ = in->space_path;
    start_ = in->snapshot.start;
    inside_ = root_ + "/" + kOutSpace + "/" + in->snapshot.folder;
    git(inside_, {"config", "user.name", "Agent"});
    git(inside_, {"config", "user.email", "agent@example.invalid"});
  }

  SpaceExec exec(const std::string& mode) {
    SpaceExec e;
    e.argv_prefix = {"/bin/sh", stand_in_, root_, mode};
    e.image = "stand-in:" + mode;
    e.run = [this, mode](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) -> Result<ExecOutput> {
      ProcessRequest r;
      r.argv = {"/bin/sh", stand_in_, root_, mode};
      r.argv.insert(r.argv.end(), argv.begin(), argv.end());
      r.timeout = timeout;
      r.output_cap = 16u << 20;
      const ProcessOutcome o = run_process(r);
      if (!o.exited) return fail(Code::kCommandFailed, "stand-in exec: " + o.describe());
      return ExecOutput{o.exit_code, o.out, o.err};
    };
    return e;
  }

  OutOptions options() const {
    OutOptions o;
    o.timeout = std::chrono::milliseconds(60000);
    o.inner_margin_seconds = 2;
    o.work_dir = state_;
    return o;
  }

  Allowed allowed_after_success() const {
    Allowed a = allowed_for(repo_ + "/.git", kOutSpace);
    a.space_refs = {"start", "result"};
    a.space_refs.insert(a.space_refs.end(), also_allowed_space_refs_.begin(), also_allowed_space_refs_.end());
    a.loose_objects = false;
    a.new_packs = true;
    a.ref_may_move = true;
    return a;
  }

  // Brings out with the state comparison around it and checks no quarantine is left.
  Result<BringOut> out(const std::string& mode, const OutOptions& o) {
    const RepoState before = capture_state({repo_});
    Result<BringOut> r = bring_code_out(repo_, kOutSpace, space_path_, exec(mode), o);
    const Allowed allowed = r ? allowed_after_success() : Allowed{};
    for (const auto& f : forbidden_changes(before, capture_state({repo_}), allowed)) ADD_FAILURE() << f;
    EXPECT_EQ(quarantines_left(), 0u) << "a quarantine was left under " << state_;
    return r;
  }
  Result<BringOut> out(const std::string& mode = "ok") { return out(mode, options()); }
  // Leaves under refs/openchamber/spaces/<id>/ a test expects code out to add or remove too
  // (a stale `result.lock` it clears).
  std::vector<std::string> also_allowed_space_refs_;

  std::size_t quarantines_left() const {
    std::size_t n = 0;
    if (DIR* d = opendir((state_ + "/quarantine").c_str()); d != nullptr) {
      while (const dirent* e = readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
      closedir(d);
    }
    return n;
  }

  std::string user_result() const {
    std::string o;
    if (git_status(repo_, {"rev-parse", "--verify", "--quiet", result_ref_name(kOutSpace)}, &o) != 0) return "";
    return o.substr(0, 40);
  }

  // The space's git makes a commit of `tree` on HEAD and moves HEAD there, leaving index and work
  // tree alone (so the snapshot commits on top of it and it is part of the result's history).
  std::string plant_head(const std::string& tree, const std::string& message = "planted") {
    const std::string head = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
    const std::string c = git(inside_, {"commit-tree", tree, "-p", head, "-m", message}).substr(0, 40);
    git(inside_, {"update-ref", "HEAD", c});
    return c;
  }

  // A raw tree written past git's own checks (hash-object --literally).
  std::string literal_tree(const std::string& bytes) {
    return git(inside_, {"hash-object", "-t", "tree", "--literally", "-w", "--stdin"}, bytes).substr(0, 40);
  }
  std::string blob(const std::string& bytes) { return git(inside_, {"hash-object", "-w", "--stdin"}, bytes).substr(0, 40); }

  static std::string entry(const std::string& mode, const std::string& name, const std::string& hex) {
    return mode + " " + name + std::string(1, '\0') + raw_object_id(hex);
  }

  TempTree home_, dir_;
  std::string repo_, root_, state_, stand_in_, space_path_, start_, inside_;
};

}  // namespace controller::code::testing
