// The memory of applies kept in the user's repository (refs under refs/openchamber/spaces/<id>/),
// the intent of an apply in progress and its read-back, and the base of the next round: only what
// is new since the last apply, or from further back when the user threw applied work away.
#include "controller/code/apply_rounds.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

namespace controller::code::apply_detail {
namespace {

constexpr const char* kIdentityName = "OpenChamber";
constexpr const char* kIdentityEmail = "spaces@openchamber.invalid";

std::optional<git_oid> lookup(git_repository* repo, const std::string& name) {
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo, name.c_str()) != 0) return std::nullopt;
  return oid;
}

// Paths the user's own commits since the last apply changed (HEAD ^applied-head), among `wanted`.
Result<std::set<std::string>> changed_by_user(git_repository* repo, const SpaceRefs& refs, const std::set<std::string>& wanted,
                                              const Budget& budget) {
  std::set<std::string> changed;
  if (wanted.empty()) return changed;
  git_oid head;
  if (git_reference_name_to_id(&head, repo, "HEAD") != 0) return changed;  // no commit at HEAD: none of the user's
  git_revwalk* raw = nullptr;
  if (auto r = git2_check(git_revwalk_new(&raw, repo), "apply: walk your commits", Code::kApplyFailed); !r) return r.error();
  Revwalk walk(raw);
  if (auto r = git2_check(git_revwalk_push(walk.get(), &head), "apply: walk from HEAD", Code::kApplyFailed); !r) return r.error();
  if (refs.applied_head && git_revwalk_hide(walk.get(), &*refs.applied_head) != 0) {
    return fail(Code::kChangesUndecided, "apply as changes: the commit HEAD named at the last apply is gone; cannot tell your changes apart");
  }
  std::vector<std::string> specs(wanted.begin(), wanted.end());
  std::vector<char*> pointers;
  for (std::string& s : specs) pointers.push_back(s.data());
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  options.flags = GIT_DIFF_DISABLE_PATHSPEC_MATCH;
  options.pathspec = {pointers.data(), pointers.size()};
  git_oid id;
  while (git_revwalk_next(&id, walk.get()) == 0) {
    if (budget.spent()) return fail(Code::kChangesUndecided, "apply as changes: reading your commits back ran out of time");
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, repo, &id) != 0) continue;
    Commit commit(c);
    git_tree *tree = nullptr, *parent_tree = nullptr;
    git_commit* parent = nullptr;
    if (git_commit_tree(&tree, commit.get()) != 0) continue;
    Tree t(tree);
    if (git_commit_parentcount(commit.get()) > 0 && git_commit_parent(&parent, commit.get(), 0) == 0) {
      Commit p(parent);
      if (git_commit_tree(&parent_tree, p.get()) != 0) parent_tree = nullptr;
    }
    Tree pt(parent_tree);
    git_diff* diff = nullptr;
    if (auto r = git2_check(git_diff_tree_to_tree(&diff, repo, pt.get(), t.get(), &options),
                            "apply: read commit " + oid_hex(id), Code::kApplyFailed);
        !r) {
      return r.error();
    }
    const std::size_t n = git_diff_num_deltas(diff);
    for (std::size_t i = 0; i < n; ++i) {
      const git_diff_delta* d = git_diff_get_delta(diff, i);
      changed.insert(d->new_file.path != nullptr ? d->new_file.path : d->old_file.path);
      if (d->old_file.path != nullptr) changed.insert(d->old_file.path);
    }
    git_diff_free(diff);
  }
  return changed;
}

enum class Became : std::uint8_t { kKept, kEdited, kThrownAway };

// What became of each path of a pair: kept (holds `after`), thrown away (holds `before` and no
// commit of the user's touched it), or edited (anything else).
Result<std::map<std::string, Became>> what_became_of(git_repository* repo, const WorkTree& tree, const SpaceRefs& refs,
                                                    const std::vector<Change>& changes, const ApplyLimits& limits, const Budget& budget) {
  std::map<std::string, Became> out;
  std::set<std::string> back;
  for (const Change& c : changes) {
    if (budget.spent()) return fail(Code::kChangesUndecided, "apply as changes: reading your work tree back ran out of time");
    const WtEntry e = tree.read(c.path, nullptr, limits.max_changed_bytes);
    if (e.kind == WtKind::kUnreadable) {
      return fail(Code::kChangesUndecided, "apply as changes: " + c.path + " cannot be read back from your work tree");
    }
    Became b = Became::kEdited;
    if (holds(repo, c.path, e, c.after)) {
      b = Became::kKept;
    } else if (holds(repo, c.path, e, c.before)) {
      b = Became::kThrownAway;
      back.insert(c.path);
    }
    out[c.path] = b;
  }
  Result<std::set<std::string>> user = changed_by_user(repo, refs, back, budget);
  if (!user) return user.error();
  for (const std::string& p : *user) {
    if (auto it = out.find(p); it != out.end() && it->second == Became::kThrownAway) it->second = Became::kEdited;
  }
  return out;
}

std::string some_paths(const std::vector<std::string>& paths) {
  std::string s;
  for (std::size_t i = 0; i < paths.size() && i < 10; ++i) s += (i == 0 ? "" : ", ") + paths[i];
  if (paths.size() > 10) s += ", … (" + std::to_string(paths.size()) + " in all)";
  return s;
}

}  // namespace

SpaceRefs read_space_refs(git_repository* repo, const std::string& id) {
  SpaceRefs r;
  r.start = lookup(repo, space_ref(id, "start"));
  r.result = lookup(repo, space_ref(id, "result"));
  r.applied = lookup(repo, space_ref(id, "applied"));
  r.applied_from = lookup(repo, space_ref(id, "applied-from"));
  r.applied_head = lookup(repo, space_ref(id, "applied-head"));
  r.applying = lookup(repo, space_ref(id, "applying"));
  r.applying_from = lookup(repo, space_ref(id, "applying-from"));
  r.applying_head = lookup(repo, space_ref(id, "applying-head"));
  r.applying_manifest = lookup(repo, space_ref(id, "applying-manifest"));
  r.closed = lookup(repo, space_ref(id, "changes-closed"));
  return r;
}

Result<void> update_refs(git_repository* repo, const std::string& id,
                         const std::vector<RefUpdate>& updates, const std::string& message) {
  const std::string what = "apply: record in refs/openchamber/spaces/" + id + "/";
  git_signature* sig_raw = nullptr;
  if (auto r = git2_check(git_signature_now(&sig_raw, kIdentityName, kIdentityEmail), what,
                          Code::kApplyFailed);
      !r) {
    return r.error();
  }
  Signature sig(sig_raw);
  // One ref at a time, in the caller's order: a transaction of several refs is not one step on
  // disk (libgit2 renames each lock file in turn, in no set order), so a kill could leave any mix.
  // One ref alone is one rename.
  for (const RefUpdate& u : updates) {
    const std::string name = space_ref(id, u.leaf);
    if (!u.target && !lookup(repo, name)) continue;  // deleting what is not there
    git_transaction* raw = nullptr;
    if (auto r = git2_check(git_transaction_new(&raw, repo), what + u.leaf, Code::kApplyFailed);
        !r) {
      return r.error();
    }
    std::unique_ptr<git_transaction, decltype(&git_transaction_free)> tx(raw, git_transaction_free);
    int rc = git_transaction_lock_ref(tx.get(), name.c_str());
    if (rc == 0) {
      rc = u.target ? git_transaction_set_target(tx.get(), name.c_str(), &*u.target, sig.get(),
                                                 message.c_str())
                    : git_transaction_remove(tx.get(), name.c_str());
    }
    if (rc == 0) rc = git_transaction_commit(tx.get());
    if (rc == GIT_ELOCKED) {
      const git_error* e = git_error_last();
      return fail(Code::kApplyFailed,
                  what + u.leaf + ": " +
                      (e != nullptr && e->message != nullptr ? e->message : "locked") +
                      "; if no git command is running in this repository, a killed one left that "
                      "lock file: "
                      "remove it and run the command again");
    }
    if (auto r = git2_check(rc, what + u.leaf, Code::kApplyFailed); !r) return r.error();
  }
  return {};
}

void clear_stale_ref_locks(git_repository* repo, const std::string& id) {
  const char* common = git_repository_commondir(repo);
  if (common == nullptr) return;
  const std::string folder = std::string(common) + (std::string(common).ends_with("/") ? "" : "/") +
                             "refs/openchamber/spaces/" + id + "/";
  for (const char* leaf :
       {"start", "result", "applied", "applied-from", "applied-head", "applying", "applying-from",
        "applying-head", "applying-manifest", "changes-closed"}) {
    const std::string lock = folder + leaf + ".lock";
    struct stat st {};
    if (lstat(lock.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(lock.c_str());
  }
}

std::vector<RefUpdate> intent_removal() {
  return {{"applying", std::nullopt}, {"applying-from", std::nullopt}, {"applying-head", std::nullopt}, {"applying-manifest", std::nullopt}};
}

Failure close_route(git_repository* repo, const std::string& id, const git_oid& at, Failure why, bool drop_intent) {
  std::vector<RefUpdate> updates = {{"changes-closed", at}};
  if (drop_intent) {
    for (RefUpdate& u : intent_removal()) updates.push_back(u);
  }
  Result<void> closed = update_refs(repo, id, updates, "openchamber: changes route of space " + id + " closed");
  why.message += closed ? "; from now on this space is applied as a branch, which holds its whole work, the rounds you already applied included"
                        : "; closing the route failed too: " + closed.error().message;
  return why;
}

std::string manifest_text(const std::vector<Action>& actions) {
  std::string text;
  for (const Action& a : actions) text += a.pre + "\t" + a.post + "\t" + a.path + '\0';
  return text;
}

std::vector<ManifestEntry> parse_manifest(const std::string& text) {
  std::vector<ManifestEntry> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\0', start);
    if (end == std::string::npos) break;
    const std::string record = text.substr(start, end - start);
    start = end + 1;
    const std::size_t t1 = record.find('\t');
    const std::size_t t2 = t1 == std::string::npos ? t1 : record.find('\t', t1 + 1);
    if (t2 == std::string::npos) continue;
    out.push_back({record.substr(t2 + 1), record.substr(0, t1), record.substr(t1 + 1, t2 - t1 - 1)});
  }
  return out;
}

Result<Interrupted> read_intent(git_repository* repo, const WorkTree& tree, const SpaceRefs& refs, const ApplyLimits& limits,
                                const Budget& budget) {
  Interrupted out;
  if (!refs.applying) return out;
  if (!refs.applying_manifest || !refs.applying_from) {
    out.state = "edited_since";  // an intent we cannot read back
    return out;
  }
  git_blob* raw = nullptr;
  if (git_blob_lookup(&raw, repo, &*refs.applying_manifest) != 0) {
    out.state = "edited_since";
    return out;
  }
  const std::string text(static_cast<const char*>(git_blob_rawcontent(raw)), static_cast<std::size_t>(git_blob_rawsize(raw)));
  git_blob_free(raw);
  out.entries = parse_manifest(text);
  std::size_t written = 0, not_written = 0, other = 0;
  for (const ManifestEntry& m : out.entries) {
    if (budget.spent()) return fail(Code::kChangesUndecided, "apply as changes: reading an interrupted apply back ran out of time");
    const std::string now = signature(tree.read(m.path, nullptr, std::max<std::uint64_t>(limits.max_changed_bytes, 1)));
    if (now == m.post) {
      ++written;
    } else if (now == m.pre) {
      ++not_written;
      out.remaining.push_back(m);
    } else {
      ++other;
    }
  }
  if (other != 0) {
    out.state = "edited_since";
  } else if (not_written == 0) {
    out.state = "finished";
  } else if (written == 0) {
    out.state = "not_started";
  } else {
    out.state = "cut_short";
  }
  return out;
}

Result<void> finish_writes(git_repository* repo, const WorkTree& tree, const std::vector<ManifestEntry>& remaining) {
  for (const ManifestEntry& m : remaining) {
    const WtEntry e = tree.read(m.path, nullptr, 1);
    if (e.kind == WtKind::kLinkOnTheWay || e.kind == WtKind::kNotFolderOnTheWay) {
      return fail(Code::kChangesBlockedByLink, "apply as changes: " + e.blocker + " is a link or file on the way to " + m.path);
    }
    Result<void> r;
    if (m.post == "-") {
      r = tree.remove(m.path);
    } else if (m.post == "d") {
      r = tree.make_folder(m.path);
    } else {
      git_oid oid;
      if (m.post.size() != 41 || git_oid_fromstr(&oid, m.post.c_str() + 1) != 0) {
        return fail(Code::kApplyFailed, "apply: the interrupted apply's record of " + m.path + " is not readable");
      }
      git_blob* raw = nullptr;
      if (auto rr = git2_check(git_blob_lookup(&raw, repo, &oid), "apply: content of " + m.path, Code::kApplyFailed); !rr) return rr.error();
      const std::string bytes(static_cast<const char*>(git_blob_rawcontent(raw)), static_cast<std::size_t>(git_blob_rawsize(raw)));
      git_blob_free(raw);
      r = m.post[0] == 'l' ? tree.write_link(m.path, bytes) : tree.write_file(m.path, bytes, m.post[0] == 'x');
    }
    if (!r) return r.error();
  }
  return {};
}

Result<Base> decide_base(git_repository* repo, const WorkTree& tree, const SpaceRefs& refs, const ApplyLimits& limits,
                         const Budget& budget) {
  if (!refs.applied || !refs.applied_from) return Base{*refs.start, "start"};
  Result<std::vector<Change>> last = changes_between(repo, *refs.applied_from, *refs.applied);
  if (!last) return last.error();
  Result<std::map<std::string, Became>> became = what_became_of(repo, tree, refs, *last, limits, budget);
  if (!became) return became.error();
  std::vector<std::string> thrown, still;
  for (const auto& [path, b] : *became) (b == Became::kThrownAway ? thrown : still).push_back(path);
  if (thrown.empty()) return Base{*refs.applied, "last_apply"};
  if (!still.empty()) {
    return fail(Code::kChangesDoNotApply,
                "apply as changes: part of the last apply was thrown away (" + some_paths(thrown) + ") and part is still there (" +
                    some_paths(still) + "); remove or commit what is still there before you merge the branch, where it differs from HEAD");
  }
  // Every path of the last apply is back as before; was every earlier round thrown away too?
  if (refs.start && !git_oid_equal(&*refs.applied_from, &*refs.start)) {
    Result<std::vector<Change>> whole = changes_between(repo, *refs.start, *refs.applied);
    if (!whole) return whole.error();
    Result<std::map<std::string, Became>> all = what_became_of(repo, tree, refs, *whole, limits, budget);
    if (!all) return all.error();
    if (std::all_of(all->begin(), all->end(),
                    [](const auto& p) { return p.second == Became::kThrownAway; })) {
      return Base{*refs.start, "all_thrown_away"};
    }
  }
  return Base{*refs.applied_from, "thrown_away"};
}

}  // namespace controller::code::apply_detail
