// The steps of code out (internal to code/): the snapshot inside, the fetch into the quarantine,
// the checks, each testable on its own. out.cc runs them in order and promotes.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "controller/code/git2.h"
#include "controller/code/out.h"
#include "controller/code/transfer.h"
#include "controller/errors.h"

namespace controller::code {

// A set of object ids (what was checked, what was seen).
struct OidHash {
  std::size_t operator()(const git_oid& o) const noexcept {
    std::size_t h = 0;
    std::memcpy(&h, o.id, sizeof h);
    return h;
  }
};
struct OidEq {
  bool operator()(const git_oid& a, const git_oid& b) const noexcept { return git_oid_equal(&a, &b) != 0; }
};
using OidSet = std::unordered_set<git_oid, OidHash, OidEq>;

// After a failed fetch: ends every process of the space whose environment holds `tag`
// (NAME=value, matched as a whole entry) with argv-only commands inside (ls, grep -z, kill);
// answers one line for the progress. The pure pieces: the pids of an `ls /proc` listing (digits
// only, never 1) and of `grep -l` output (/proc/<pid>/environ lines only).
std::string end_tagged_inside(const SpaceExec& exec, const std::string& tag);
std::vector<std::string> proc_pids(std::string_view listing);
std::vector<std::string> tagged_pids(std::string_view grep_names);

inline constexpr std::chrono::milliseconds kInsideCommandTimeout{300000};  // each fixed command inside
inline constexpr std::size_t kUnmergedReportCap = 256u << 10;  // bytes of ls-files --unmerged read
inline constexpr const char* kResultMessage =
    "openchamber: uncommitted changes from the space\n\n"
    "What the space held beyond its last commit. Some of it may be your own uncommitted work\n"
    "from when the space was made.\n";

// git options every command inside runs with: no hook (so none can write into what we read
// back), no fsmonitor program.
std::vector<std::string> inside_git(const std::string& space_path);

struct InsideSnapshot {
  std::string head, tree, result;  // the space's HEAD, its work tree's tree, the result commit
  bool made_commit = false;
  std::vector<std::string> unmerged;  // paths, each once, in the order reported
};

// Fixed argv commands over the place's exec (no shell, nothing interpolated): ls-files
// --unmerged, HEAD, a private index copied from the space's, add --all, write-tree, commit-tree
// when the tree differs from HEAD's, update-ref refs/openchamber/result. Every answer we read is
// parsed strictly (one object id and a newline, or NUL-separated unmerged entries).
Result<InsideSnapshot> snapshot_inside(const SpaceExec& exec, const std::string& space_path);

// Strict parsers of what the space prints (unit tests feed them hostile text).
bool parse_object_line(const std::string& text, std::string& id);  // exactly 40 lowercase hex + "\n"
std::vector<std::string> parse_unmerged(const std::string& text);  // "<mode> <oid> <stage>\t<path>\0"…

// A quarantine bare repository under <work_dir>/quarantine/, alternates = the user's objects,
// removed (recursively, without following links) when the object dies.
class Quarantine {
 public:
  static Result<Quarantine> make(const std::string& work_dir, const std::string& space_id, const std::string& user_objects);
  Quarantine(Quarantine&& other) noexcept : path_(std::move(other.path_)), repo_(std::move(other.repo_)) { other.path_.clear(); }
  Quarantine& operator=(Quarantine&&) = delete;
  Quarantine(const Quarantine&) = delete;
  Quarantine& operator=(const Quarantine&) = delete;
  ~Quarantine();
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] git_repository* repo() const { return repo_.get(); }
  Result<void> open();  // (re)opens the repository, so a pack written since is seen

 private:
  explicit Quarantine(std::string path) : path_(std::move(path)) {}
  std::string path_;
  Repository repo_;
};

// Removes a folder tree without following symlinks. Best effort; false if anything is left.
bool remove_tree(const std::string& path);

struct FetchStats {
  std::uint64_t bytes = 0, objects = 0;
};

// Our own upload-pack client (protocol v0) over exec: strict pkt-lines, want exactly `want`,
// `have` each of haves, then the pack straight into libgit2's indexer in the quarantine (thin
// packs completed from the user's objects). The transfer cap holds while bytes arrive (libgit2's
// progress and our own count); the pack's own object count is checked against max_entries from
// its header, before any object is read; the deadline kills the process group.
Result<FetchStats> fetch_into(const Quarantine& quarantine, const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                              const std::string& want, const std::vector<std::string>& haves, const OutLimits& limits);

struct Checked {
  std::vector<git_oid> new_objects;  // what the user lacks, every one checked
  std::uint64_t new_bytes = 0;
  std::vector<SymlinkOut> symlinks;
};

// Every object reachable from `result` that the user's object store lacks: present, of the
// type its parent names, under the caps, trees passing policy/git_tree_names.h, .gitmodules and
// link targets checked. Objects the user already holds end the walk there.
Result<Checked> check_objects(git_repository* quarantine, git_odb* user_odb, const std::string& result, const OutLimits& limits);

// start tree → result tree: changed paths (cap), both sides' bytes, result-side bytes (cap),
// folders and steps (caps), nested repositories. Stops as soon as a cap is passed.
Result<void> measure_change(git_repository* quarantine, const std::string& start, const std::string& result, const OutLimits& limits,
                            BringOut& out);

}  // namespace controller::code
