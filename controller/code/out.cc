// Code out: refusals before the space, then snapshot inside → quarantine fetch → checks →
// promote. Nothing reaches the user's repository before every check passed.
#include "controller/code/out.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2/sys/odb_backend.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "controller/code/apply_rounds.h"  // clear_stale_ref_locks
#include "controller/code/out_steps.h"
#include "controller/code/project.h"
#include "controller/code/snapshot.h"

namespace controller::code {
namespace {

constexpr const char* kGit = "/usr/bin/git";
constexpr std::chrono::milliseconds kCleanupTimeout{30000};

// The inner `timeout` (busybox's in the default image) kills upload-pack only, not what it
// started (a pack-objects hook, its children). Every process of a fetch carries this variable;
// after a failed fetch, end_tagged_inside finds each process of the space that still carries it
// and kills it, with argv-only commands inside (no shell): `ls /proc`, `grep -z -x -F` over
// those environ files, `kill -9`. -z makes each NUL-separated variable a line of its own: a fixed
// string search (-F) of a whole environ file stops at its first NUL in busybox (strstr), so it
// only ever saw the first variable; -x then matches the whole NAME=token entry. The token is
// ours; what the space answers is only read for pids.
constexpr const char* kFetchTagName = "OPENCHAMBER_FETCH";
constexpr std::size_t kMaxTaggedScan = 32768;  // pids listed in the space's /proc we look at

std::string fetch_token() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 24; ++i) out += hex[rd() & 15];
  return out;
}

}  // namespace

std::vector<std::string> proc_pids(std::string_view listing) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < listing.size() && out.size() < kMaxTaggedScan) {
    std::size_t end = listing.find('\n', at);
    if (end == std::string_view::npos) end = listing.size();
    const std::string_view name = listing.substr(at, end - at);
    at = end + 1;
    if (name.empty() || name.size() > 10 ||
        name.find_first_not_of("0123456789") != std::string_view::npos || name[0] == '0') {
      continue;
    }
    if (name == "1") continue;  // the container's init: never ours to end
    out.emplace_back(name);
  }
  return out;
}

std::vector<std::string> tagged_pids(std::string_view grep_names) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < grep_names.size() && out.size() < kMaxTaggedScan) {
    std::size_t end = grep_names.find('\n', at);
    if (end == std::string_view::npos) end = grep_names.size();
    std::string_view line = grep_names.substr(at, end - at);
    at = end + 1;
    constexpr std::string_view kHead = "/proc/", kTail = "/environ";
    if (line.size() <= kHead.size() + kTail.size() || line.substr(0, kHead.size()) != kHead ||
        line.substr(line.size() - kTail.size()) != kTail) {
      continue;
    }
    const std::vector<std::string> pid =
        proc_pids(line.substr(kHead.size(), line.size() - kHead.size() - kTail.size()));
    if (pid.size() == 1) out.push_back(pid[0]);
  }
  return out;
}

std::string end_tagged_inside(const SpaceExec& exec, const std::string& tag) {
  const char* const gave_up =
      "could not end what the fetch left running inside (the inner limit will): ";
  Result<ExecOutput> listed = exec.run({"ls", "/proc"}, kCleanupTimeout);
  if (!listed || listed->exit_code != 0) {
    return gave_up + (listed ? std::string("ls /proc failed") : listed.error().message);
  }
  std::vector<std::string> grep = {"grep", "-z", "-l", "-s", "-x", "-F", "-e", tag, "--"};
  for (const std::string& pid : proc_pids(listed->out)) grep.push_back("/proc/" + pid + "/environ");
  Result<ExecOutput> found = exec.run(grep, kCleanupTimeout);
  // grep exits 1 when nothing matched (everything already ended) and 2 on unreadable files.
  if (!found) return gave_up + found.error().message;
  const std::vector<std::string> pids = tagged_pids(found->out);
  if (pids.empty()) return "nothing the fetch started is still running inside";
  std::vector<std::string> kill = {"kill", "-9"};
  kill.insert(kill.end(), pids.begin(), pids.end());
  Result<ExecOutput> killed = exec.run(kill, kCleanupTimeout);
  if (!killed) return gave_up + killed.error().message;
  return "ended " + std::to_string(pids.size()) + " process(es) the fetch left running inside";
}

namespace {

void say(const OutOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

Result<void> validate(const std::string& space_id, const std::string& space_path,
                      const OutOptions& options) {
  const std::string where = "code out " + space_id;
  if (!is_space_id(space_id))
    return fail(Code::kInvalidArgument,
                "code out: space id " + space_id + " is not 12 lowercase hex");
  const std::string prefix = "/spaces/" + space_id + "/";
  if (space_path.rfind(prefix, 0) != 0 || space_path.size() == prefix.size() ||
      space_folder_name(space_path) != space_path.substr(prefix.size()))
    return fail(Code::kInvalidArgument,
                where + ": space path " + space_path + " is not one code in makes");
  if (options.timeout.count() < 1000 || options.timeout.count() > 86400000)
    return fail(Code::kInvalidArgument, where + ": timeout must be 1,000 to 86,400,000 ms");
  if (options.inner_margin_seconds < 1 || options.inner_margin_seconds > 3600)
    return fail(Code::kInvalidArgument, where + ": inner margin must be 1 to 3,600 s");
  const OutLimits& l = options.limits;
  for (std::uint64_t v : {l.max_transfer_bytes, l.max_new_bytes, l.max_changed_bytes, l.max_entries,
                          l.max_object_bytes, l.max_steps})
    if (v < 1 || v > (1ull << 40))
      return fail(Code::kInvalidArgument, where + ": every limit must be 1 to 2^40");
  if (options.work_dir.empty() || options.work_dir[0] != '/')
    return fail(Code::kInvalidArgument, where + ": the work folder must be an absolute path");
  return {};
}

Result<std::string> commit_of_ref(git_repository* repo, const std::string& name) {
  git_oid id;
  if (git_reference_name_to_id(&id, repo, name.c_str()) < 0)
    return fail(Code::kSpaceStartMissing, name);
  return oid_hex(id);
}

// start and its first parents (the staged and base commits code in made), as `have` lines.
std::vector<std::string> haves_of(git_repository* repo, const std::string& start) {
  std::vector<std::string> out = {start};
  git_oid id;
  git_oid_fromstr(&id, start.c_str());
  for (int i = 0; i < 2; ++i) {
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, repo, &id) < 0) break;
    Commit commit(c);
    if (git_commit_parentcount(commit.get()) == 0) break;
    id = *git_commit_parent_id(commit.get(), 0);
    out.push_back(oid_hex(id));
  }
  return out;
}

// The reported commit must be the one the space described: the tree it wrote and, when it made
// a commit, exactly its HEAD as parent (otherwise the result is HEAD itself).
Result<void> matches_report(git_repository* quarantine, const InsideSnapshot& snap) {
  const std::string where = "code out: fetch into the quarantine: ";
  git_oid id;
  git_oid_fromstr(&id, snap.result.c_str());
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  git_odb* raw = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw, quarantine), where + "the quarantine's objects",
                          Code::kCodeOutFailed);
      !r)
    return r;
  Odb odb(raw);
  if (git_odb_read_header(&size, &type, odb.get(), &id) < 0)
    return fail(Code::kResultMissing,
                where + "the result " + snap.result +
                    " did not arrive, or is not the one the space said it made");
  if (type != GIT_OBJECT_COMMIT)
    return fail(Code::kResultMissing, where + "the result " + snap.result + " is not a commit");
  if (!snap.made_commit) return {};
  git_commit* c = nullptr;
  if (git_commit_lookup(&c, quarantine, &id) < 0)
    return fail(Code::kResultMissing, where + "read the result " + snap.result);
  Commit commit(c);
  if (oid_hex(*git_commit_tree_id(commit.get())) != snap.tree ||
      git_commit_parentcount(commit.get()) != 1 ||
      oid_hex(*git_commit_parent_id(commit.get(), 0)) != snap.head)
    return fail(Code::kResultMissing, where + "the result " + snap.result +
                                          " is not the commit of tree " + snap.tree + " on " +
                                          snap.head + " the space said it made");
  return {};
}

bool copy_file(const std::string& from, const std::string& to) {
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return false;
  const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (out < 0) {
    close(in);
    return false;
  }
  bool ok = true;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(in, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(out, buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ok = false;
        break;
      }
      done += w;
    }
    if (!ok) break;
  }
  ok = fsync(out) == 0 && ok;
  close(in);
  ok = close(out) == 0 && ok;
  if (!ok) unlink(to.c_str());
  return ok;
}

int collect_oid(const git_oid* id, void* payload) {
  static_cast<std::vector<git_oid>*>(payload)->push_back(*id);
  return 0;
}

// The quarantine's one pack, copied as it is when every object in it passed the checks or is
// the user's already (the indexer appends the user's own objects that completed a thin pack).
// Copying streams; libgit2's packbuilder would hold the largest object and its compressed copy.
// false: anything else was sent along (or the pack is not alone), and nothing was written.
bool copy_clean_pack(const std::string& quarantine_path, const std::string& pack_dir,
                     const std::vector<git_oid>& objects, git_odb* user_odb) {
  const std::string from_dir = quarantine_path + "/objects/pack";
  std::vector<std::string> names;
  if (DIR* d = opendir(from_dir.c_str()); d != nullptr) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  if (names.size() != 2 || names[0].rfind("pack-", 0) != 0 ||
      names[1] != names[0].substr(0, names[0].size() - 4) + ".pack" ||
      names[0].size() != 5 + 40 + 4 || names[0].compare(45, 4, ".idx") != 0)
    return false;
  const std::string stem = names[0].substr(0, 45);
  git_odb_backend* backend = nullptr;
  if (git_odb_backend_one_pack(&backend, (from_dir + "/" + stem + ".idx").c_str()) < 0)
    return false;
  git_odb* raw = nullptr;
  if (git_odb_new(&raw) < 0) {
    backend->free(backend);
    return false;
  }
  Odb pack_odb(raw);
  if (git_odb_add_backend(pack_odb.get(), backend, 1) < 0) {
    backend->free(backend);
    return false;
  }
  std::vector<git_oid> in_pack;
  if (git_odb_foreach(pack_odb.get(), collect_oid, &in_pack) < 0) return false;
  const OidSet checked(objects.begin(), objects.end());
  for (const git_oid& id : in_pack)
    if (checked.count(id) == 0 && git_odb_exists(user_odb, &id) == 0) return false;
  struct stat st {};
  if (lstat((pack_dir + "/" + stem + ".pack").c_str(), &st) == 0 ||
      lstat((pack_dir + "/" + stem + ".idx").c_str(), &st) == 0)
    return false;  // the same pack is there already: let the packbuilder write a pack of its own
  // The pack first, its index last: a pack without an index is never read.
  const std::string token = fetch_token().substr(0, 8);
  for (const char* ext : {".pack", ".idx"}) {
    const std::string tmp = pack_dir + "/tmp_openchamber_" + token + ext;
    if (!copy_file(from_dir + "/" + stem + ext, tmp) ||
        rename(tmp.c_str(), (pack_dir + "/" + stem + ext).c_str()) != 0) {
      unlink(tmp.c_str());
      unlink((pack_dir + "/" + stem + ".pack").c_str());
      return false;
    }
  }
  return true;
}

Result<void> promote(git_repository* quarantine, const std::string& quarantine_path,
                     const Project& project, const std::vector<git_oid>& objects,
                     const std::string& space_id, const std::string& result, std::string& how) {
  const std::string where = "code out: promote the result: ";
  git_odb* raw_user = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw_user, project.repo.get()),
                          where + "the repository's objects", Code::kCodeOutFailed);
      !r)
    return r;
  Odb user(raw_user);
  how = objects.empty() ? "nothing new" : "the quarantine's pack";
  if (!objects.empty() &&
      !copy_clean_pack(quarantine_path, project.common_dir + "objects/pack", objects, user.get())) {
    how = "a pack of the checked objects";
    git_packbuilder* raw = nullptr;
    if (auto r = git2_check(git_packbuilder_new(&raw, quarantine), where + "new pack",
                            Code::kCodeOutFailed);
        !r)
      return r;
    Packbuilder pb(raw);
    git_packbuilder_set_threads(pb.get(), 1);
    for (const git_oid& id : objects)
      if (auto r = git2_check(git_packbuilder_insert(pb.get(), &id, nullptr),
                              where + "add " + oid_hex(id), Code::kCodeOutFailed);
          !r)
        return r;
    const std::string pack_dir = project.common_dir + "objects/pack";
    if (auto r = git2_check(git_packbuilder_write(pb.get(), pack_dir.c_str(), 0, nullptr, nullptr),
                            where + "write a pack into " + pack_dir, Code::kCodeOutFailed);
        !r)
      return r;
  }
  git_odb* raw_odb = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw_odb, project.repo.get()),
                          where + "the repository's objects", Code::kCodeOutFailed);
      !r)
    return r;
  Odb odb(raw_odb);
  git_odb_refresh(odb.get());
  git_oid id;
  git_oid_fromstr(&id, result.c_str());
  if (git_odb_exists(odb.get(), &id) == 0)
    return fail(Code::kCodeOutFailed,
                where + "the result " + result + " is not in the repository after the copy");
  // Code out runs under the space's lock, where only spacectl writes this space's refs: a
  // `.lock` beside them is what a killed spacectl left, and would refuse this write for ever.
  apply_detail::clear_stale_ref_locks(project.repo.get(), space_id);
  git_reference* ref = nullptr;
  const std::string name = result_ref_name(space_id);
  const std::string message = "openchamber: result of space " + space_id;
  if (auto r = git2_check(
          git_reference_create(&ref, project.repo.get(), name.c_str(), &id, 1, message.c_str()),
          where + "set " + name, Code::kCodeOutFailed);
      !r)
    return r;
  git_reference_free(ref);
  return {};
}

}  // namespace

std::string_view change_word(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded:
      return "added";
    case ChangeKind::kModified:
      return "modified";
    case ChangeKind::kDeleted:
      return "deleted";
    case ChangeKind::kTypeChanged:
      return "type_changed";
  }
  return "modified";
}

std::string result_ref_name(const std::string& space_id) {
  return "refs/openchamber/spaces/" + space_id + "/result";
}

Result<BringOut> bring_code_out(const std::string& repository, const std::string& space_id,
                                const std::string& space_path, const SpaceExec& exec,
                                const OutOptions& options) {
  if (auto r = validate(space_id, space_path, options); !r) return r.error();
  Result<Project> project = open_project(repository);
  if (!project) return project.error();
  Result<std::string> start = commit_of_ref(project->repo.get(), start_ref_name(space_id));
  if (!start)
    return fail(Code::kSpaceStartMissing,
                "code out " + space_id + ": " + project->top + " has no " +
                    start_ref_name(space_id) +
                    ": work comes out only into the repository its code came from");
  for (const std::string& gone : sweep_quarantines(options.work_dir))
    say(options, "removed a dead quarantine: " + gone);

  Result<InsideSnapshot> snap = snapshot_inside(exec, space_path);
  if (!snap) return snap.error();
  say(options, "the space's result: " + snap->result.substr(0, 12) +
                   (snap->made_commit ? " (a new commit on its HEAD)" : " (its HEAD)"));

  Result<Quarantine> quarantine =
      Quarantine::make(options.work_dir, space_id, project->common_dir + "objects");
  if (!quarantine) return quarantine.error();
  const long long seconds = (options.timeout.count() + 999) / 1000 + options.inner_margin_seconds;
  const std::string token = fetch_token();
  std::vector<std::string> argv = exec.argv_prefix;
  argv.insert(argv.end(),
              {"/bin/env", std::string(kFetchTagName) + "=" + token, "/usr/bin/timeout", "-s",
               "KILL", std::to_string(seconds), kGit, "-c", "core.hooksPath=/dev/null", "-c",
               "uploadpack.allowAnySHA1InWant=true", "upload-pack", space_path});
  Result<FetchStats> fetched = fetch_into(*quarantine, argv, options.timeout, snap->result,
                                          haves_of(project->repo.get(), *start), options.limits);
  if (!fetched) {
    const std::string ended = end_tagged_inside(exec, std::string(kFetchTagName) + "=" + token);
    say(options, ended);
    return fetched.error();
  }
  say(options, "fetched " + std::to_string(fetched->bytes) + " bytes (" +
                   std::to_string(fetched->objects) + " objects) into the quarantine");
  if (auto r = quarantine->open(); !r) return r.error();
  if (auto r = matches_report(quarantine->repo(), *snap); !r) return r.error();

  git_odb* raw_odb = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw_odb, project->repo.get()),
                          "code out: the repository's objects", Code::kCodeOutFailed);
      !r)
    return r.error();
  Odb user_odb(raw_odb);
  Result<Checked> checked =
      check_objects(quarantine->repo(), user_odb.get(), snap->result, options.limits);
  if (!checked) return checked.error();
  BringOut out;
  out.space_id = space_id;
  out.repository = project->top;
  out.result_commit = snap->result;
  out.start_commit = *start;
  out.space_head = snap->head;
  out.made_commit = snap->made_commit;
  out.unmerged = snap->unmerged;
  out.symlinks = checked->symlinks;
  out.new_objects = checked->new_objects.size();
  out.new_bytes = checked->new_bytes;
  out.transfer_bytes = fetched->bytes;
  if (auto r = measure_change(quarantine->repo(), *start, snap->result, options.limits, out); !r)
    return r.error();
  say(options, "checked " + std::to_string(out.new_objects) + " new objects, " +
                   std::to_string(out.changed.size()) + " changed paths");

  std::string how;
  if (auto r = promote(quarantine->repo(), quarantine->path(), *project, checked->new_objects,
                       space_id, snap->result, how);
      !r)
    return r.error();
  say(options, "promoted to " + result_ref_name(space_id) + " (" + how + ")");
  return out;
}

}  // namespace controller::code
