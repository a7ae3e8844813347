// spacectl's code commands (code in, history, files, forget) and the code-in half of
// `space create --repo` and `space remove`: registered here so main.cc only wires them in.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/code/results.h"
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

// Code in as one value (the CLI's flags, or a `spacectl serve` request). progress: one line per
// step (the CLI prints it to stderr; serve sends it as a progress event).
struct CodeInRequest {
  std::string id, repo, mode = "uncommitted", image;
  int timeout_seconds = 600;
  std::function<void(const std::string&)> progress;
};

// `code in` under the space's lock (space_busy when another action holds it).
Result<CodeBrought> code_in(Manager& manager, const CodeInRequest& request);
// `code history`; timeout_seconds 0: 30 minutes.
Result<CodeHistoryDone> code_history(Manager& manager, const std::string& id, int timeout_seconds,
                                     const std::function<void(const std::string&)>& progress);
Result<CodeFiles> code_files(const std::string& repo);
Result<CodeForgotten> code_forget(Manager& manager, const std::string& id);
// `space create --repo`: the creation holds the new space's lock from before anything exists
// until its code has arrived (a crash in between leaves a `preparing` record sweep removes, refs
// included); history follows under a lock of its own. request.id may be preset.
Result<SpaceCreated> create_with_code(Manager& manager, CreateRequest request,
                                      const CodeInRequest& code);
// Removes refs/openchamber/spaces/<id>/ from a repository (for sweep); failures are ignored.
void forget_refs(const std::string& repository, const std::string& id);

// Adds `code …` to app and --repo/--mode to create.
void add_code_cli(CLI::App& app, CLI::App* create, CodeCli& cli);

// `code in` and `code history` from their flags (cli.in or cli.history parsed). `space_image`
// names the image in a refusal of an image without git. Progress lines go to stderr.
Result<CodeBrought> run_code_in(const CodeCli& cli, Manager& manager,
                                const std::string& space_image);
Result<CodeHistoryDone> run_code_history(const CodeCli& cli, Manager& manager);

// `space create --repo`: create → code in → history, one result. A failed code in removes
// the space again (it never became usable); a failed history is a warning (it works shallow).
Result<SpaceCreated> create_with_code(const CodeCli& cli, Manager& manager,
                                      const CreateRequest& request, const std::string& space_image);

// `code out ID` (out_cli.cc): registered under `code`; main.cc runs it.
void add_code_out_cli(CLI::App* code, CodeCli& cli);
Result<CodeOutDone> run_code_out(const CodeCli& cli, Manager& manager);

// Code out as one value (the CLI's flags, or a `spacectl serve` request). progress: one line per
// step (the CLI prints it to stderr; serve sends it as a progress event).
struct CodeOutRequest {
  std::string id;
  int timeout_seconds = 600;
  std::function<void(const std::string&)> progress;
};
// `code out` under the space's lock.
Result<CodeOutDone> code_out(Manager& manager, const CodeOutRequest& request);

// `space remove`: the space, its record, then the refs code in left in the user's repository.
Result<SpaceRemoved> remove_with_refs(Manager& manager, const std::string& id);

}  // namespace controller::code
