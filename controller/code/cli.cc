#include "controller/code/cli.h"

#include <iostream>

#include "controller/records.h"

#include "controller/code/snapshot.h"
#include "controller/code/transfer.h"

namespace controller::code {
namespace {

SpaceExec space_exec(Manager& manager, const std::string& id, const std::vector<std::string>& prefix, const std::string& image) {
  SpaceExec exec;
  exec.argv_prefix = prefix;
  exec.image = image;
  exec.run = [&manager, id](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    return manager.place.exec(id, ExecTarget::kSpace, argv, {}, timeout);
  };
  return exec;
}

TransferOptions options_for(int timeout_seconds, const std::function<void(const std::string&)>& progress) {
  TransferOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_seconds) * 1000);
  options.progress = progress ? progress : [](const std::string& line) { std::cerr << "spacectl: " << line << "\n"; };
  return options;
}

// Code in under a lock the caller holds.
Result<CodeBrought> code_in_locked(Manager& manager, const CodeInRequest& request) {
  const std::string& id = request.id;
  std::optional<Mode> mode = parse_mode(request.mode);
  if (!mode) return fail(Code::kUsage, "code in: --mode must be uncommitted or clean");
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  Result<std::vector<std::string>> prefix = manager.place.exec_argv(id);
  if (!prefix) return prefix.error();
  if (Result<void> ok = preflight(request.repo); !ok) return ok.error();
  if (record->code.repository.empty()) {
    // Written before anything moves (after the refusals that need only the repository): a code in that dies midway leaves its start ref in the
    // repository, and `code forget` / `space remove` find it from here.
    record->code.repository = request.repo;
    if (Result<void> w = write_record(manager.state, id, *record); !w) return w.error();
  }
  Result<CodeInResult> r = bring_code_in(request.repo, id, *mode, space_exec(manager, id, *prefix, request.image),
                                         options_for(request.timeout_seconds, request.progress));
  if (!r) return r.error();
  // Read again: create --repo's progress steps rewrote the record meanwhile.
  if (Result<SpaceRecord> now = read_record(manager.state, id); now) record = std::move(now);
  record->code = {r->snapshot.top, r->space_path, r->project_path, r->snapshot.base, "pending"};
  if (Result<void> w = write_record(manager.state, id, *record); !w) return w.error();
  CodeBrought out;
  out.id = id;
  out.repository = r->snapshot.top;
  out.space_path = r->space_path;
  out.project_path = r->project_path;
  out.base = r->snapshot.base;
  out.staged = r->snapshot.staged;
  out.start = r->snapshot.start;
  out.branch = r->snapshot.branch;
  out.object_format = r->snapshot.object_format;
  out.name_copied = r->snapshot.user_name.has_value();
  out.email_copied = r->snapshot.user_email.has_value();
  for (const NotTravelling& n : r->snapshot.not_travelling) {
    out.not_travelling.push_back({n.path, n.reason});
  }
  out.space_git = r->space_git;
  if (!r->snapshot.user_name || !r->snapshot.user_email) {
    const std::string warning = "warning: user.name or user.email did not travel; the agent cannot commit until it is set";
    if (request.progress) {
      request.progress(warning);
    } else {
      std::cerr << "spacectl: " << warning << "\n";
    }
  }
  return out;
}

Result<CodeHistoryDone> history_locked(Manager& manager, const std::string& id, int timeout_seconds,
                                       const std::function<void(const std::string&)>& progress) {
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty() || record->code.base.empty()) {
    return fail(Code::kInvalidArgument, "code history " + id + ": no code in is recorded for this space");
  }
  Result<std::vector<std::string>> prefix = manager.place.exec_argv(id);
  if (!prefix) return prefix.error();
  TransferOptions options = options_for(timeout_seconds == 0 ? 1800 : timeout_seconds, progress);
  Result<HistoryStatus> h = send_history(record->code.repository, id, record->code.space_path, record->code.base,
                                         space_exec(manager, id, *prefix, ""), options);
  record->code.history = h ? std::string(history_word(*h)) : "failed";
  if (Result<void> w = write_record(manager.state, id, *record); !w) return w.error();
  if (!h) return h.error();
  return CodeHistoryDone{id, record->code.history};
}

}  // namespace

Result<CodeBrought> code_in(Manager& manager, const CodeInRequest& request) {
  // The space's lock over read, transfer and write, like every other change of its record.
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, request.id, "code in");
  if (!lock) return lock.error();
  return code_in_locked(manager, request);
}

Result<CodeHistoryDone> code_history(Manager& manager, const std::string& id, int timeout_seconds,
                                     const std::function<void(const std::string&)>& progress) {
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id, "code history");
  if (!lock) return lock.error();
  return history_locked(manager, id, timeout_seconds, progress);
}

Result<CodeFiles> code_files(const std::string& repo) {
  Result<FileListing> l = list_travelling_files(repo);
  if (!l) return l.error();
  return CodeFiles{std::move(*l)};
}

Result<CodeForgotten> code_forget(Manager& manager, const std::string& id) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "code forget " + id + ": not 12 lowercase hex");
  Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id, "code forget");
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(manager.state, id);
  if (!record) return record.error();
  if (record->code.repository.empty()) return CodeForgotten{id, std::nullopt, {}};
  Result<std::vector<std::string>> removed = remove_space_refs(record->code.repository, id);
  if (!removed) return removed.error();
  return CodeForgotten{id, record->code.repository, std::move(*removed)};
}

void forget_refs(const std::string& repository, const std::string& id) { (void)remove_space_refs(repository, id); }

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

Result<CodeBrought> run_code_in(const CodeCli& cli, Manager& manager,
                                const std::string& space_image) {
  return code_in(manager,
                 CodeInRequest{cli.id, cli.repo, cli.mode, space_image, cli.timeout_seconds, {}});
}

Result<CodeHistoryDone> run_code_history(const CodeCli& cli, Manager& manager) {
  return code_history(manager, cli.id, cli.timeout_seconds == 600 ? 1800 : cli.timeout_seconds, {});
}

Result<SpaceCreated> create_with_code(const CodeCli& cli, Manager& manager,
                                      const CreateRequest& request,
                                      const std::string& space_image) {
  return create_with_code(manager, request, CodeInRequest{{}, cli.create_repo, cli.create_mode, space_image, cli.timeout_seconds, {}});
}

Result<SpaceCreated> create_with_code(Manager& manager, CreateRequest request,
                                      const CodeInRequest& code) {
  auto say = [&](const std::string& line) {
    if (code.progress) {
      code.progress(line);
    } else {
      std::cerr << "spacectl: " << line << "\n";
    }
  };
  if (!parse_mode(code.mode)) return fail(Code::kUsage, "space create: --mode must be uncommitted or clean");
  // Refusals that need only the repository come before anything is created.
  if (Result<void> ok = preflight(code.repo); !ok) return ok.error();
  SpaceCreated created_doc;
  CodeBrought in_doc;
  {
    Result<SpaceLock> lock = manager.begin_create(request, code.repo);
    if (!lock) return lock.error();
    const std::string id = request.id;
    say("creating space " + id);
    Result<SpaceCreated> created = manager.create_locked(request);
    if (!created) {
      manager.finish_create(id, &created.error(), "");
      return created.error();
    }
    say("space " + id + " created; bringing the code in");
    if (Result<SpaceRecord> record = read_record(manager.state, id); record && record->creation.state == "preparing") {
      record->creation.step = "bringing_code";
      (void)write_record(manager.state, id, *record);
    }
    CodeInRequest c = code;
    c.id = id;
    Result<CodeBrought> in = code_in_locked(manager, c);
    if (!in) {
      Failure failure = in.error();
      Result<void> removed = manager.place.remove(id);
      (void)remove_space_refs(code.repo, id);
      failure.message += removed ? "; the space was removed" : "; removing the space failed: " + removed.error().message;
      manager.finish_create(id, &failure, "bringing_code");
      return failure;
    }
    manager.finish_create(id, nullptr, "");
    created_doc = std::move(*created);
    in_doc = std::move(*in);
  }
  const std::string id = request.id;
  say("space " + id + " is usable; sending history");
  SpaceCreated out = std::move(created_doc);
  out.code = std::move(in_doc);
  Result<CodeHistoryDone> h = code_history(manager, id, 1800, code.progress);
  out.code->history = h ? h->history : "failed";
  if (!h) say("warning: " + h.error().message + " (the space works with shallow history)");
  return out;
}

Result<SpaceRemoved> remove_with_refs(Manager& manager, const std::string& id) {
  Result<SpaceRecord> record = read_record(manager.state, id);
  Result<SpaceRemoved> removed = manager.remove(id);
  if (!removed) return removed;
  SpaceRemoved out = std::move(*removed);
  if (record && !record->code.repository.empty()) {
    Result<std::vector<std::string>> refs = remove_space_refs(record->code.repository, id);
    if (refs) {
      out.refs_removed = std::move(*refs);
    } else if (refs.error().code == Code::kProjectFolderMissing) {
      out.refs_removed = std::vector<std::string>{};  // went with the folder
    } else {
      out.refs_not_removed = refs.error().message;
    }
  }
  return out;
}

}  // namespace controller::code
