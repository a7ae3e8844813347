// Apply as a branch, apply as changes, and the read-only state of the changes route.
#include "controller/code/apply.h"

#include <algorithm>

#include "controller/code/apply_rounds.h"
#include "controller/code/project.h"
#include "controller/code/snapshot.h"

namespace controller::code {

using namespace apply_detail;

std::string space_ref(const std::string& space_id, const char* leaf) { return "refs/openchamber/spaces/" + space_id + "/" + leaf; }

namespace {

constexpr std::size_t kListedPaths = 100;

bool ref_exists(git_repository* repo, const std::string& name) {
  git_oid oid;
  return git_reference_name_to_id(&oid, repo, name.c_str()) == 0;
}

// Another branch that would share the name's place on disk: refs/heads/<name>/… or a folder of it.
std::string folder_neighbour(git_repository* repo, const std::string& name) {
  git_reference_iterator* raw = nullptr;
  const std::string glob = "refs/heads/" + name + "/*";
  if (git_reference_iterator_glob_new(&raw, repo, glob.c_str()) == 0) {
    const char* found = nullptr;
    const bool any = git_reference_next_name(&found, raw) == 0;
    const std::string n = any ? found : "";
    git_reference_iterator_free(raw);
    if (any) return n;
  }
  for (std::size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
    const std::string folder = "refs/heads/" + name.substr(0, slash);
    if (ref_exists(repo, folder)) return folder;
  }
  return {};
}

Result<Project> open_for_apply(const std::string& repository, const std::string& space_id, const char* what) {
  if (!is_space_id(space_id)) return fail(Code::kInvalidArgument, std::string(what) + ": space id " + space_id + ": not 12 lowercase hex");
  return open_project(repository);
}

Result<void> require_refs(const SpaceRefs& refs, const std::string& id, const std::string& top) {
  if (!refs.start) {
    return fail(Code::kSpaceStartMissing, "apply " + top + ": no " + space_ref(id, "start") +
                                              "; work comes out only into the repository its code came from");
  }
  if (!refs.result) {
    return fail(Code::kResultMissing, "apply " + top + ": no " + space_ref(id, "result") + "; bring the space's work out first (code out)");
  }
  return {};
}

bool has_marker(const std::string& bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    if (bytes.compare(at, 8, "<<<<<<< ") == 0) return true;
    const std::size_t nl = bytes.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return false;
}

std::optional<git_oid> head_commit(git_repository* repo) {
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo, "HEAD") != 0) return std::nullopt;
  return oid;
}

std::string listed(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size() && i < 10; ++i) s += (i == 0 ? "" : "; ") + items[i];
  if (items.size() > 10) s += "; … (" + std::to_string(items.size()) + " in all)";
  return s;
}

// Records a finished apply: applied, applied-from, applied-head, then the intent goes (`applying`
// first). Until `applying` is gone a later call reads the apply back as finished and records it
// again, so a kill between two of these refs leaves nothing it cannot redo.
Result<void> record_applied(git_repository* repo, const std::string& id, const git_oid& result, const git_oid& from,
                            const std::optional<git_oid>& head) {
  std::vector<RefUpdate> updates = {{"applied", result}, {"applied-from", from}, {"applied-head", head}};
  for (RefUpdate& u : intent_removal()) updates.push_back(u);
  return update_refs(repo, id, updates, "openchamber: applied the work of space " + id);
}

}  // namespace

Result<BranchApplied> apply_as_branch(const std::string& repository, const std::string& space_id,
                                      const std::string& name, const ApplyProgress& progress) {
  const auto say = [&progress](const std::string& line) {
    if (progress) progress(line);
  };
  Result<Project> project = open_for_apply(repository, space_id, "apply as branch");
  if (!project) return project.error();
  git_repository* repo = project->repo.get();
  if (!branch_name_ok(name) || name.find("@{") != std::string::npos || name == "HEAD") {
    return fail(Code::kInvalidBranchName, "apply as branch: \"" + name + "\" is not a branch name git accepts as it is");
  }
  const SpaceRefs refs = read_space_refs(repo, space_id);
  if (!refs.result) {
    return fail(Code::kResultMissing, "apply as branch " + project->top + ": no " + space_ref(space_id, "result") +
                                          "; bring the space's work out first (code out)");
  }
  const std::string ref = "refs/heads/" + name;
  if (ref_exists(repo, ref)) return fail(Code::kBranchExists, "apply as branch: " + ref + " already exists; it is never moved");
  if (const std::string n = folder_neighbour(repo, name); !n.empty()) {
    return fail(Code::kBranchExists, "apply as branch: " + ref + " cannot be made beside " + n);
  }
  say("creating " + ref + " at " + oid_hex(*refs.result));
  git_reference* created = nullptr;
  const std::string message = "openchamber: work of space " + space_id;
  // force = 0: create-only; a branch that appeared meanwhile is never moved.
  const int rc = git_reference_create(&created, repo, ref.c_str(), &*refs.result, 0, message.c_str());
  git_reference_free(created);
  const git_error* last = git_error_last();  // before ref_exists sets its own
  const std::string why =
      rc < 0 && last != nullptr && last->message != nullptr ? last->message : "locked";
  if (rc == GIT_EEXISTS || (rc < 0 && ref_exists(repo, ref))) return fail(Code::kBranchExists, "apply as branch: " + ref + " already exists");
  // refs/heads/ is the user's: a lock file there may be a running git's, so it is named, never
  // removed.
  if (rc == GIT_ELOCKED) {
    return fail(Code::kApplyFailed,
                "apply as branch: create " + ref + ": " + why +
                    "; if no git command is running in this repository, a killed one left that "
                    "lock file: remove it and run apply again");
  }
  if (auto r = git2_check(rc, "apply as branch: create " + ref, Code::kApplyFailed); !r) return r.error();
  return BranchApplied{ref, oid_hex(*refs.result)};
}

Result<ChangesApplied> apply_as_changes(const std::string& repository, const std::string& space_id,
                                        const ApplyLimits& limits, const ApplyProgress& progress) {
  const auto say = [&progress](const std::string& line) {
    if (progress) progress(line);
  };
  if (limits.max_changed_bytes == 0 || limits.max_changed_entries == 0 ||
      limits.read_back_ms == 0) {
    return fail(Code::kInvalidArgument, "apply as changes: every limit must be at least 1");
  }
  Result<Project> project = open_for_apply(repository, space_id, "apply as changes");
  if (!project) return project.error();
  git_repository* repo = project->repo.get();
  clear_stale_ref_locks(repo, space_id);
  SpaceRefs refs = read_space_refs(repo, space_id);
  if (auto r = require_refs(refs, space_id, project->top); !r) return r.error();
  if (refs.closed) {
    return fail(Code::kChangesRouteClosed, "apply as changes: an earlier refusal closed this route at " + oid_hex(*refs.closed) +
                                               "; from now on this space is applied as a branch, which holds its whole work, the rounds you already applied included");
  }
  const git_oid result = *refs.result;
  Result<WorkTree> opened = WorkTree::open(project->top);
  if (!opened) return opened.error();
  const WorkTree& tree = *opened;
  const Budget budget{std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.read_back_ms)};
  ChangesApplied out;

  // Intent refs without `applying`: a kill while the intent was being written or removed left
  // them (`applying` is set last and removed first); nobody reads them, so they go.
  if (!refs.applying && (refs.applying_from || refs.applying_head || refs.applying_manifest)) {
    if (auto r = update_refs(repo, space_id, intent_removal(),
                             "openchamber: dropped what a killed apply left");
        !r) {
      return r.error();
    }
    refs = read_space_refs(repo, space_id);
  }

  // An apply that was interrupted: finish or drop it, or close the route when it cannot be told.
  if (refs.applying) {
    say("reading back an interrupted apply of " + oid_hex(*refs.applying));
    Result<Interrupted> intent = read_intent(repo, tree, refs, limits, budget);
    if (!intent) return close_route(repo, space_id, *refs.applying, intent.error(), true);
    out.recovered = intent->state;
    // A write killed between its temporary name and the rename left that name beside its path.
    std::size_t leftovers = 0;
    for (const ManifestEntry& m : intent->entries) {
      leftovers += tree.remove_leftover_temporaries(m.path);
    }
    say("the interrupted apply: " + intent->state +
        (leftovers == 0 ? ""
                        : "; removed " + std::to_string(leftovers) + " temporary file(s) it left"));
    if (intent->state == "edited_since") {
      return close_route(repo, space_id, *refs.applying,
                         fail(Code::kChangesPartlyApplied, "apply as changes: an earlier apply of " + oid_hex(*refs.applying) +
                                                               " was interrupted and its paths changed since; part of it may be in your project already: look"),
                         true);
    }
    if (intent->state == "cut_short") {
      say("writing the " + std::to_string(intent->remaining.size()) + " paths it left");
      if (Result<void> done = finish_writes(repo, tree, intent->remaining); !done) {
        Failure why = done.error();
        why.code = why.code == Code::kChangesBlockedByLink ? why.code : Code::kChangesPartlyApplied;
        return close_route(repo, space_id, *refs.applying, why, true);
      }
    }
    say(intent->state == "not_started" ? "dropping the interrupted apply"
                                       : "recording the interrupted apply");
    const Result<void> r = intent->state == "not_started"
                               ? update_refs(repo, space_id, intent_removal(), "openchamber: dropped an apply that never started")
                               : record_applied(repo, space_id, *refs.applying, *refs.applying_from, refs.applying_head);
    if (!r) return r.error();
    refs = read_space_refs(repo, space_id);
  }

  Result<Base> base = decide_base(repo, tree, refs, limits, budget);
  if (!base) {
    const Code code = base.error().code;
    if (code != Code::kChangesDoNotApply && code != Code::kChangesUndecided) return base.error();
    return close_route(repo, space_id, result, base.error(), false);
  }
  out.result = oid_hex(result);
  out.from = oid_hex(base->from);
  Result<std::vector<Change>> changes = changes_between(repo, base->from, result);
  if (!changes) return changes.error();
  if (changes->empty()) {
    out.nothing_to_apply = true;
    return out;
  }
  say("checking " + std::to_string(changes->size()) + " paths new since " + base->reason + " " +
      out.from);
  if (auto r = measure(repo, *changes, limits); !r) return r.error();
  if (auto r = check_names(repo, project->top, name_rules_of(repo), base->from, result, *changes); !r) return r.error();
  Result<Plan> plan = make_plan(repo, tree, *changes, limits);
  if (!plan) return plan.error();
  if (!plan->blocked_by_link.empty()) {
    return close_route(repo, space_id, result,
                       fail(Code::kChangesBlockedByLink, "apply as changes: " + plan->blocked_by_link +
                                                             " in your work tree is a symbolic link on the way to a path the change writes; nothing was written"),
                       false);
  }
  if (!plan->conflicts.empty()) {
    std::string why = plan->ignored_in_the_way.empty()
                          ? (refs.applied ? "your project changed since the space's work was last applied here"
                                          : "your project changed since the space was made")
                          : "a file your ignore rules hide is in the way (" + listed(plan->ignored_in_the_way) + ")";
    return close_route(repo, space_id, result,
                       fail(Code::kChangesDoNotApply, "apply as changes: " + why + ": " + listed(plan->conflicts) + "; nothing was written"),
                       false);
  }

  // The content each write will leave, kept as blobs so an interrupted apply can be finished
  // (most are the result's own blobs already: only converted or merged content is new).
  say("keeping the new content");
  git_odb* odb_raw = nullptr;
  if (auto r = git2_check(git_repository_odb(&odb_raw, repo), "apply: open the object store", Code::kApplyFailed); !r) return r.error();
  const Odb odb(odb_raw);
  for (const Action& a : plan->actions) {
    if (a.kind != Action::Kind::kWriteFile && a.kind != Action::Kind::kWriteLink) continue;
    git_oid oid;
    if (git_oid_fromstr(&oid, a.post.c_str() + 1) == 0 && git_odb_exists(odb.get(), &oid) != 0) continue;
    if (auto r = git2_check(git_blob_create_from_buffer(&oid, repo, a.bytes.data(), a.bytes.size()),
                            "apply: keep the new " + a.path, Code::kApplyFailed);
        !r) {
      return r.error();
    }
  }
  const std::string manifest = manifest_text(plan->actions);
  git_oid manifest_id;
  if (auto r = git2_check(
          git_blob_create_from_buffer(&manifest_id, repo, manifest.data(), manifest.size()),
          "apply: write the intent", Code::kApplyFailed);
      !r) {
    return r.error();
  }
  const std::optional<git_oid> head = head_commit(repo);
  say("recording the intent");
  // `applying` last: without it the other three are leftovers nobody reads.
  if (auto r = update_refs(repo, space_id,
                           {{"applying-from", base->from},
                            {"applying-head", head},
                            {"applying-manifest", manifest_id},
                            {"applying", result}},
                           "openchamber: applying the work of space " + space_id);
      !r) {
    return r.error();
  }
  if (limits.testing_stop_after_writes != static_cast<std::size_t>(-1)) {
    (void)run_plan(tree, plan->actions, limits.testing_stop_after_writes);
    return fail(Code::kInternal, "apply as changes: stopped for a test after " + std::to_string(limits.testing_stop_after_writes) + " writes");
  }
  const std::size_t writes = static_cast<std::size_t>(
      std::count_if(plan->actions.begin(), plan->actions.end(),
                    [](const Action& a) { return a.kind != Action::Kind::kLeave; }));
  say("writing " + std::to_string(writes) + " paths");
  // About ten lines however many paths: the first write, every tenth part, the last.
  const std::size_t every = std::max<std::size_t>(1, writes / 10);
  const auto wrote = [&](std::size_t k) {
    if (k == 1 || k % every == 0 || k == writes) {
      say("wrote " + std::to_string(k) + " of " + std::to_string(writes) + " paths");
    }
  };
  if (Result<void> written = run_plan(tree, plan->actions, static_cast<std::size_t>(-1), wrote);
      !written) {
    Failure why = written.error();
    why.code = Code::kChangesPartlyApplied;
    why.message += "; part of it may be in your project already: look";
    return close_route(repo, space_id, result, why, true);
  }
  say("recording the apply");
  out.remembered = static_cast<bool>(record_applied(repo, space_id, result, base->from, head));
  for (const Action& a : plan->actions) {
    if (a.kind == Action::Kind::kLeave) continue;
    out.applied_paths.push_back(a.path);
    if (a.merged) out.merged_paths.push_back(a.path);
    if (a.kind == Action::Kind::kMakeFolder) out.nested_repositories.push_back(a.path);
    if (a.kind == Action::Kind::kWriteFile && has_marker(a.bytes)) out.conflicted.push_back(a.path);
  }
  std::sort(out.applied_paths.begin(), out.applied_paths.end());
  return out;
}

Result<ApplyState> describe_apply_state(const std::string& repository, const std::string& space_id, const ApplyLimits& limits) {
  Result<Project> project = open_for_apply(repository, space_id, "apply-state");
  if (!project) return project.error();
  git_repository* repo = project->repo.get();
  const SpaceRefs refs = read_space_refs(repo, space_id);
  if (!refs.start) {
    return fail(Code::kSpaceStartMissing, "apply-state " + project->top + ": no " + space_ref(space_id, "start") +
                                              "; work comes out only into the repository its code came from");
  }
  ApplyState state;
  if (refs.result) state.result = oid_hex(*refs.result);
  if (refs.applied) state.last_applied = oid_hex(*refs.applied);
  if (refs.closed) {
    state.route_open = false;
    state.closed_at = oid_hex(*refs.closed);
    return state;
  }
  Result<WorkTree> opened = WorkTree::open(project->top);
  if (!opened) return opened.error();
  const Budget budget{std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.read_back_ms)};
  SpaceRefs view = refs;
  if (refs.applying) {
    Result<Interrupted> intent = read_intent(repo, *opened, refs, limits, budget);
    if (!intent) {
      state.undecided = intent.error().message;
      return state;
    }
    state.interrupted = intent->state;
    if (intent->state == "edited_since") {
      state.undecided = "an interrupted apply left paths that changed since; the next apply closes the route";
      return state;
    }
    if (intent->state == "cut_short") {
      state.undecided = "an apply was cut short with " + std::to_string(intent->remaining.size()) +
                        " paths left; the next apply writes them first, then brings what is new";
      return state;
    }
    if (intent->state != "not_started") {  // the next apply records it first
      view.applied = refs.applying;
      view.applied_from = refs.applying_from;
      view.applied_head = refs.applying_head;
    }
  }
  if (!refs.result) return state;
  Result<Base> base = decide_base(repo, *opened, view, limits, budget);
  if (!base) {
    state.undecided = base.error().message;
    return state;
  }
  state.base = oid_hex(base->from);
  state.base_reason = base->reason;
  Result<std::vector<Change>> changes = changes_between(repo, base->from, *refs.result);
  if (!changes) return changes.error();
  state.new_path_count = changes->size();
  for (std::size_t i = 0; i < changes->size() && i < kListedPaths; ++i) state.new_paths.push_back((*changes)[i].path);
  state.new_paths_over_limit = !measure(repo, *changes, limits);
  return state;
}

}  // namespace controller::code
