// `spacectl code out SPACE`: bring the space's work out into refs/openchamber/spaces/<id>/result
// and show what it holds. Registered by add_code_cli; the report's text form is in main.cc.
#include <iostream>

#include "controller/code/cli.h"
#include "controller/code/out.h"
#include "controller/code/out_steps.h"
#include "controller/records.h"

namespace controller::code {
namespace {

using nlohmann::json;

json listed(const std::vector<std::string>& paths) {
  json list = json::array();
  for (std::size_t i = 0; i < paths.size() && i < kShownPathsCap; ++i) list.push_back(paths[i]);
  return json{{"count", paths.size()}, {"paths", list}};
}

}  // namespace

void add_code_out_cli(CLI::App* code, CodeCli& cli) {
  cli.out = code->add_subcommand("out", "bring the space's work out: checked in quarantine, then refs/openchamber/spaces/<id>/result");
  cli.out->add_option("id", cli.id, "space id (12 hex)")->required();
  cli.out->add_option("--timeout", cli.timeout_seconds, "host deadline of the fetch, seconds (default 600)")->check(CLI::Range(1, 86400));
}

Result<json> run_code_out(const CodeCli& cli, Manager& manager) {
  CodeOutRequest request;
  request.id = cli.id;
  request.timeout_seconds = cli.timeout_seconds;
  request.progress = [](const std::string& line) { std::cerr << "spacectl: " << line << "\n"; };
  return code_out(manager, request);
}

Result<json> code_out(Manager& manager, const CodeOutRequest& request) {
  const std::string& id = request.id;
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "code out " + id + ": not 12 lowercase hex");
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id);
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty())
    return fail(Code::kSpaceStartMissing, "code out " + id + ": no code in is recorded for this space; work comes out only into the repository its code came from");
  Result<std::vector<std::string>> prefix = manager.place.exec_argv(id);
  if (!prefix) return prefix.error();
  SpaceExec exec;
  exec.argv_prefix = *prefix;
  exec.run = [&manager, id](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    return manager.place.exec(id, ExecTarget::kSpace, argv, {}, timeout);
  };
  OutOptions options;
  options.timeout =
      std::chrono::milliseconds(static_cast<long long>(request.timeout_seconds) * 1000);
  options.work_dir = manager.state;
  options.progress = request.progress;
  Result<BringOut> out = bring_code_out(record->code.repository, id, record->code.space_path, exec, options);
  if (!out) return out.error();
  out->base_commit = record->code.base;
  record->out = {out->result_commit, out->start_commit, out->space_head, out->changed.size(), out->changed_bytes};
  if (Result<void> w = write_record(manager.state, id, *record); !w) return w.error();

  json changed = json::array();
  for (std::size_t i = 0; i < out->changed.size() && i < kShownPathsCap; ++i) {
    const ChangedPath& c = out->changed[i];
    changed.push_back({{"path", c.path}, {"change", change_word(c.kind)}, {"old_mode", c.old_mode}, {"new_mode", c.new_mode},
                       {"old_bytes", c.old_bytes}, {"new_bytes", c.new_bytes}});
  }
  json links = json::array();
  for (std::size_t i = 0; i < out->symlinks.size() && i < kShownPathsCap; ++i)
    links.push_back({{"path", out->symlinks[i].path}, {"target", out->symlinks[i].target}, {"leaves_tree", out->symlinks[i].leaves_tree}});
  return json{{"id", id},
              {"repository", out->repository},
              {"result", out->result_commit},
              {"result_ref", result_ref_name(id)},
              {"start", out->start_commit},
              {"base", out->base_commit},
              {"space_head", out->space_head},
              {"made_commit", out->made_commit},
              {"changed_paths", out->changed.size()},
              {"changed", changed},
              {"changed_bytes", out->changed_bytes},
              {"changed_folders", out->changed_folders},
              {"new_objects", out->new_objects},
              {"new_bytes", out->new_bytes},
              {"transfer_bytes", out->transfer_bytes},
              {"nested_repositories", listed(out->nested_repositories)},
              {"unmerged", listed(out->unmerged)},
              {"symlinks", {{"count", out->symlinks.size()}, {"links", links}}}};
}

}  // namespace controller::code
