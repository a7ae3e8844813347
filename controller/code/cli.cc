#include "controller/code/cli.h"

#include <iostream>

#include "controller/code/snapshot.h"
#include "controller/code/transfer.h"

namespace controller::code {
namespace {

using nlohmann::json;

SpaceExec space_exec(Manager& manager, const std::string& id, const std::vector<std::string>& prefix, const std::string& image) {
  SpaceExec exec;
  exec.argv_prefix = prefix;
  exec.image = image;
  exec.run = [&manager, id](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    return manager.place.exec(id, ExecTarget::kSpace, argv, {}, timeout);
  };
  return exec;
}

TransferOptions options_for(const CodeCli& cli) {
  TransferOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(cli.timeout_seconds) * 1000);
  options.progress = [](const std::string& line) { std::cerr << "spacectl: " << line << "\n"; };
  return options;
}

json not_travelling_json(const std::vector<NotTravelling>& list) {
  json out = json::array();
  for (const auto& n : list) out.push_back({{"path", n.path}, {"reason", n.reason}});
  return out;
}

Result<json> code_in(const CodeCli& cli, Manager& manager, const std::string& id, const std::string& repo, const std::string& mode_text,
                     const std::string& image) {
  std::optional<Mode> mode = parse_mode(mode_text);
  if (!mode) return fail(Code::kUsage, "code in: --mode must be uncommitted or clean");
  // The space's lock over read, transfer and write, like every other change of its record.
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id);
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  Result<std::vector<std::string>> prefix = manager.place.exec_argv(id);
  if (!prefix) return prefix.error();
  Result<CodeInResult> r = bring_code_in(repo, id, *mode, space_exec(manager, id, *prefix, image), options_for(cli));
  if (!r) return r.error();
  record->code = {r->snapshot.top, r->space_path, r->project_path, r->snapshot.base, "pending"};
  if (Result<void> w = write_record(manager.state, id, *record); !w) return w.error();
  json out = {{"id", id},
              {"repository", r->snapshot.top},
              {"space_path", r->space_path},
              {"project_path", r->project_path},
              {"base", r->snapshot.base},
              {"staged", r->snapshot.staged},
              {"start", r->snapshot.start},
              {"branch", r->snapshot.branch.empty() ? json(nullptr) : json(r->snapshot.branch)},
              {"object_format", r->snapshot.object_format},
              {"identity_copied", {{"name", r->snapshot.user_name.has_value()}, {"email", r->snapshot.user_email.has_value()}}},
              {"not_travelling", not_travelling_json(r->snapshot.not_travelling)},
              {"space_git", r->space_git},
              {"history", "pending"}};
  if (!r->snapshot.user_name || !r->snapshot.user_email)
    std::cerr << "spacectl: warning: user.name or user.email did not travel; the agent cannot commit until it is set\n";
  return out;
}

Result<json> history(const CodeCli& cli, Manager& manager, const std::string& id) {
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id);
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty())
    return fail(Code::kInvalidArgument, "code history " + id + ": no code in is recorded for this space");
  Result<std::vector<std::string>> prefix = manager.place.exec_argv(id);
  if (!prefix) return prefix.error();
  TransferOptions options = options_for(cli);
  if (cli.timeout_seconds == 600) options.timeout = std::chrono::milliseconds(1800000);
  Result<HistoryStatus> h = send_history(record->code.repository, id, record->code.space_path, record->code.base,
                                         space_exec(manager, id, *prefix, ""), options);
  record->code.history = h ? std::string(history_word(*h)) : "failed";
  if (Result<void> w = write_record(manager.state, id, *record); !w) return w.error();
  if (!h) return h.error();
  return json{{"id", id}, {"history", record->code.history}};
}

Result<json> files(const std::string& repo) {
  Result<FileListing> l = list_travelling_files(repo);
  if (!l) return l.error();
  json files = json::array();
  for (const auto& f : l->files) files.push_back({{"path", f.path}, {"kind", f.kind}, {"size", f.size}});
  return json{{"files", files}, {"not_travelling", not_travelling_json(l->not_travelling)}, {"total_bytes", l->total_bytes}};
}

Result<json> forget(Manager& manager, const std::string& id) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "code forget " + id + ": not 12 lowercase hex");
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty()) return json{{"id", id}, {"refs_removed", json::array()}};
  Result<std::vector<std::string>> removed = remove_space_refs(record->code.repository, id);
  if (!removed) return removed.error();
  return json{{"id", id}, {"repository", record->code.repository}, {"refs_removed", *removed}};
}

}  // namespace

void add_code_cli(CLI::App& app, CLI::App* create, CodeCli& cli) {
  auto* code = app.add_subcommand("code", "the user's project in a space (code in, code out)")->require_subcommand(1);
  cli.in = code->add_subcommand("in", "snapshot the repository (committed, staged, unstaged, untracked not ignored) into the space");
  cli.in->add_option("id", cli.id, "space id (12 hex)")->required();
  cli.in->add_option("--repo", cli.repo, "the project folder (a git work tree or a folder in one)")->required();
  cli.in->add_option("--mode", cli.mode, "uncommitted (default) or clean (HEAD only)");
  cli.in->add_option("--timeout", cli.timeout_seconds, "host deadline of each transfer, seconds (default 600)")->check(CLI::Range(1, 86400));
  cli.history = code->add_subcommand("history", "send the full history the snapshot left out (the space works without it)");
  cli.history->add_option("id", cli.id, "space id (12 hex)")->required();
  cli.history->add_option("--timeout", cli.timeout_seconds, "host deadline, seconds (default 1800)")->check(CLI::Range(1, 86400));
  cli.files = code->add_subcommand("files", "what code in would carry, what it would not and why, total bytes");
  cli.files->add_option("--repo", cli.repo, "the project folder")->required();
  cli.forget = code->add_subcommand("forget", "remove this space's refs (refs/openchamber/spaces/<id>/) from the user's repository");
  cli.forget->add_option("id", cli.id, "space id (12 hex)")->required();
  add_code_out_cli(code, cli);
  create->add_option("--repo", cli.create_repo, "bring this project in (create → code in → history)");
  create->add_option("--mode", cli.create_mode, "with --repo: uncommitted (default) or clean");
}

std::optional<Result<json>> run_code_cli(const CodeCli& cli, Manager& manager, const std::string& space_image) {
  if (cli.in != nullptr && cli.in->parsed()) return code_in(cli, manager, cli.id, cli.repo, cli.mode, space_image);
  if (cli.history != nullptr && cli.history->parsed()) return history(cli, manager, cli.id);
  if (cli.files != nullptr && cli.files->parsed()) return files(cli.repo);
  if (cli.forget != nullptr && cli.forget->parsed()) return forget(manager, cli.id);
  if (cli.out != nullptr && cli.out->parsed()) return run_code_out(cli, manager);
  return std::nullopt;
}

Result<json> create_with_code(const CodeCli& cli, Manager& manager, const CreateRequest& request, const std::string& space_image) {
  if (!parse_mode(cli.create_mode)) return fail(Code::kUsage, "space create: --mode must be uncommitted or clean");
  // Refusals that need only the repository come before anything is created.
  if (Result<void> ok = preflight(cli.create_repo); !ok) return ok.error();
  std::cerr << "spacectl: creating the space\n";
  Result<json> created = manager.create(request);
  if (!created) return created.error();
  const std::string id = (*created)["id"].get<std::string>();
  std::cerr << "spacectl: space " << id << " created; bringing the code in\n";
  Result<json> in = code_in(cli, manager, id, cli.create_repo, cli.create_mode, space_image);
  if (!in) {
    Failure failure = in.error();
    Result<json> removed = manager.remove(id);
    failure.message += removed ? "; the space was removed" : "; removing the space failed: " + removed.error().message;
    return failure;
  }
  std::cerr << "spacectl: space " << id << " is usable; sending history\n";
  json out = *created;
  out["code"] = *in;
  Result<json> h = history(cli, manager, id);
  out["code"]["history"] = h ? (*h)["history"] : json("failed");
  if (!h) std::cerr << "spacectl: warning: " << h.error().message << " (the space works with shallow history)\n";
  return out;
}

Result<json> remove_with_refs(Manager& manager, const std::string& id) {
  Result<SpaceRecord> record = read_record(manager.state, id);
  Result<json> removed = manager.remove(id);
  if (!removed) return removed;
  json out = *removed;
  if (record && !record->code.repository.empty()) {
    Result<std::vector<std::string>> refs = remove_space_refs(record->code.repository, id);
    if (refs) out["refs_removed"] = *refs;
    else if (refs.error().code == Code::kProjectFolderMissing) out["refs_removed"] = json::array();  // went with the folder
    else out["refs_not_removed"] = refs.error().message;
  }
  return out;
}

}  // namespace controller::code
