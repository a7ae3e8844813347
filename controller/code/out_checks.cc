// Code out, step 3: every object the user lacks is checked before any of it is promoted.
#include <algorithm>
#include <cstring>

#include "controller/code/out_steps.h"
#include "policy/git_tree_names.h"

namespace controller::code {
namespace {

namespace gt = policy::git_tree;

std::string shown(std::string_view text) {
  std::string t(text.substr(0, 300));
  for (char& c : t) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return t;
}

enum class Want : std::uint8_t { kCommit, kTree, kBlob, kGitmodules, kLink };

struct Pending {
  git_oid id;
  Want want;
  std::string path;  // of a tree or blob, from the top ("" for the top tree)
};

const char* type_word(git_object_t t) {
  const char* s = git_object_type2string(t);
  return s != nullptr ? s : "unknown";
}

Result<std::string> read_raw(git_odb* odb, const git_oid& id, const std::string& what) {
  git_odb_object* raw = nullptr;
  if (git_odb_read(&raw, odb, &id) < 0) return fail(Code::kResultMissing, "code out: measure the result: read " + what + ": " + git2_message(-1));
  std::string bytes(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw));
  git_odb_object_free(raw);
  return bytes;
}

}  // namespace

Result<Checked> check_objects(git_repository* quarantine, git_odb* user_odb, const std::string& result, const OutLimits& limits) {
  const std::string where = "code out: measure the result: ";
  Checked out;
  git_odb* raw_odb = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw_odb, quarantine), where + "the quarantine's objects", Code::kCodeOutFailed); !r) return r.error();
  Odb odb(raw_odb);
  OidSet seen;
  std::vector<Pending> stack;
  git_oid top;
  if (git_oid_fromstr(&top, result.c_str()) < 0) return fail(Code::kInternal, where + "result id " + result);
  stack.push_back({top, Want::kCommit, ""});
  while (!stack.empty()) {
    Pending p = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(p.id).second) continue;
    const std::string id = oid_hex(p.id);
    const std::string what = (p.path.empty() ? std::string() : "'" + shown(p.path) + "' ") + id;
    const bool users = git_odb_exists(user_odb, &p.id) != 0;
    // The user's own objects end the walk, but a .gitmodules or link in a new tree is read
    // whoever holds its blob: the space chose to put it there.
    if (users && (p.want == Want::kCommit || p.want == Want::kTree || p.want == Want::kBlob)) continue;
    std::size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (git_odb_read_header(&size, &type, odb.get(), &p.id) < 0)
      return fail(Code::kResultMissing, where + "object " + what + " did not arrive (a shallow or incomplete result)");
    const git_object_t expected = p.want == Want::kCommit ? GIT_OBJECT_COMMIT : p.want == Want::kTree ? GIT_OBJECT_TREE : GIT_OBJECT_BLOB;
    if (type != expected)
      return fail(Code::kResultRefused, where + "object " + what + " is a " + type_word(type) + " where a " + type_word(expected) + " belongs");
    if (type != GIT_OBJECT_BLOB && size > limits.max_object_bytes)
      return fail(Code::kResultTooLarge, where + "the " + std::string(type_word(type)) + " " + what + " is " + std::to_string(size) +
                                             " bytes; the cap for anything but a file is " + std::to_string(limits.max_object_bytes));
    if (!users) {
      if (out.new_objects.size() + 1 > limits.max_entries)
        return fail(Code::kResultTooManyChanges, where + "more than " + std::to_string(limits.max_entries) + " new objects");
      out.new_bytes += size;
      if (out.new_bytes > limits.max_new_bytes)
        return fail(Code::kResultTooLarge, where + "the new objects hold more than " + std::to_string(limits.max_new_bytes) +
                                               " bytes (at " + what + ", " + std::to_string(size) + " bytes)");
      out.new_objects.push_back(p.id);
    }
    switch (p.want) {
      case Want::kCommit: {
        git_commit* c = nullptr;
        if (git_commit_lookup(&c, quarantine, &p.id) < 0)
          return fail(Code::kResultRefused, where + "commit " + id + " is not one git reads: " + git2_message(-1));
        Commit commit(c);
        stack.push_back({*git_commit_tree_id(commit.get()), Want::kTree, ""});
        for (unsigned i = 0; i < git_commit_parentcount(commit.get()); ++i)
          stack.push_back({*git_commit_parent_id(commit.get(), i), Want::kCommit, ""});
        break;
      }
      case Want::kTree: {
        Result<std::string> bytes = read_raw(odb.get(), p.id, "tree " + what);
        if (!bytes) return bytes.error();
        const gt::TreeCheck t = gt::check_tree(*bytes, GIT_OID_RAWSZ);
        if (t.reason != gt::Reason::kOk) {
          const std::string name = t.entry < t.entries.size() ? std::string(t.entries[t.entry].name) : std::string();
          return fail(Code::kResultRefused, where + "tree " + what + " holds a refused entry '" + shown(name) + "' (" +
                                                std::string(gt::reason_word(t.reason)) + ")");
        }
        for (const gt::Entry& e : t.entries) {
          git_oid child;
          std::memcpy(child.id, e.id.data(), GIT_OID_RAWSZ);
          std::string path = p.path.empty() ? std::string(e.name) : p.path + "/" + std::string(e.name);
          switch (e.mode) {
            case gt::kModeTree: stack.push_back({child, Want::kTree, std::move(path)}); break;
            case gt::kModeSymlink: stack.push_back({child, Want::kLink, std::move(path)}); break;
            case gt::kModeGitlink: break;  // another repository's commit: never fetched, reported
            default:
              stack.push_back({child, gt::is_gitmodules(e.name) && p.path.empty() ? Want::kGitmodules : Want::kBlob, std::move(path)});
          }
        }
        break;
      }
      case Want::kBlob: break;
      case Want::kGitmodules: {
        if (size > gt::kMaxGitmodulesBytes)
          return fail(Code::kResultRefused, where + ".gitmodules " + id + " is " + std::to_string(size) + " bytes");
        Result<std::string> bytes = read_raw(odb.get(), p.id, ".gitmodules " + id);
        if (!bytes) return bytes.error();
        if (const gt::Reason r = gt::check_gitmodules(*bytes); r != gt::Reason::kOk)
          return fail(Code::kResultRefused, where + ".gitmodules " + id + " is refused (" + std::string(gt::reason_word(r)) + ")");
        break;
      }
      case Want::kLink: {
        if (size > gt::kMaxLinkTargetBytes)
          return fail(Code::kResultRefused, where + "link '" + shown(p.path) + "' has a target of " + std::to_string(size) + " bytes");
        Result<std::string> bytes = read_raw(odb.get(), p.id, "link " + what);
        if (!bytes) return bytes.error();
        const gt::LinkCheck l = gt::check_link_target(p.path, *bytes);
        if (l.reason != gt::Reason::kOk)
          return fail(Code::kResultRefused, where + "link '" + shown(p.path) + "' is refused (" + std::string(gt::reason_word(l.reason)) + ")");
        out.symlinks.push_back({p.path, *bytes, l.leaves_tree});
        break;
      }
    }
  }
  std::sort(out.symlinks.begin(), out.symlinks.end(), [](const SymlinkOut& a, const SymlinkOut& b) { return a.path < b.path; });
  return out;
}

namespace {

struct Measure {
  const OutLimits* limits = nullptr;
  git_odb* odb = nullptr;
  BringOut* out = nullptr;
  std::vector<std::string> previous_folder;  // the previous path's folders, outermost first
  std::string refused;          // why the walk stopped
  Code code = Code::kResultTooManyChanges;
};

std::uint64_t blob_size(git_odb* odb, const git_diff_file& f) {
  if ((f.flags & GIT_DIFF_FLAG_EXISTS) == 0 || f.mode == GIT_FILEMODE_COMMIT || f.mode == GIT_FILEMODE_UNREADABLE) return 0;
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &type, odb, &f.id) < 0) return 0;
  return size;
}

// Called for each changed path as libgit2 finds it; a negative answer ends the diff at once.
int on_delta(const git_diff*, const git_diff_delta* d, const char*, void* payload) {
  auto* m = static_cast<Measure*>(payload);
  BringOut& out = *m->out;
  const OutLimits& lim = *m->limits;
  const git_diff_delta& delta = *d;
  const std::string path = (delta.new_file.flags & GIT_DIFF_FLAG_EXISTS) != 0 || delta.status != GIT_DELTA_DELETED ? delta.new_file.path
                                                                                                                     : delta.old_file.path;
  if (out.changed.size() + 1 > lim.max_entries) {
    m->refused = "more than " + std::to_string(lim.max_entries) + " changed paths";
    return -1;
  }
  // Folders entered since the previous path (paths come sorted, a folder's paths together) and
  // the steps: each entered folder's depth and each path's own depth.
  std::vector<std::string> folder;
  for (std::size_t from = 0, slash = 0; (slash = path.find('/', from)) != std::string::npos; from = slash + 1)
    folder.push_back(path.substr(from, slash - from));
  std::size_t common = 0;
  while (common < folder.size() && common < m->previous_folder.size() && folder[common] == m->previous_folder[common]) ++common;
  for (std::size_t i = common; i < folder.size(); ++i) {
    ++out.changed_folders;
    out.steps += i + 1;
  }
  out.steps += folder.size() + 1;
  m->previous_folder = std::move(folder);
  if (out.changed_folders > lim.max_entries) {
    m->refused = "more than " + std::to_string(lim.max_entries) + " changed folders";
    return -1;
  }
  if (out.steps > lim.max_steps) {
    m->refused = "nesting of more than " + std::to_string(lim.max_steps) + " steps (folders and paths, each counted by its depth)";
    return -1;
  }
  ChangedPath c;
  c.path = path;
  switch (delta.status) {
    case GIT_DELTA_ADDED: c.kind = ChangeKind::kAdded; break;
    case GIT_DELTA_DELETED: c.kind = ChangeKind::kDeleted; break;
    case GIT_DELTA_TYPECHANGE: c.kind = ChangeKind::kTypeChanged; break;
    case GIT_DELTA_MODIFIED:
    case GIT_DELTA_UNMODIFIED:
    case GIT_DELTA_RENAMED:
    case GIT_DELTA_COPIED:
    case GIT_DELTA_IGNORED:
    case GIT_DELTA_UNTRACKED:
    case GIT_DELTA_UNREADABLE:
    case GIT_DELTA_CONFLICTED: c.kind = ChangeKind::kModified; break;
  }
  c.old_mode = (delta.old_file.flags & GIT_DIFF_FLAG_EXISTS) != 0 ? delta.old_file.mode : 0;
  c.new_mode = (delta.new_file.flags & GIT_DIFF_FLAG_EXISTS) != 0 ? delta.new_file.mode : 0;
  if (delta.status == GIT_DELTA_ADDED) c.old_mode = 0;
  if (delta.status == GIT_DELTA_DELETED) c.new_mode = 0;
  c.old_bytes = c.old_mode == 0 ? 0 : blob_size(m->odb, delta.old_file);
  c.new_bytes = c.new_mode == 0 ? 0 : blob_size(m->odb, delta.new_file);
  out.changed_bytes += c.old_bytes + c.new_bytes;
  if (c.new_mode == GIT_FILEMODE_COMMIT) out.nested_repositories.push_back(path);
  out.changed.push_back(std::move(c));
  return 0;
}

}  // namespace

Result<void> measure_change(git_repository* quarantine, const std::string& start, const std::string& result, const OutLimits& limits,
                            BringOut& out) {
  const std::string where = "code out: measure the result: ";
  auto tree_of = [&](const std::string& hex, Tree& tree) -> Result<void> {
    git_oid id;
    git_oid_fromstr(&id, hex.c_str());
    git_commit* c = nullptr;
    if (auto r = git2_check(git_commit_lookup(&c, quarantine, &id), where + "commit " + hex, Code::kResultMissing); !r) return r;
    Commit commit(c);
    git_tree* t = nullptr;
    if (auto r = git2_check(git_commit_tree(&t, commit.get()), where + "tree of " + hex, Code::kResultMissing); !r) return r;
    tree.reset(t);
    return {};
  };
  Tree from, to;
  if (auto r = tree_of(start, from); !r) return r;
  if (auto r = tree_of(result, to); !r) return r;
  git_odb* raw_odb = nullptr;
  if (auto r = git2_check(git_repository_odb(&raw_odb, quarantine), where + "the quarantine's objects", Code::kCodeOutFailed); !r) return r;
  Odb odb(raw_odb);
  Measure m{&limits, odb.get(), &out, {}, "", Code::kResultTooManyChanges};
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_SKIP_BINARY_CHECK | GIT_DIFF_INCLUDE_TYPECHANGE;
  opts.notify_cb = on_delta;
  opts.payload = &m;
  git_diff* diff = nullptr;
  const int rc = git_diff_tree_to_tree(&diff, quarantine, from.get(), to.get(), &opts);
  if (diff != nullptr) git_diff_free(diff);
  if (!m.refused.empty()) return fail(m.code, where + m.refused);
  if (rc < 0) return fail(Code::kCodeOutFailed, where + "compare " + start + " with " + result + ": " + git2_message(rc));
  std::uint64_t result_side = 0;
  for (const ChangedPath& c : out.changed) result_side += c.new_bytes;
  if (result_side > limits.max_changed_bytes)
    return fail(Code::kResultTooLarge, where + "the changed files hold " + std::to_string(result_side) + " bytes; the cap is " +
                                           std::to_string(limits.max_changed_bytes));
  return {};
}

}  // namespace controller::code
