// `spacectl code out SPACE`: bring the space's work out into refs/openchamber/spaces/<id>/result
// and show what it holds. Registered by add_code_cli; render.h gives the report's text and JSON.
#include <iostream>

#include "controller/code/cli.h"
#include "controller/code/out.h"
#include "controller/code/out_steps.h"
#include "controller/records.h"

namespace controller::code {

void add_code_out_cli(CLI::App* code, CodeCli& cli) {
  cli.out = code->add_subcommand("out", "bring the space's work out: checked in quarantine, then refs/openchamber/spaces/<id>/result");
  cli.out->add_option("id", cli.id, "space id (12 hex)")->required();
  cli.out->add_option("--timeout", cli.timeout_seconds, "host deadline of the fetch, seconds (default 600)")->check(CLI::Range(1, 86400));
}

Result<CodeOutDone> run_code_out(const CodeCli& cli, Manager& manager) {
  CodeOutRequest request;
  request.id = cli.id;
  request.timeout_seconds = cli.timeout_seconds;
  request.progress = [](const std::string& line) { std::cerr << "spacectl: " << line << "\n"; };
  return code_out(manager, request);
}

Result<CodeOutDone> code_out(Manager& manager, const CodeOutRequest& request) {
  const std::string& id = request.id;
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "code out " + id + ": not 12 lowercase hex");
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id);
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty()) {
    return fail(Code::kSpaceStartMissing, "code out " + id + ": no code in is recorded for this space; work comes out only into the repository its code came from");
  }
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
  return CodeOutDone{id, std::move(*out)};
}

}  // namespace controller::code
