// spacectl's apply commands: `apply SPACE --as-branch NAME | --as-changes [--remove-afterwards]`
// and `apply-state SPACE` (read-only). The repository is the one code in recorded for the space.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/code/results.h"
#include "controller/manager.h"

namespace controller::code {

struct ApplyCli {
  CLI::App* apply = nullptr;
  CLI::App* state = nullptr;
  std::string id, branch;
  bool as_changes = false, remove_afterwards = false;
};

void add_apply_cli(CLI::App& app, ApplyCli& cli);

// Apply as one value (the CLI's flags, or a `spacectl serve` request): exactly one of as_branch
// (with branch) and as_changes; remove_afterwards only with as_changes. progress: one line per
// step, may be empty.
struct ApplyRequest {
  std::string id, branch;
  bool as_branch = false, as_changes = false, remove_afterwards = false;
  std::function<void(const std::string&)> progress;
};
// `apply` under the space's lock.
Result<Applied> apply_work(Manager& manager, const ApplyRequest& request);
// `apply-state` (reads; writes nothing).
Result<ApplyStateShown> apply_state(Manager& manager, const std::string& id);

// `apply` from its flags (cli.apply parsed): progress lines go to stderr.
Result<Applied> run_apply(const ApplyCli& cli, Manager& manager);

}  // namespace controller::code
