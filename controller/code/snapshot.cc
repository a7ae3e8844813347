#include "controller/code/snapshot.h"

#include <fcntl.h>
#include <ftw.h>
#include <git2/sys/repository.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "controller/code/git2.h"
#include "controller/code/project.h"
#include "controller/temp_dir.h"

namespace controller::code {
namespace {

// The fixed identity of both snapshot commits, so a user without user.name/user.email can still
// make a space (and these commits never look like the user's own).
constexpr const char* kSnapshotName = "OpenChamber";
constexpr const char* kSnapshotEmail = "spaces@openchamber.invalid";
constexpr std::size_t kIdentityMax = 256;

// A private folder for the index copy, removed with everything in it when the scope ends; its
// owner lock lets `spacectl sweep` remove it when this process dies first (controller/temp_dir.h).
class TempDir {
 public:
  TempDir() {
    if (Result<OwnedTempDir> d = OwnedTempDir::make("code-in"); d) dir_.emplace(std::move(*d));
    else
      why_ = d.error().message;
  }
  [[nodiscard]] std::string path() const { return dir_ ? dir_->path() : std::string(); }
  // Why it could not be made (a full disk names the folder and ENOSPC).
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  std::optional<OwnedTempDir> dir_;
  std::string why_;
};

bool has_control(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// Copies the user's index byte for byte (a missing index is an empty one), with its modification
// time: racy-git detection compares each entry's mtime with the index file's, so a copy stamped
// "now" would let a file changed within the index's second pass as unchanged.
Result<void> copy_index(const std::string& from, const std::string& to) {
  struct stat st {};
  if (stat(from.c_str(), &st) != 0) return {};
  std::ifstream in(from, std::ios::binary);
  if (!in) return fail(Code::kCodeInFailed, "code in: read index " + from + ": cannot open");
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  errno = 0;
  out << in.rdbuf();
  out.close();
  // errno from the failed write or close (ENOSPC on a full disk) says what went wrong.
  if (!out)
    return fail(Code::kCodeInFailed,
                "code in: copy index " + from + " to " + to + ": write failed" +
                    (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (utimensat(AT_FDCWD, to.c_str(), times, 0) != 0)
    return fail(Code::kCodeInFailed, "code in: copy index " + from + ": keep its modification time failed");
  struct stat copied {};
  if (stat(to.c_str(), &copied) != 0 || copied.st_size != st.st_size)
    return fail(Code::kCodeInFailed, "code in: copy index " + from + ": the index changed while it was copied");
  return {};
}

std::optional<std::string> config_value(git_config* config, const char* name) {
  git_buf buf = GIT_BUF_INIT;
  if (git_config_get_string_buf(&buf, config, name) < 0) return std::nullopt;
  std::string value(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  if (!identity_ok(value)) return std::nullopt;
  return value;
}

struct AddState {
  std::vector<NotTravelling>* skipped;
};

// git_index_add_all reports an untracked nested repository as "dir/"; adding it would record a
// gitlink that arrives as an empty folder the space's git cannot see. It stays behind, listed.
int skip_nested_repositories(const char* path, const char*, void* payload) {
  const std::string p(path);
  if (!p.empty() && p.back() == '/') {
    static_cast<AddState*>(payload)->skipped->push_back({p, "repository"});
    return 1;
  }
  return 0;
}

Result<std::string> commit(git_repository* repo, const git_oid& tree_id, const git_commit* parent, const char* message) {
  git_tree* tree_raw = nullptr;
  if (auto r = git2_check(git_tree_lookup(&tree_raw, repo, &tree_id), "code in: look up snapshot tree"); !r) return r.error();
  Tree tree(tree_raw);
  git_signature* sig_raw = nullptr;
  if (auto r = git2_check(git_signature_now(&sig_raw, kSnapshotName, kSnapshotEmail), "code in: snapshot identity"); !r)
    return r.error();
  Signature sig(sig_raw);
  git_oid id;
  const git_commit* parents[] = {parent};
  if (auto r = git2_check(git_commit_create(&id, repo, nullptr, sig.get(), sig.get(), nullptr, message, tree.get(), 1, parents),
                          std::string("code in: commit \"") + message + "\"");
      !r)
    return r.error();
  return oid_hex(id);
}

void list_submodules(git_index* index, std::vector<NotTravelling>& out) {
  const std::size_t n = git_index_entrycount(index);
  for (std::size_t i = 0; i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(index, i);
    if (e != nullptr && e->mode == GIT_FILEMODE_COMMIT) out.push_back({std::string(e->path) + "/", "submodule"});
  }
}

}  // namespace

std::optional<Mode> parse_mode(const std::string& text) {
  if (text == "uncommitted") return Mode::kUncommitted;
  if (text == "clean") return Mode::kClean;
  return std::nullopt;
}

bool is_space_id(const std::string& id) {
  return id.size() == 12 && std::all_of(id.begin(), id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string start_ref_name(const std::string& space_id) { return "refs/openchamber/spaces/" + space_id + "/start"; }

std::string space_folder_name(const std::string& top) {
  std::string base = top.substr(top.rfind('/') + 1);
  std::string out;
  bool in_run = false;
  for (char c : base) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (ok) {
      out += c;
      in_run = false;
    } else if (!in_run) {
      out += '-';
      in_run = true;
    }
  }
  const std::size_t first = out.find_first_not_of(".-");
  out = first == std::string::npos ? std::string() : out.substr(first);
  if (out.size() > 64) out.resize(64);
  const bool alnum = std::any_of(out.begin(), out.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  if (!alnum || out == "node_modules") return "project";
  return out;
}

bool identity_ok(const std::string& value) {
  return !value.empty() && value.size() <= kIdentityMax && !has_control(value);
}

bool branch_name_ok(const std::string& name) {
  int valid = 0;
  if (name.empty() || name[0] == '-' || has_control(name)) return false;
  if (git_branch_name_is_valid(&valid, name.c_str()) < 0) return false;
  return valid != 0;
}

Result<Snapshot> take_snapshot(const std::string& repository, const std::string& space_id, Mode mode) {
  if (!is_space_id(space_id)) return fail(Code::kInvalidArgument, "code in: space id " + space_id + ": not 12 lowercase hex");
  Result<Project> opened = open_project(repository);
  if (!opened) return opened.error();
  Project& project = *opened;
  git_repository* repo = project.repo.get();
  const std::string where = "code in " + project.top;

  Snapshot snap;
  snap.top = project.top;
  snap.common_dir = project.common_dir;
  snap.prefix = project.prefix;
  snap.folder = space_folder_name(project.top);

  if (git_repository_head_unborn(repo) == 1)
    return fail(Code::kRepositoryHasNoCommit, where + ": HEAD names no commit yet (make a first commit)");
  git_object* head_raw = nullptr;
  if (git_revparse_single(&head_raw, repo, "HEAD^{commit}") < 0)
    return fail(Code::kRepositoryHasNoCommit, where + ": HEAD names no commit: " + git2_message(-1));
  Object head_object(head_raw);
  const auto* head = reinterpret_cast<const git_commit*>(head_object.get());
  snap.base = oid_hex(*git_commit_id(head));

  // A copy of the index, opened on its own and then lent to the repository, so ignore rules and
  // filters apply while the user's index file is only ever read.
  TempDir temp;
  if (temp.path().empty())
    return fail(Code::kCodeInFailed, where + ": cannot make a temporary folder: " + temp.why());
  const std::string index_copy = temp.path() + "/index";
  if (auto r = copy_index(project.git_dir + "index", index_copy); !r) return r.error();
  git_index* index_raw = nullptr;
  if (git_index_open(&index_raw, index_copy.c_str()) < 0)
    return fail(Code::kRepositoryUnsupported, where + ": read the index: " + git2_message(-1) +
                                                  " (split or sparse indexes are not read by libgit2 " + LIBGIT2_VERSION + ")");
  Index index(index_raw);
  if (auto r = git2_check(git_repository_set_index(repo, index.get()), where + ": use the index copy"); !r) return r.error();
  if (git_index_has_conflicts(index.get()) != 0)
    return fail(Code::kUnmergedChanges, where + ": the index has unmerged paths (finish or abort the merge first)");

  const std::string ref = start_ref_name(space_id);
  git_reference* existing = nullptr;
  if (git_reference_lookup(&existing, repo, ref.c_str()) == 0) {
    git_reference_free(existing);
    return fail(Code::kSpaceRefExists, where + ": " + ref + " already exists");
  }

  git_reference* head_ref_raw = nullptr;
  if (git_reference_lookup(&head_ref_raw, repo, "HEAD") == 0) {
    Reference head_ref(head_ref_raw);
    if (git_reference_type(head_ref.get()) == GIT_REFERENCE_SYMBOLIC) {
      const std::string target = git_reference_symbolic_target(head_ref.get());
      if (target.rfind("refs/heads/", 0) == 0) {
        snap.branch = target.substr(11);
        if (!branch_name_ok(snap.branch))
          return fail(Code::kInvalidBranchName, where + ": the current branch name is not passed on: " + target);
      }
    }
  }

  git_config* config_raw = nullptr;
  if (git_repository_config_snapshot(&config_raw, repo) == 0) {
    Config config(config_raw);
    snap.user_name = config_value(config.get(), "user.name");
    snap.user_email = config_value(config.get(), "user.email");
  }

  list_submodules(index.get(), snap.not_travelling);
  Tree start_tree;
  if (mode == Mode::kClean) {
    snap.staged = snap.base;
    snap.start = snap.base;
    git_tree* t = nullptr;
    if (auto r = git2_check(git_commit_tree(&t, head), where + ": HEAD's tree"); !r) return r.error();
    start_tree.reset(t);
  } else {
    git_oid staged_tree;
    if (auto r = git2_check(git_index_write_tree_to(&staged_tree, index.get(), repo), where + ": write the staged tree"); !r)
      return r.error();
    AddState state{&snap.not_travelling};
    git_strarray all = {nullptr, 0};
    if (auto r = git2_check(git_index_update_all(index.get(), &all, nullptr, nullptr), where + ": take tracked changes"); !r)
      return r.error();
    if (auto r = git2_check(git_index_add_all(index.get(), &all, GIT_INDEX_ADD_DEFAULT, skip_nested_repositories, &state),
                            where + ": take untracked files");
        !r)
      return r.error();
    git_oid work_tree;
    if (auto r = git2_check(git_index_write_tree_to(&work_tree, index.get(), repo), where + ": write the working-tree tree"); !r)
      return r.error();
    Result<std::string> staged = commit(repo, staged_tree, head, "openchamber: staged snapshot");
    if (!staged) return staged.error();
    snap.staged = *staged;
    git_oid staged_id;
    git_oid_fromstr(&staged_id, snap.staged.c_str());
    git_commit* staged_raw = nullptr;
    if (auto r = git2_check(git_commit_lookup(&staged_raw, repo, &staged_id), where + ": look up the staged commit"); !r)
      return r.error();
    Commit staged_commit(staged_raw);
    Result<std::string> start = commit(repo, work_tree, staged_commit.get(), "openchamber: working tree snapshot");
    if (!start) return start.error();
    snap.start = *start;
    git_tree* t = nullptr;
    if (auto r = git2_check(git_tree_lookup(&t, repo, &work_tree), where + ": look up the working-tree tree"); !r) return r.error();
    start_tree.reset(t);
  }
  std::sort(snap.not_travelling.begin(), snap.not_travelling.end(),
            [](const NotTravelling& a, const NotTravelling& b) { return a.path < b.path; });

  if (!project.prefix.empty()) {
    git_tree_entry* e = nullptr;
    const bool is_tree = git_tree_entry_bypath(&e, start_tree.get(), project.prefix.c_str()) == 0 &&
                         git_tree_entry_type(e) == GIT_OBJECT_TREE;
    git_tree_entry_free(e);
    if (!is_tree)
      return fail(Code::kProjectFolderDoesNotTravel,
                  where + ": the project folder " + project.prefix + " is empty or ignored, nothing of it would travel");
  }

  git_oid start_id;
  git_oid_fromstr(&start_id, snap.start.c_str());
  git_reference* created = nullptr;
  // force = 0: create-only, a ref that appeared meanwhile is never moved.
  const int rc = git_reference_create(&created, repo, ref.c_str(), &start_id, 0, nullptr);
  git_reference_free(created);
  if (rc == GIT_EEXISTS) return fail(Code::kSpaceRefExists, where + ": " + ref + " already exists");
  if (auto r = git2_check(rc, where + ": create " + ref); !r) return r.error();
  return snap;
}

Result<void> preflight(const std::string& repository) {
  Result<Project> opened = open_project(repository);
  if (!opened) return opened.error();
  git_repository* repo = opened->repo.get();
  const std::string where = "code in " + opened->top;
  git_object* head = nullptr;
  if (git_repository_head_unborn(repo) == 1 || git_revparse_single(&head, repo, "HEAD^{commit}") < 0)
    return fail(Code::kRepositoryHasNoCommit, where + ": HEAD names no commit yet (make a first commit)");
  git_object_free(head);
  git_index* index_raw = nullptr;
  const std::string index_path = opened->git_dir + "index";
  struct stat st {};
  if (stat(index_path.c_str(), &st) == 0) {
    if (git_index_open(&index_raw, index_path.c_str()) < 0)
      return fail(Code::kRepositoryUnsupported, where + ": read the index: " + git2_message(-1));
    Index index(index_raw);
    if (git_index_has_conflicts(index.get()) != 0)
      return fail(Code::kUnmergedChanges, where + ": the index has unmerged paths (finish or abort the merge first)");
  }
  git_reference* head_ref_raw = nullptr;
  if (git_reference_lookup(&head_ref_raw, repo, "HEAD") == 0) {
    Reference head_ref(head_ref_raw);
    if (git_reference_type(head_ref.get()) == GIT_REFERENCE_SYMBOLIC) {
      const std::string target = git_reference_symbolic_target(head_ref.get());
      if (target.rfind("refs/heads/", 0) == 0 && !branch_name_ok(target.substr(11)))
        return fail(Code::kInvalidBranchName, where + ": the current branch name is not passed on: " + target);
    }
  }
  return {};
}

Result<void> delete_start_ref(const std::string& repository, const std::string& space_id, const std::string& start) {
  Result<Project> opened = open_project(repository);
  if (!opened) return opened.error();
  git_repository* repo = opened->repo.get();
  const std::string ref = start_ref_name(space_id);
  git_transaction* tx_raw = nullptr;
  if (auto r = git2_check(git_transaction_new(&tx_raw, repo), "code in: remove " + ref); !r) return r.error();
  std::unique_ptr<git_transaction, decltype(&git_transaction_free)> tx(tx_raw, git_transaction_free);
  if (auto r = git2_check(git_transaction_lock_ref(tx.get(), ref.c_str()), "code in: lock " + ref); !r) return r.error();
  git_reference* current_raw = nullptr;
  if (git_reference_lookup(&current_raw, repo, ref.c_str()) < 0) return {};  // already gone
  Reference current(current_raw);
  const git_oid* target = git_reference_target(current.get());
  if (target == nullptr || oid_hex(*target) != start)
    return fail(Code::kCodeInFailed, "code in: " + ref + " moved meanwhile; left as it is");
  if (auto r = git2_check(git_transaction_remove(tx.get(), ref.c_str()), "code in: remove " + ref); !r) return r.error();
  return git2_check(git_transaction_commit(tx.get()), "code in: remove " + ref);
}

Result<std::vector<std::string>> remove_space_refs(const std::string& repository, const std::string& space_id) {
  if (!is_space_id(space_id)) return fail(Code::kInvalidArgument, "code forget: space id " + space_id + ": not 12 lowercase hex");
  Result<Project> opened = open_project(repository);
  if (!opened) return opened.error();
  git_repository* repo = opened->repo.get();
  const std::string glob = "refs/openchamber/spaces/" + space_id + "/*";
  std::vector<std::string> names;
  git_reference_iterator* it_raw = nullptr;
  if (auto r = git2_check(git_reference_iterator_glob_new(&it_raw, repo, glob.c_str()), "code forget: list " + glob); !r)
    return r.error();
  std::unique_ptr<git_reference_iterator, decltype(&git_reference_iterator_free)> it(it_raw, git_reference_iterator_free);
  const char* name = nullptr;
  while (git_reference_next_name(&name, it.get()) == 0) names.emplace_back(name);
  if (names.empty()) return names;
  git_transaction* tx_raw = nullptr;
  if (auto r = git2_check(git_transaction_new(&tx_raw, repo), "code forget: remove refs"); !r) return r.error();
  std::unique_ptr<git_transaction, decltype(&git_transaction_free)> tx(tx_raw, git_transaction_free);
  for (const std::string& n : names) {
    if (auto r = git2_check(git_transaction_lock_ref(tx.get(), n.c_str()), "code forget: lock " + n); !r) return r.error();
    if (auto r = git2_check(git_transaction_remove(tx.get(), n.c_str()), "code forget: remove " + n); !r) return r.error();
  }
  if (auto r = git2_check(git_transaction_commit(tx.get()), "code forget: remove refs of space " + space_id); !r) return r.error();
  return names;
}

}  // namespace controller::code
