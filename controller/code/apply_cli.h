// spacectl's apply commands: `apply SPACE --as-branch NAME | --as-changes [--remove-afterwards]`
// and `apply-state SPACE` (read-only). The repository is the one code in recorded for the space.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "controller/manager.h"

namespace controller::code {

struct ApplyCli {
  CLI::App* apply = nullptr;
  CLI::App* state = nullptr;
  std::string id, branch;
  bool as_changes = false, remove_afterwards = false;
};

void add_apply_cli(CLI::App& app, ApplyCli& cli);

// The command that was parsed, if one of ours; nullopt otherwise.
std::optional<Result<nlohmann::json>> run_apply_cli(const ApplyCli& cli, Manager& manager);

}  // namespace controller::code
