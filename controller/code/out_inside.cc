// Code out, step 1: the result commit made inside the space by fixed argv commands.
#include <algorithm>
#include <set>

#include "controller/code/out_steps.h"
#include "controller/code/receive_pack.h"

namespace controller::code {
namespace {

constexpr const char* kGit = "/usr/bin/git";
constexpr const char* kEnv = "/bin/env";  // the default image has busybox applets in /bin only
constexpr const char* kIdentity[] = {"GIT_AUTHOR_NAME=OpenChamber", "GIT_AUTHOR_EMAIL=spaces@openchamber.invalid",
                                     "GIT_COMMITTER_NAME=OpenChamber", "GIT_COMMITTER_EMAIL=spaces@openchamber.invalid"};

bool is_hex40(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

using receive_pack::shown;

Failure inside_failed(const std::string& step, const Result<ExecOutput>& r) {
  if (!r) {
    if (r.error().code == Code::kSpaceNotFound || r.error().code == Code::kSpaceNotRunning) return r.error();
    return fail(Code::kCodeOutFailed, "code out: snapshot the space: " + step + ": " + r.error().message);
  }
  return fail(Code::kCodeOutFailed, "code out: snapshot the space: " + step + " exited " + std::to_string(r->exit_code) + ": " +
                                        shown(r->err));
}

Result<ExecOutput> run(const SpaceExec& exec, const std::vector<std::string>& argv) { return exec.run(argv, kInsideCommandTimeout); }

std::vector<std::string> with_index(const std::string& index, const std::vector<std::string>& git_argv) {
  std::vector<std::string> argv = {kEnv, "GIT_INDEX_FILE=" + index};
  argv.insert(argv.end(), git_argv.begin(), git_argv.end());
  return argv;
}

std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One object id from a command whose stdout we parse; anything else is a refusal.
Result<std::string> read_id(const SpaceExec& exec, const std::vector<std::string>& argv, const std::string& step) {
  Result<ExecOutput> r = run(exec, argv);
  if (!r || r->exit_code != 0) return inside_failed(step, r);
  std::string id;
  if (!parse_object_line(r->out, id))
    return fail(Code::kCodeOutFailed, "code out: snapshot the space: " + step + " answered something other than one object id: " +
                                          shown(r->out.substr(0, 200)));
  return id;
}

}  // namespace

std::vector<std::string> inside_git(const std::string& space_path) {
  return {kGit, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-C", space_path};
}

bool parse_object_line(const std::string& text, std::string& id) {
  if (text.size() != 41 || text.back() != '\n') return false;
  const std::string head = text.substr(0, 40);
  if (!is_hex40(head)) return false;
  id = head;
  return true;
}

std::vector<std::string> parse_unmerged(const std::string& text) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();  // a capped report: the last piece is cut
    const std::string piece = text.substr(start, end - start);
    start = end + 1;
    // "<mode> <oid> <stage>\t<path>": pieces of any other shape are dropped, never guessed at.
    const std::size_t tab = piece.find('\t');
    if (tab == std::string::npos || tab + 1 >= piece.size() || end == text.size()) continue;
    const std::string meta = piece.substr(0, tab);
    if (meta.size() != 6 + 1 + 40 + 1 + 1 || meta[6] != ' ' || meta[47] != ' ' || meta[48] < '1' || meta[48] > '3' ||
        !is_hex40(meta.substr(7, 40)))
      continue;
    const std::string path = piece.substr(tab + 1);
    if (seen.insert(path).second) paths.push_back(path);
  }
  return paths;
}

Result<InsideSnapshot> snapshot_inside(const SpaceExec& exec, const std::string& space_path) {
  const std::vector<std::string> git = inside_git(space_path);
  InsideSnapshot snap;

  Result<ExecOutput> dir = run(exec, plus(git, {"rev-parse", "--absolute-git-dir"}));
  if (!dir || dir->exit_code != 0) return inside_failed("git rev-parse --absolute-git-dir", dir);
  std::string git_dir = dir->out;
  if (git_dir.empty() || git_dir.back() != '\n' || git_dir[0] != '/' || git_dir.size() > 4097 ||
      std::any_of(git_dir.begin(), git_dir.end() - 1, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return fail(Code::kCodeOutFailed, "code out: snapshot the space: the space's git folder is not one absolute path: " +
                                          shown(git_dir.substr(0, 200)));
  git_dir.pop_back();

  // Unmerged entries first: add --all would stage the conflicted content and hide them.
  Result<ExecOutput> unmerged = run(exec, plus(git, {"ls-files", "--unmerged", "-z"}));
  if (!unmerged || unmerged->exit_code != 0) return inside_failed("git ls-files --unmerged", unmerged);
  snap.unmerged = parse_unmerged(unmerged->out.substr(0, kUnmergedReportCap));

  Result<std::string> head = read_id(exec, plus(git, {"rev-parse", "--verify", "--quiet", "HEAD^{commit}"}), "HEAD (no commit at HEAD?)");
  if (!head) return head.error();
  snap.head = *head;

  // A private index: the agent's own index, HEAD and work tree stay as they are.
  const std::string index = git_dir + "/openchamber-out-index";
  auto drop_index = [&] { (void)run(exec, {"/bin/rm", "-f", "--", index}); };
  drop_index();
  // -p keeps the index's mtime: git trusts an entry whose stat matches unless the entry is as new
  // as the index file ("racily clean"); a fresh mtime on the copy would hide an edit made in the
  // same second as the last index write and of the same size (the agent's work lost).
  Result<ExecOutput> copied = run(exec, {"/bin/cp", "-p", "--", git_dir + "/index", index});
  if (!copied) return inside_failed("copy the index", copied);
  if (copied->exit_code != 0) {  // no index yet: start from HEAD's tree
    Result<ExecOutput> read = run(exec, with_index(index, plus(git, {"read-tree", snap.head})));
    if (!read || read->exit_code != 0) {
      drop_index();
      return inside_failed("git read-tree HEAD", read);
    }
  }
  Result<ExecOutput> added = run(exec, with_index(index, plus(git, {"add", "--all"})));
  if (!added || added->exit_code != 0) {
    drop_index();
    return inside_failed("git add --all", added);
  }
  Result<std::string> tree = read_id(exec, with_index(index, plus(git, {"write-tree"})), "git write-tree");
  drop_index();
  if (!tree) return tree.error();
  snap.tree = *tree;
  Result<std::string> head_tree = read_id(exec, plus(git, {"rev-parse", "--verify", "--quiet", snap.head + "^{tree}"}), "HEAD's tree");
  if (!head_tree) return head_tree.error();

  if (*head_tree == snap.tree) {
    snap.result = snap.head;
  } else {
    std::vector<std::string> argv = {kEnv};
    argv.insert(argv.end(), std::begin(kIdentity), std::end(kIdentity));
    argv = plus(argv, git);
    argv = plus(argv, {"commit-tree", "--no-gpg-sign", "-p", snap.head, "-m", kResultMessage, snap.tree});
    Result<std::string> commit = read_id(exec, argv, "git commit-tree");
    if (!commit) return commit.error();
    snap.result = *commit;
    snap.made_commit = true;
  }
  // Keeps the result alive inside (against gc) until the fetch took it; never read back.
  Result<ExecOutput> ref = run(exec, plus(git, {"update-ref", "refs/openchamber/result", snap.result}));
  if (!ref || ref->exit_code != 0) return inside_failed("git update-ref refs/openchamber/result", ref);
  return snap;
}

}  // namespace controller::code
