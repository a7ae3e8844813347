// spacectl's code commands (code in, history, files, forget) and the code-in half of
// `space create --repo` and `space remove`: registered here so main.cc only wires them in.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "controller/manager.h"

namespace controller::code {

struct CodeCli {
  CLI::App* in = nullptr;
  CLI::App* history = nullptr;
  CLI::App* files = nullptr;
  CLI::App* forget = nullptr;
  CLI::App* out = nullptr;  // code out (out_cli.cc)
  std::string id, repo, mode = "uncommitted";
  int timeout_seconds = 600;
  // `space create --repo DIR [--mode M]`
  std::string create_repo, create_mode = "uncommitted";
};

// Adds `code …` to app and --repo/--mode to create.
void add_code_cli(CLI::App& app, CLI::App* create, CodeCli& cli);

// The command that was parsed, if one of ours; nullopt otherwise. `space_image` names the image
// in a refusal of an image without git. Progress lines go to stderr.
std::optional<Result<nlohmann::json>> run_code_cli(const CodeCli& cli, Manager& manager, const std::string& space_image);

// `space create --repo`: create → code in → history, one JSON document. A failed code in removes
// the space again (it never became usable); a failed history is a warning (it works shallow).
Result<nlohmann::json> create_with_code(const CodeCli& cli, Manager& manager, const CreateRequest& request,
                                        const std::string& space_image);

// `code out ID` (out_cli.cc): registered under `code`, run by run_code_cli.
void add_code_out_cli(CLI::App* code, CodeCli& cli);
Result<nlohmann::json> run_code_out(const CodeCli& cli, Manager& manager);

// `space remove`: the space, its record, then the refs code in left in the user's repository.
Result<nlohmann::json> remove_with_refs(Manager& manager, const std::string& id);

}  // namespace controller::code
