// The change between two trees, what it is worth, and the dry run: every path read back from the
// work tree and turned into one action (or a conflict) before anything is written.
#include <algorithm>
#include <cstring>

#include "controller/code/apply_internal.h"

namespace controller::code::apply_detail {
namespace {

Side side_of(const git_diff_file& f) {
  Side s;
  if ((f.flags & GIT_DIFF_FLAG_EXISTS) == 0 || f.mode == 0) return s;
  s.mode = f.mode;
  s.oid = f.id;
  return s;
}

bool is_regular(const Side& s) { return s.mode == kModeFile || s.mode == kModeExec; }

std::size_t depth(const std::string& path) { return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')) + 1; }

Result<std::string> blob_bytes(git_repository* repo, const git_oid& oid, const std::string& path) {
  git_blob* raw = nullptr;
  if (auto r = git2_check(git_blob_lookup(&raw, repo, &oid),
                          "apply: read blob " + oid_hex(oid) + " of " + path, Code::kApplyFailed);
      !r) {
    return r.error();
  }
  std::string bytes(static_cast<const char*>(git_blob_rawcontent(raw)), static_cast<std::size_t>(git_blob_rawsize(raw)));
  git_blob_free(raw);
  return bytes;
}

std::string hash_of(const std::string& bytes) {
  git_oid oid;
  if (git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) < 0) return "?";
  return oid_hex(oid);
}

// A filter driver the user configured for this path: git would run a program of the user's
// here; we never run one, so such a path cannot be taken as changes (README.md "Filters").
std::string user_filter(git_repository* repo, git_config* config, const std::string& path) {
  const char* value = nullptr;
  if (git_attr_get(&value, repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, path.c_str(), "filter") < 0) return {};
  if (git_attr_value(value) != GIT_ATTR_VALUE_STRING || value == nullptr) return {};
  const std::string name = value;
  for (const char* key : {"clean", "smudge", "process"}) {
    git_config_entry* entry = nullptr;
    if (git_config_get_entry(&entry, config, ("filter." + name + "." + key).c_str()) == 0) {
      git_config_entry_free(entry);
      return name;
    }
  }
  return {};
}

}  // namespace

Result<std::vector<Change>> changes_between(git_repository* repo, const git_oid& from, const git_oid& to) {
  auto tree_of = [&](const git_oid& id, Tree& out) -> Result<void> {
    git_commit* c = nullptr;
    if (auto r = git2_check(git_commit_lookup(&c, repo, &id),
                            "apply: look up commit " + oid_hex(id), Code::kApplyFailed);
        !r) {
      return r.error();
    }
    Commit commit(c);
    git_tree* t = nullptr;
    if (auto r = git2_check(git_commit_tree(&t, commit.get()), "apply: tree of " + oid_hex(id), Code::kApplyFailed); !r) return r.error();
    out.reset(t);
    return {};
  };
  Tree a, b;
  if (auto r = tree_of(from, a); !r) return r.error();
  if (auto r = tree_of(to, b); !r) return r.error();
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  // A file that became a folder (or back) stays two changes: the file, and the paths under it.
  options.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* raw = nullptr;
  if (auto r = git2_check(git_diff_tree_to_tree(&raw, repo, a.get(), b.get(), &options),
                          "apply: compare " + oid_hex(from) + " with " + oid_hex(to),
                          Code::kApplyFailed);
      !r) {
    return r.error();
  }
  std::unique_ptr<git_diff, decltype(&git_diff_free)> diff(raw, git_diff_free);
  std::vector<Change> changes;
  const std::size_t n = git_diff_num_deltas(diff.get());
  changes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
    Change c;
    c.path = d->new_file.path != nullptr ? d->new_file.path : d->old_file.path;
    c.before = side_of(d->old_file);
    c.after = side_of(d->new_file);
    changes.push_back(std::move(c));
  }
  std::sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) { return x.path < y.path; });
  return changes;
}

Result<void> measure(git_repository* repo, const std::vector<Change>& changes, const ApplyLimits& limits) {
  const std::string advice = "; apply it as a branch, which holds any result";
  if (changes.size() > limits.max_changed_entries) {
    return fail(Code::kChangesTooLarge, "apply as changes: " + std::to_string(changes.size()) + " changed paths, over the cap of " +
                                            std::to_string(limits.max_changed_entries) + advice);
  }
  git_odb* odb_raw = nullptr;
  if (auto r = git2_check(git_repository_odb(&odb_raw, repo), "apply: open the object store", Code::kApplyFailed); !r) return r.error();
  Odb odb(odb_raw);
  std::uint64_t bytes = 0, folders = 0, steps = 0;
  const std::uint64_t step_cap = kStepsPerEntry * limits.max_changed_entries;
  std::string previous;
  for (const Change& c : changes) {
    for (const Side* s : {&c.before, &c.after}) {
      if (!s->present() || s->mode == kModeGitlink) continue;
      std::size_t size = 0;
      git_object_t type = GIT_OBJECT_INVALID;
      if (auto r = git2_check(git_odb_read_header(&size, &type, odb.get(), &s->oid),
                              "apply: size of " + c.path, Code::kApplyFailed);
          !r) {
        return r.error();
      }
      bytes += size;
    }
    // Folders entered anew (the listing is sorted, so a folder's paths come together).
    std::size_t common = 0;
    for (std::size_t i = 0; i < c.path.size() && i < previous.size() && c.path[i] == previous[i];
         ++i) {
      if (c.path[i] == '/') common = i + 1;
    }
    for (std::size_t i = common; i < c.path.size(); ++i) {
      if (c.path[i] != '/') continue;
      ++folders;
      steps += depth(c.path.substr(0, i));
    }
    steps += depth(c.path);
    previous = c.path;
    if (bytes > limits.max_changed_bytes) {
      return fail(Code::kChangesTooLarge, "apply as changes: more than " + std::to_string(limits.max_changed_bytes) +
                                              " bytes change (both sides counted)" + advice);
    }
    if (folders > limits.max_changed_entries) {
      return fail(Code::kChangesTooLarge, "apply as changes: more than " + std::to_string(limits.max_changed_entries) +
                                              " folders hold changed paths" + advice);
    }
    if (steps > step_cap) {
      return fail(Code::kChangesTooLarge, "apply as changes: the changed paths nest more than " + std::to_string(step_cap) +
                                              " folder steps in all" + advice);
    }
  }
  return {};
}

Result<Plan> make_plan(git_repository* repo, const WorkTree& tree, const std::vector<Change>& changes, const ApplyLimits& limits) {
  Plan plan;
  git_config* config_raw = nullptr;
  if (auto r = git2_check(git_repository_config_snapshot(&config_raw, repo),
                          "apply: read the configuration", Code::kApplyFailed);
      !r) {
    return r.error();
  }
  Config config(config_raw);
  for (const Change& c : changes) {
    if (!is_regular(c.before) && !is_regular(c.after)) continue;
    const std::string filter = user_filter(repo, config.get(), c.path);
    if (!filter.empty()) {
      return fail(Code::kChangesNeedFilter, "apply as changes: " + c.path + " is kept by your filter \"" + filter +
                                                "\", a program of yours that apply never runs; apply it as a branch");
    }
  }
  std::set<std::string> gone;
  for (const Change& c : changes) {
    if (c.before.present() && !c.after.present()) gone.insert(c.path);
  }

  std::vector<Action> removals, writes;
  for (const Change& c : changes) {
    const WtEntry e = tree.read(c.path, &gone, limits.max_changed_bytes);
    if (e.kind == WtKind::kLinkOnTheWay) {
      plan.blocked_by_link = e.blocker;
      return plan;
    }
    if (e.kind == WtKind::kNotFolderOnTheWay) {
      plan.conflicts.push_back(c.path + ": " + e.blocker + " is not a folder in your work tree");
      continue;
    }
    if (e.kind == WtKind::kUnreadable) {
      plan.conflicts.push_back(c.path + ": cannot be read in your work tree");
      continue;
    }
    Action a;
    a.path = c.path;
    a.pre = signature(e);
    const bool at_after = holds(repo, c.path, e, c.after);
    const bool at_before = !at_after && holds(repo, c.path, e, c.before);
    if (at_after) {
      a.kind = Action::Kind::kLeave;  // already as the space left it (the user made the same change)
    } else if (!c.before.present() && e.kind != WtKind::kAbsent) {
      int ignored = 0;
      if (git_ignore_path_is_ignored(&ignored, repo, c.path.c_str()) == 0 && ignored != 0) plan.ignored_in_the_way.push_back(c.path);
      plan.conflicts.push_back(c.path + ": already exists in your work tree" + (ignored != 0 ? " (an ignored file)" : ""));
      continue;
    } else if (!at_before && c.before.present() && !c.after.present()) {
      if (e.kind == WtKind::kAbsent) {
        a.kind = Action::Kind::kLeave;  // gone already, as the space wanted
      } else {
        plan.conflicts.push_back(c.path + ": changed in your work tree");
        continue;
      }
    } else if (!c.after.present()) {
      a.kind = Action::Kind::kRemove;
    } else if (at_before || !c.before.present()) {
      switch (c.after.mode) {
        case kModeGitlink: a.kind = Action::Kind::kMakeFolder; break;
        case kModeLink: {
          Result<std::string> target = blob_bytes(repo, c.after.oid, c.path);
          if (!target) return target.error();
          a.kind = Action::Kind::kWriteLink;
          a.bytes = std::move(*target);
          break;
        }
        default: {
          Result<std::string> bytes = blob_to_worktree(repo, c.path, c.after.oid);
          if (!bytes) return bytes.error();
          a.kind = Action::Kind::kWriteFile;
          a.bytes = std::move(*bytes);
          a.exec = c.after.mode == kModeExec;
        }
      }
    } else if (e.kind == WtKind::kFile && is_regular(c.before) && is_regular(c.after)) {
      // The user edited this file too: keep both edits when they touch different lines.
      Result<std::string> base = blob_bytes(repo, c.before.oid, c.path);
      Result<std::string> theirs = blob_bytes(repo, c.after.oid, c.path);
      Result<std::string> ours = convert_bytes(repo, c.path, e.bytes, GIT_FILTER_TO_ODB);
      if (!base) return base.error();
      if (!theirs) return theirs.error();
      if (!ours) return ours.error();
      git_merge_file_input in_base = GIT_MERGE_FILE_INPUT_INIT, in_ours = GIT_MERGE_FILE_INPUT_INIT, in_theirs = GIT_MERGE_FILE_INPUT_INIT;
      in_base.ptr = base->data();
      in_base.size = base->size();
      in_ours.ptr = ours->data();
      in_ours.size = ours->size();
      in_theirs.ptr = theirs->data();
      in_theirs.size = theirs->size();
      git_merge_file_result merged{};
      if (auto r = git2_check(git_merge_file(&merged, &in_base, &in_ours, &in_theirs, nullptr),
                              "apply: merge " + c.path, Code::kApplyFailed);
          !r) {
        return r.error();
      }
      const bool clean = merged.automergeable != 0 && merged.ptr != nullptr;
      std::string content = clean ? std::string(merged.ptr, merged.len) : std::string();
      git_merge_file_result_free(&merged);
      if (!clean) {
        plan.conflicts.push_back(c.path + ": you changed the same lines in your work tree");
        continue;
      }
      Result<std::string> bytes = convert_bytes(repo, c.path, content, GIT_FILTER_TO_WORKTREE);
      if (!bytes) return bytes.error();
      a.kind = Action::Kind::kWriteFile;
      a.bytes = std::move(*bytes);
      a.exec = c.after.mode == kModeExec;
      a.merged = true;
    } else {
      plan.conflicts.push_back(c.path + (e.kind == WtKind::kAbsent ? ": deleted in your work tree" : ": changed in your work tree"));
      continue;
    }
    switch (a.kind) {
      case Action::Kind::kWriteFile: a.post = (a.exec ? "x" : "f") + hash_of(a.bytes); break;
      case Action::Kind::kWriteLink: a.post = "l" + hash_of(a.bytes); break;
      case Action::Kind::kMakeFolder: a.post = "d"; break;
      case Action::Kind::kRemove: a.post = "-"; break;
      case Action::Kind::kLeave: a.post = a.pre; break;
    }
    (a.kind == Action::Kind::kRemove ? removals : writes).push_back(std::move(a));
  }
  // Children before their folders, so a folder the change empties can go.
  std::sort(removals.begin(), removals.end(), [](const Action& x, const Action& y) { return x.path > y.path; });
  plan.actions = std::move(removals);
  for (Action& a : writes) plan.actions.push_back(std::move(a));
  return plan;
}

Result<void> run_plan(const WorkTree& tree, const std::vector<Action>& actions, std::size_t at_most,
                      const std::function<void(std::size_t)>& after_write) {
  std::size_t written = 0;
  for (const Action& a : actions) {
    if (at_most-- == 0) break;
    Result<void> r;
    switch (a.kind) {
      case Action::Kind::kWriteFile: r = tree.write_file(a.path, a.bytes, a.exec); break;
      case Action::Kind::kWriteLink: r = tree.write_link(a.path, a.bytes); break;
      case Action::Kind::kMakeFolder: r = tree.make_folder(a.path); break;
      case Action::Kind::kRemove: r = tree.remove(a.path); break;
      case Action::Kind::kLeave: break;
    }
    if (!r) return r.error();
    if (a.kind != Action::Kind::kLeave && after_write) after_write(++written);
  }
  return {};
}

}  // namespace controller::code::apply_detail
