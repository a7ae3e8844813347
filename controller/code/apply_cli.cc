#include "controller/code/apply_cli.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "controller/code/apply.h"
#include "controller/code/cli.h"
#include "controller/code/snapshot.h"

namespace controller::code {
namespace {

Result<std::string> repository_of(Manager& manager, const std::string& id, const char* what) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, std::string(what) + " " + id + ": not 12 lowercase hex");
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty()) {
    return fail(Code::kInvalidArgument, std::string(what) + " " + id + ": no code in is recorded for this space");
  }
  return record->code.repository;
}

}  // namespace

Result<Applied> apply_work(Manager& manager, const ApplyRequest& cli) {
  const bool as_branch = cli.as_branch;
  if (as_branch == cli.as_changes) return fail(Code::kUsage, "apply: give exactly one of --as-branch NAME or --as-changes");
  if (cli.remove_afterwards && !cli.as_changes) return fail(Code::kUsage, "apply: --remove-afterwards goes with --as-changes");
  const auto say = [&cli](const std::string& line) {
    if (cli.progress) cli.progress(line);
  };
  // One apply or apply-state of a space at a time: the space's lock (two processes, linked
  // worktrees of one repository included).
  Result<SpaceLock> acquired = SpaceLock::acquire(manager.state, cli.id);
  if (!acquired) return acquired.error();
  std::optional<SpaceLock> lock(std::move(*acquired));
  Result<std::string> repo = repository_of(manager, cli.id, "apply");
  if (!repo) return repo.error();
  say(as_branch ? "applying as branch " + cli.branch : std::string("applying as changes"));
  if (as_branch) {
    Result<BranchApplied> b = apply_as_branch(*repo, cli.id, cli.branch, cli.progress);
    if (!b) return b.error();
    Applied out{cli.id, *repo, std::move(*b), std::nullopt, std::nullopt, std::nullopt};
    return out;
  }
  Result<ChangesApplied> c = apply_as_changes(*repo, cli.id, ApplyLimits{}, cli.progress);
  if (!c) return c.error();
  if (!c->conflicted.empty()) {
    const std::string warning = "warning: " + std::to_string(c->conflicted.size()) +
                                " applied file(s) hold conflict markers the space left";
    if (cli.progress) {
      say(warning);
    } else {
      std::cerr << "spacectl: " << warning << "\n";
    }
  }
  Applied out{cli.id, *repo, std::nullopt, std::move(*c), std::nullopt, std::nullopt};
  if (cli.remove_afterwards) {
    lock.reset();  // remove takes the space's lock itself
    say("removing the space");
    Result<SpaceRemoved> removed = remove_with_refs(manager, cli.id);
    out.removed = static_cast<bool>(removed);
    if (!removed) out.remove_error = removed.error().message;
  }
  return out;
}

Result<ApplyStateShown> apply_state(Manager& manager, const std::string& id) {
  if (!is_space_id(id)) {
    return fail(Code::kInvalidArgument, "apply-state " + id + ": not 12 lowercase hex");
  }
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id);
  if (!lock) return lock.error();
  Result<std::string> repo = repository_of(manager, id, "apply-state");
  if (!repo) return repo.error();
  Result<ApplyState> s = describe_apply_state(*repo, id, ApplyLimits{});
  if (!s) return s.error();
  return ApplyStateShown{id, *repo, std::move(*s)};
}

void add_apply_cli(CLI::App& app, ApplyCli& cli) {
  cli.apply = app.add_subcommand("apply", "land the space's brought-out work as a new branch or as uncommitted changes");
  cli.apply->add_option("id", cli.id, "space id (12 hex)")->required();
  auto* branch = cli.apply->add_option("--as-branch", cli.branch, "a new branch at the result (an existing name is refused)");
  auto* changes = cli.apply->add_flag("--as-changes", cli.as_changes, "uncommitted changes in the work tree (only what is new since the last apply)");
  branch->excludes(changes);
  cli.apply->add_flag("--remove-afterwards", cli.remove_afterwards, "with --as-changes: remove the space once its work is applied");
  cli.state = app.add_subcommand("apply-state", "what the next apply --as-changes would do (reads the work tree; writes nothing)");
  cli.state->add_option("id", cli.id, "space id (12 hex)")->required();
}

Result<Applied> run_apply(const ApplyCli& cli, Manager& manager) {
  ApplyRequest request;
  request.id = cli.id;
  request.branch = cli.branch;
  request.as_branch = !cli.branch.empty() || cli.apply->count("--as-branch") != 0;
  request.as_changes = cli.as_changes;
  request.remove_afterwards = cli.remove_afterwards;
  // Tests only (README.md "An interrupted apply"): stop this process right after the step line
  // that starts with this text, so a test can kill it exactly there. Stopping ourselves is
  // nothing a user could not do with `kill -STOP`.
  const char* stop_at = std::getenv("SPACECTL_TEST_STOP_AT_STEP");
  const std::string stop = stop_at != nullptr ? stop_at : "";
  request.progress = [id = cli.id, stop](const std::string& line) {
    std::cerr << "spacectl: apply " << id << ": " << line << "\n" << std::flush;
    if (!stop.empty() && line.rfind(stop, 0) == 0) ::raise(SIGSTOP);
  };
  return apply_work(manager, request);
}

}  // namespace controller::code
