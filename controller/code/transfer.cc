#include "controller/code/transfer.h"

#include <algorithm>
#include <future>
#include <memory>
#include <regex>
#include <unordered_set>

#include "controller/code/exec_stream.h"
#include "controller/code/git2.h"
#include "controller/code/pack_writer.h"
#include "controller/code/project.h"
#include "controller/code/receive_pack.h"
#include "policy/number.h"

namespace controller::code {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kScriptTimeout{300000};  // fixed inner scripts
constexpr const char* kGit = "/usr/bin/git";
const std::string kZero(40, '0');

using receive_pack::Advertisement;
using receive_pack::is_hex40;
using receive_pack::read_advertisement;
using receive_pack::send_pack;
using receive_pack::shown;

// zlib's level for the packs code in and history send: measured (tests/bench/README.md
// "bench_code_in"), over a local exec pipe level 1 costs less host time than it saves in bytes.
constexpr int kPackLevel = 1;

// The snapshot's objects: the base commit, then the commits between it and the start (the staged
// and the working-tree snapshot), each with its tree and every tree and blob it reaches, once.
Result<void> collect_snapshot(git_repository* repo, PackWriter& pack, const Snapshot& snap,
                              const std::string& where) {
  git_oid base;
  git_oid_fromstr(&base, snap.base.c_str());
  if (auto r = pack.insert_commit(base); !r) return r;
  if (snap.start == snap.base) return {};
  git_revwalk* raw = nullptr;
  if (auto r = git2_check(git_revwalk_new(&raw, repo), where + ": walk"); !r) return r;
  Revwalk walk(raw);
  git_oid start;
  git_oid_fromstr(&start, snap.start.c_str());
  if (auto r =
          git2_check(git_revwalk_push(walk.get(), &start), where + ": walk from " + snap.start);
      !r) {
    return r;
  }
  if (auto r = git2_check(git_revwalk_hide(walk.get(), &base), where + ": hide " + snap.base); !r) {
    return r;
  }
  git_oid id;
  int rc = 0;
  while ((rc = git_revwalk_next(&id, walk.get())) == 0) {
    if (auto r = pack.insert_commit(id); !r) return r;
  }
  if (rc != GIT_ITEROVER) return git2_check(rc, where + ": walk the snapshot");
  return {};
}

// The history behind `base` that a space holding base's commit and tree lacks: every commit
// before base, and each tree and blob they reach that base's tree does not. A tree already known
// (in base's tree, or put in the pack) is not entered again: everything under it is known too.
class HistoryPack {
 public:
  HistoryPack(git_repository* repo, PackWriter& pack, std::string what)
      : repo_(repo), pack_(pack), what_(std::move(what)) {}

  Result<void> add(git_commit* base) {
    if (auto r = visit(*git_commit_tree_id(base), false); !r) return r;
    git_revwalk* raw = nullptr;
    if (auto r = git2_check(git_revwalk_new(&raw, repo_), what_ + ": walk"); !r) return r;
    Revwalk walk(raw);
    const unsigned int parents = git_commit_parentcount(base);
    for (unsigned int i = 0; i < parents; ++i) {
      if (auto r = git2_check(git_revwalk_push(walk.get(), git_commit_parent_id(base, i)),
                              what_ + ": walk from a parent of the base");
          !r) {
        return r;
      }
    }
    git_oid id;
    int rc = 0;
    while ((rc = git_revwalk_next(&id, walk.get())) == 0) {
      if (auto r = pack_.insert(id); !r) return r;
      git_commit* c = nullptr;
      if (auto r = git2_check(git_commit_lookup(&c, repo_, &id),
                              what_ + ": look up commit " + oid_hex(id));
          !r) {
        return r;
      }
      Commit commit(c);
      if (auto r = visit(*git_commit_tree_id(commit.get()), true); !r) return r;
    }
    if (rc != GIT_ITEROVER) return git2_check(rc, what_ + ": walk the history");
    return {};
  }

 private:
  // Marks a tree (and what it holds) known; with `insert`, puts what was not known in the pack.
  Result<void> visit(const git_oid& tree_id, bool insert) {
    if (!known_.emplace(reinterpret_cast<const char*>(tree_id.id), GIT_OID_RAWSZ).second) return {};
    if (insert) {
      if (auto r = pack_.insert(tree_id); !r) return r;
    }
    git_tree* raw = nullptr;
    if (auto r = git2_check(git_tree_lookup(&raw, repo_, &tree_id),
                            what_ + ": look up tree " + oid_hex(tree_id));
        !r) {
      return r;
    }
    Tree tree(raw);
    const std::size_t n = git_tree_entrycount(tree.get());
    for (std::size_t i = 0; i < n; ++i) {
      const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
      const git_oid* id = git_tree_entry_id(e);
      // A gitlink (a submodule's commit) is not in this repository: it never travels.
      const git_object_t type = git_tree_entry_type(e);
      if (type == GIT_OBJECT_TREE) {
        if (auto r = visit(*id, insert); !r) return r;
      } else if (type == GIT_OBJECT_BLOB &&
                 known_.emplace(reinterpret_cast<const char*>(id->id), GIT_OID_RAWSZ).second &&
                 insert) {
        if (auto r = pack_.insert(*id); !r) return r;
      }
    }
    return {};
  }

  git_repository* repo_;
  PackWriter& pack_;
  std::string what_;
  std::unordered_set<std::string> known_;  // raw ids
};

std::vector<std::string> inner(const SpaceExec& exec, const TransferOptions& options, const std::vector<std::string>& command) {
  const long long seconds = (options.timeout.count() + 999) / 1000 + options.inner_margin_seconds;
  std::vector<std::string> argv = exec.argv_prefix;
  argv.insert(argv.end(), {"/usr/bin/timeout", "-s", "KILL", std::to_string(seconds)});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Fixed commands inside run as argv through the place's exec, one program each: no shell and
// no script text, so nothing the host passes (a path, a branch, an identity) is ever parsed.
Result<ExecOutput> inside(const SpaceExec& exec, const std::vector<std::string>& argv) { return exec.run(argv, kScriptTimeout); }

// Runs each argv in turn; the first non-zero exit ends the sequence with that output.
Result<ExecOutput> inside_all(const SpaceExec& exec, const std::vector<std::vector<std::string>>& steps) {
  ExecOutput last;
  for (const auto& argv : steps) {
    Result<ExecOutput> r = inside(exec, argv);
    if (!r || r->exit_code != 0) return r;
    last = *r;
  }
  return last;
}

// A fixed command inside that reads `input` on its stdin (argv through the place's exec, no
// shell; inside under `timeout -s KILL`). What it prints is only shown.
Result<ExecOutput> inside_fed(const SpaceExec& exec, const TransferOptions& options,
                              const std::vector<std::string>& command, const std::string& input,
                              const std::string& what) {
  std::vector<std::string> argv = exec.argv_prefix;
  argv.insert(argv.end(),
              {"/usr/bin/timeout", "-s", "KILL",
               std::to_string(kScriptTimeout.count() / 1000 + options.inner_margin_seconds)});
  argv.insert(argv.end(), command.begin(), command.end());
  Result<std::unique_ptr<ExecStream>> started =
      ExecStream::start(argv, Clock::now() + kScriptTimeout, what);
  if (!started) return started.error();
  ExecStream& s = **started;
  if (auto r = s.write_all(input); !r) return r.error();
  s.close_stdin();
  std::string out;
  for (;;) {
    Result<std::string> chunk = s.read_some(4096);
    if (!chunk) return chunk.error();
    if (chunk->empty()) break;
    if (out.size() < 2000) out += *chunk;
  }
  Result<int> status = s.finish();
  if (!status) return status.error();
  return ExecOutput{*status, shown(out), s.stderr_tail()};
}

void say(const TransferOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

Result<std::string> probe_git(const std::string& space_id, const SpaceExec& exec) {
  Result<ExecOutput> out = exec.run({kGit, "--version"}, kScriptTimeout);
  const std::string image = exec.image.empty() ? "the space's image" : "image " + exec.image;
  if (!out) {
    if (out.error().code == Code::kSpaceNotFound || out.error().code == Code::kSpaceNotRunning) return out.error();
    return fail(Code::kSpaceGitUnusable, "code in " + space_id + ": " + image + " has no usable git: " + out.error().message);
  }
  const std::string first = shown(out->out.substr(0, out->out.find('\n')));
  int major = 0, minor = 0;
  if (out->exit_code != 0 || !parse_git_version(out->out, major, minor)) {
    return fail(Code::kSpaceGitUnusable, "code in " + space_id + ": " + image + " has no usable git (/usr/bin/git --version: exit " +
                                             std::to_string(out->exit_code) + " " + first + shown(out->err.substr(0, 200)) + ")");
  }
  if (major < kSpaceGitFloorMajor ||
      (major == kSpaceGitFloorMajor && minor < kSpaceGitFloorMinor)) {
    return fail(Code::kSpaceGitUnusable, "code in " + space_id + ": " + image + " has " + first + "; code in needs git " +
                                             std::to_string(kSpaceGitFloorMajor) + "." + std::to_string(kSpaceGitFloorMinor) + " or later");
  }
  return first;
}

// The tree id of a commit here, "" when it cannot be read.
std::string tree_of(git_repository* repo, const std::string& commit) {
  git_oid id;
  if (git_oid_fromstr(&id, commit.c_str()) < 0) return "";
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &id) < 0) return "";
  Commit c(raw);
  return oid_hex(*git_commit_tree_id(c.get()));
}

// What the two looks at the space found: its git's version, and whether the project path is
// taken (in any form, a dangling link included: one `test` with both primaries). Both only read,
// so they go at once (each exec is a round trip to the place).
struct SpaceLook {
  std::string path;
  Result<std::string> version;
  Result<ExecOutput> taken;
};

SpaceLook look_at_space(const std::string& space_id, const std::string& path,
                        const SpaceExec& exec) {
  auto taken = std::async(std::launch::async, [&] {
    return inside(exec, {"/bin/test", "-e", path, "-o", "-L", path});
  });
  Result<std::string> version = probe_git(space_id, exec);
  return SpaceLook{path, std::move(version), taken.get()};
}

Result<CodeInResult> transfer(Project& project, const std::string& space_id, const Snapshot& snap,
                              const SpaceExec& exec, const TransferOptions& options,
                              SpaceLook look) {
  CodeInResult result;
  result.snapshot = snap;
  result.space_path = "/spaces/" + space_id + "/" + snap.folder;
  result.project_path = snap.prefix.empty() ? result.space_path : result.space_path + "/" + snap.prefix;
  const std::string where = "code in " + space_id;
  // The probe's refusal comes first, as if it had run alone.
  if (look.path != result.space_path) look = look_at_space(space_id, result.space_path, exec);
  if (!look.version) return look.version.error();
  result.space_git = *look.version;
  say(options, "space git: " + *look.version);
  if (!look.taken) {
    return fail(Code::kCodeTransferFailed,
                where + ": look at " + result.space_path + ": " + look.taken.error().message);
  }
  if (look.taken->exit_code == 0) {
    return fail(Code::kSpacePathInUse,
                where + ": " + result.space_path +
                    " already exists in the space (remove this space and create a new one)");
  }
  std::vector<std::string> init_argv = {kGit, "init", "--quiet"};
  if (!snap.branch.empty()) init_argv.push_back("--initial-branch=" + snap.branch);
  init_argv.push_back(result.space_path);
  Result<ExecOutput> init = inside(exec, init_argv);
  if (!init) return fail(Code::kCodeTransferFailed, where + ": init: " + init.error().message);
  if (init->exit_code != 0) {
    return fail(Code::kCodeTransferFailed, where + ": git init inside exited " + std::to_string(init->exit_code) + ": " + shown(init->err));
  }
  say(options, "space repository: " + result.space_path);

  // The identity is set while the pack travels (receive-pack never writes the config; the two
  // `git config` runs follow each other, each takes the config's lock), so HEAD's reflog still
  // carries it. Waited for before any return below (a future's destructor waits).
  const std::string& p = result.space_path;
  std::vector<std::vector<std::string>> identity;
  if (snap.user_name) identity.push_back({kGit, "-C", p, "config", "user.name", *snap.user_name});
  if (snap.user_email) {
    identity.push_back({kGit, "-C", p, "config", "user.email", *snap.user_email});
  }
  auto identity_set = std::async(std::launch::async, [&] { return inside_all(exec, identity); });

  git_repository* repo = project.repo.get();
  // One receive-pack session carries the base (its commit and tree, marked shallow: the shallow
  // base needs receive.shallowUpdate, given on its command line so nothing but the identity is
  // written to the space's config) and the two snapshot commits, in one pack, under one command:
  // `refs/openchamber/start`, which reaches all three. One command only: git's receive-pack (2.39)
  // drops every command after the first one that adds a shallow commit, and each of ours would.
  // The other two refs are set in the unfold. The session starts before the pack is collected,
  // so the exec's start-up and our walk overlap.
  const std::string what = where + ": push the base and the snapshot";
  Result<std::unique_ptr<ExecStream>> started = ExecStream::start(
      inner(exec, options,
            {kGit, "-c", "receive.shallowUpdate=true", "receive-pack", result.space_path}),
      Clock::now() + options.timeout, what);
  if (!started) return started.error();
  ExecStream& stream = **started;
  Result<PackWriter> pack = PackWriter::make(repo, where, kPackLevel);
  if (!pack) return pack.error();
  if (auto r = collect_snapshot(repo, *pack, snap, where); !r) return r.error();
  git_oid base;
  git_oid_fromstr(&base, snap.base.c_str());
  git_commit* raw = nullptr;
  if (auto r =
          git2_check(git_commit_lookup(&raw, repo, &base), where + ": look up the base commit");
      !r) {
    return r.error();
  }
  Commit base_commit(raw);
  std::vector<std::string> shallow;
  if (git_commit_parentcount(base_commit.get()) > 0) shallow.push_back(snap.base);
  Result<Advertisement> adv = read_advertisement(stream, what);
  if (!adv) return adv.error();
  if (auto r = send_pack(stream, what, shallow, {{kZero, snap.start, "refs/openchamber/start"}},
                         [&pack](const receive_pack::PackSink& sink) { return pack->write(sink); });
      !r) {
    return r.error();
  }
  say(options, "sent the base " + snap.base.substr(0, 12) + " and the snapshot " +
                   snap.start.substr(0, 12) + " (" + std::to_string(pack->count()) + " objects)");

  // The unfold, two lines at once. Work tree: `read-tree -u --reset` the start commit (HEAD is not
  // read), then the index: `read-tree` the staged tree (both by id: their refs may not be there
  // yet). Refs: once the identity is set (so the reflogs carry it), one `update-ref --stdin`
  // creates `refs/openchamber/base` and `refs/openchamber/start-index` and sets HEAD to the base
  // (through the branch `init` named, or detached), as one transaction. Each line takes its own
  // locks (the index; the refs), none reads what the other writes.
  auto head_set = std::async(std::launch::async, [&]() -> Result<ExecOutput> {
    Result<ExecOutput> named = identity_set.get();
    if (!named || named->exit_code != 0) return named;
    std::string commands = "create refs/openchamber/base " + snap.base + "\n" +
                           "create refs/openchamber/start-index " + snap.staged + "\n";
    if (snap.branch.empty()) commands += "option no-deref\n";
    commands += "update HEAD " + snap.base + "\n";
    return inside_fed(exec, options,
                      {kGit, "-C", p, "update-ref", "-m", "openchamber: code in", "--stdin"},
                      commands, where + ": set the refs inside");
  });
  // When the work tree holds nothing the index does not (clean mode, or no unstaged and no
  // untracked change), the first read-tree leaves the index right already.
  std::vector<std::vector<std::string>> unfold_steps = {
      {kGit, "-C", p, "read-tree", "-u", "--reset", snap.start}};
  if (tree_of(repo, snap.staged).empty() ||
      tree_of(repo, snap.staged) != tree_of(repo, snap.start)) {
    unfold_steps.push_back({kGit, "-C", p, "read-tree", snap.staged});
  }
  Result<ExecOutput> unfold = inside_all(exec, unfold_steps);
  Result<ExecOutput> head = head_set.get();
  for (const Result<ExecOutput>* r : {&head, &unfold}) {
    if (!*r) return fail(Code::kCodeUnfoldFailed, where + ": unfold: " + (*r).error().message);
    if ((*r)->exit_code != 0) {
      return fail(Code::kCodeUnfoldFailed, where + ": unfold inside exited " +
                                               std::to_string((*r)->exit_code) + ": " +
                                               shown((*r)->err));
    }
  }
  say(options, "unfolded into " + result.project_path);
  return result;
}

}  // namespace

bool parse_git_version(const std::string& text, int& major, int& minor) {
  static const std::regex re("^git version ([0-9]{1,4})\\.([0-9]{1,4})(\\.[0-9]{1,6})?([ .\\n].*)?$", std::regex::extended);
  const std::string first = text.substr(0, text.find('\n'));
  std::smatch m;
  if (!std::regex_match(first, m, re)) return false;
  // At most four digits each (the pattern): they always fit.
  const std::optional<int> got_major = policy::parse_number<int>(m[1].str());
  const std::optional<int> got_minor = policy::parse_number<int>(m[2].str());
  if (!got_major || !got_minor) return false;
  major = *got_major;
  minor = *got_minor;
  return true;
}

std::string_view history_word(HistoryStatus status) {
  switch (status) {
    case HistoryStatus::kSent: return "sent";
    case HistoryStatus::kAlreadyComplete: return "already_complete";
    case HistoryStatus::kHostShallow: return "host_shallow";
  }
  return "sent";
}

Result<CodeInResult> bring_code_in(const std::string& repository, const std::string& space_id, Mode mode, const SpaceExec& exec,
                                   const TransferOptions& options) {
  if (options.timeout.count() < 1000 || options.timeout.count() > 86400000) {
    return fail(Code::kInvalidArgument, "code in: timeout must be 1,000 to 86,400,000 ms");
  }
  if (options.inner_margin_seconds < 1 || options.inner_margin_seconds > 3600) {
    return fail(Code::kInvalidArgument, "code in: inner margin must be 1 to 3,600 s");
  }
  // The looks at the space need only the project's folder name: they go while the snapshot is
  // taken (the first exec also pays the place's look at the container). A repository that does
  // not open gets its refusal from take_snapshot, and a snapshot refusal comes first.
  std::future<SpaceLook> look;
  if (Result<Project> early = open_project(repository); early) {
    const std::string path = "/spaces/" + space_id + "/" + space_folder_name(early->top);
    look = std::async(std::launch::async,
                      [&space_id, &exec, path] { return look_at_space(space_id, path, exec); });
  }
  Result<Snapshot> snap = take_snapshot(repository, space_id, mode);
  if (!snap) return snap.error();
  say(options, "snapshot: base " + snap->base.substr(0, 12) + ", start " + snap->start.substr(0, 12));
  Result<Project> project = open_project(repository);
  if (!project) return project.error();
  Result<CodeInResult> result = transfer(
      *project, space_id, *snap, exec, options,
      look.valid() ? look.get()
                   : look_at_space(space_id, "/spaces/" + space_id + "/" + snap->folder, exec));
  if (result) return result;
  Failure failure = result.error();
  if (auto removed = delete_start_ref(repository, space_id, snap->start); !removed) {
    failure.message += "; the start ref was left: " + removed.error().message;
  }
  return failure;
}

Result<HistoryStatus> send_history(const std::string& repository, const std::string& space_id, const std::string& space_path,
                                   const std::string& base, const SpaceExec& exec, const TransferOptions& options) {
  const std::string where = "code history " + space_id;
  if (!is_space_id(space_id)) return fail(Code::kInvalidArgument, where + ": not 12 lowercase hex");
  const std::string prefix = "/spaces/" + space_id + "/";
  if (space_path.rfind(prefix, 0) != 0 ||
      space_folder_name(space_path) != space_path.substr(prefix.size())) {
    return fail(Code::kInvalidArgument, where + ": space path " + space_path + " is not one code in makes");
  }
  if (!is_hex40(base)) return fail(Code::kInvalidArgument, where + ": base " + base + " is not a commit id");
  Result<Project> project = open_project(repository);
  if (!project) return project.error();
  git_repository* repo = project->repo.get();
  if (git_repository_is_shallow(repo) == 1) return HistoryStatus::kHostShallow;
  git_oid base_id;
  git_oid_fromstr(&base_id, base.c_str());
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &base_id) < 0) return fail(Code::kInvalidArgument, where + ": " + base + " is not a commit here");
  Commit base_commit(raw);

  // One receive-pack session into the space's own repository. Its advertisement lists the
  // space's shallow commits: none means the history is there already (a flush ends the session
  // with no command); exactly the base means it is still missing. Anything else (the agent made
  // the repository shallow elsewhere) is not ours to unshallow.
  const std::string what = where + ": push the history";
  Result<std::unique_ptr<ExecStream>> started =
      ExecStream::start(inner(exec, options, {kGit, "receive-pack", space_path}),
                        Clock::now() + options.timeout, what);
  if (!started) return fail(Code::kHistoryTransferFailed, started.error().message);
  ExecStream& stream = **started;
  // Collected while the exec starts (a second call, with the history already there, wastes it).
  Result<PackWriter> pack = PackWriter::make(repo, where, kPackLevel);
  if (!pack) return fail(Code::kHistoryTransferFailed, pack.error().message);
  HistoryPack history(repo, *pack, where);
  if (auto r = history.add(base_commit.get()); !r) {
    return fail(Code::kHistoryTransferFailed, r.error().message);
  }
  Result<Advertisement> adv = read_advertisement(stream, what);
  if (!adv) return fail(Code::kHistoryTransferFailed, adv.error().message);
  if (adv->shallow.empty()) {
    if (auto r = stream.write_all("0000"); !r) {
      return fail(Code::kHistoryTransferFailed, r.error().message);
    }
    stream.close_stdin();
    Result<int> status = stream.finish();
    if (!status) return fail(Code::kHistoryTransferFailed, status.error().message);
    if (*status != 0) {
      return fail(
          Code::kHistoryTransferFailed,
          what + ": receive-pack exited " + std::to_string(*status) + ": " + stream.stderr_tail());
    }
    return HistoryStatus::kAlreadyComplete;
  }
  if (adv->shallow != std::vector<std::string>{base}) {
    stream.kill_group();
    std::string listed;
    for (std::size_t i = 0; i < adv->shallow.size() && i < 3; ++i) {
      listed += (i == 0 ? "" : ", ") + adv->shallow[i];
    }
    return fail(Code::kHistoryTransferFailed, where + ": the space's repository is shallow at " +
                                                  listed + (adv->shallow.size() > 3 ? ", …" : "") +
                                                  ", not only at the base " + base);
  }
  say(options, "sending history: " + std::to_string(pack->count()) + " objects");
  // The command leaves the base where it is; it only carries the pack (receive-pack reads a pack
  // for any command that is not a deletion).
  if (auto r = send_pack(stream, what, {}, {{base, base, "refs/openchamber/base"}},
                         [&pack](const receive_pack::PackSink& sink) { return pack->write(sink); });
      !r) {
    return fail(Code::kHistoryTransferFailed, r.error().message);
  }
  // Every commit behind the base is there now: the base stops being a shallow boundary. git has
  // no command that drops a shallow line, so the file goes (it listed the base alone).
  Result<ExecOutput> unshallow =
      inside(exec, {"/bin/rm", "-f", "--", space_path + "/.git/shallow"});
  if (!unshallow || unshallow->exit_code != 0) {
    return fail(Code::kHistoryTransferFailed,
                where + ": remove the shallow mark inside: " +
                    (unshallow ? "exit " + std::to_string(unshallow->exit_code) + ": " +
                                     shown(unshallow->err)
                               : unshallow.error().message));
  }
  say(options, "history sent");
  return HistoryStatus::kSent;
}

}  // namespace controller::code
