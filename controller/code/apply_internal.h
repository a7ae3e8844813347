// Internals of apply (apply*.cc only): the work tree read and written without following a link,
// the change between two trees with its sizes, the name rules, the plan (the dry run) and the
// read-back of earlier applies.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/code/apply.h"
#include "controller/code/git2.h"

namespace controller::code::apply_detail {

inline constexpr std::uint32_t kModeFile = 0100644, kModeExec = 0100755, kModeLink = 0120000, kModeGitlink = 0160000;

// One side of a changed path: mode 0 is "absent".
struct Side {
  std::uint32_t mode = 0;
  git_oid oid{};
  [[nodiscard]] bool present() const { return mode != 0; }
};
struct Change {
  std::string path;
  Side before, after;
};

// What the work tree holds at a path.
enum class WtKind : std::uint8_t {
  kAbsent,
  kFile,
  kLink,
  kFolder,
  kOther,              // FIFO, socket, device
  kLinkOnTheWay,       // a folder on the way is a symbolic link (blocker names it)
  kNotFolderOnTheWay,  // a folder on the way is a file or something else (blocker names it)
  kUnreadable,
};
struct WtEntry {
  WtKind kind = WtKind::kUnreadable;
  bool exec = false;
  std::string bytes;    // file content or link target
  std::string blocker;  // the folder on the way, for the two *OnTheWay kinds
};

// The work tree, walked from its top with openat(O_NOFOLLOW) one folder at a time: no call here
// follows a symbolic link, so a link swapped in after the checks can make a write fail but never
// send it elsewhere.
class WorkTree {
 public:
  WorkTree() = default;
  ~WorkTree();
  WorkTree(const WorkTree&) = delete;
  WorkTree& operator=(const WorkTree&) = delete;
  WorkTree(WorkTree&& other) noexcept;
  WorkTree& operator=(WorkTree&&) = delete;

  static Result<WorkTree> open(const std::string& top);
  [[nodiscard]] const std::string& top() const { return top_; }

  // `gone`: paths the change removes first, so a link or file there is no obstacle on the way.
  // Files larger than max_bytes are read as kUnreadable.
  [[nodiscard]] WtEntry read(const std::string& path, const std::set<std::string>* gone, std::uint64_t max_bytes) const;

  // Writes are a temporary file (or link) in the same folder renamed over the path; missing
  // folders are made. remove() deletes a file or link and then every folder it leaves empty.
  Result<void> write_file(const std::string& path, const std::string& bytes, bool exec) const;
  Result<void> write_link(const std::string& path, const std::string& target) const;
  Result<void> make_folder(const std::string& path) const;
  Result<void> remove(const std::string& path) const;
  // Removes what a write killed between its temporary name and the rename left beside `path`
  // (a file or link named as write_file/write_link name their temporaries; nothing else).
  // Answers how many went.
  std::size_t remove_leftover_temporaries(const std::string& path) const;

 private:
  // Opens the folder holding `path`'s last name (creating folders when asked). -1 on failure
  // with errno set; `leaf` gets the last name.
  int open_parent(const std::string& path, bool create, std::string& leaf) const;
  int fd_ = -1;
  std::string top_;
};

// A short text for a work-tree entry, compared by the read-back of an interrupted apply:
// "-" absent, "f<hash>"/"x<hash>" file (x: executable), "l<hash>" link, "d" folder, "o" other,
// "!" unreadable or blocked.
std::string signature(const WtEntry& e);

// Does the work tree entry hold this side of the change? Files are compared after the clean
// conversions git would make (libgit2's built-in ones: line endings, ident); folders stand for
// gitlinks (nested repositories).
bool holds(git_repository* repo, const std::string& path, const WtEntry& e, const Side& side);

// The blob's bytes as the work tree should hold them (libgit2's built-in smudge conversions).
Result<std::string> blob_to_worktree(git_repository* repo, const std::string& path, const git_oid& oid);
// `bytes` of `path` through the conversions git would make in one direction
// (GIT_FILTER_TO_WORKTREE: smudge; GIT_FILTER_TO_ODB: clean); the bytes as they are without any.
Result<std::string> convert_bytes(git_repository* repo, const std::string& path,
                                  const std::string& bytes, git_filter_mode_t mode);

// Every path that differs between two commits, no rename detection, sorted by path.
Result<std::vector<Change>> changes_between(git_repository* repo, const git_oid& from, const git_oid& to);

// Sizes of both sides, folders and nesting steps against the caps → changes_too_large.
Result<void> measure(git_repository* repo, const std::vector<Change>& changes, const ApplyLimits& limits);

struct NameRules {
  bool windows = false;       // core.protectNTFS set to true in this repository's config
  bool fold_case = false;     // core.ignorecase
  bool fold_unicode = false;  // core.precomposeunicode
  bool long_paths = false;    // core.longpaths
};
NameRules name_rules_of(git_repository* repo);
// name_not_allowed_here / case_only_rename for the first created name that fails; ok otherwise.
Result<void> check_names(git_repository* repo, const std::string& top, const NameRules& rules, const git_oid& from_commit,
                         const git_oid& result_commit, const std::vector<Change>& changes);
// The fold used for case/Unicode collisions (exposed for tests): NFC, full case fold, NFC.
std::string fold_name(const std::string& name, const NameRules& rules);

// One write of the plan.
struct Action {
  enum class Kind : std::uint8_t { kWriteFile, kWriteLink, kMakeFolder, kRemove, kLeave };
  Kind kind = Kind::kLeave;
  std::string path;
  std::string bytes;  // file content (work-tree form) or link target
  bool exec = false;
  bool merged = false;         // the user's own edits were kept (three-way)
  std::string pre, post;       // signature() before and after
};
struct Plan {
  std::vector<Action> actions;  // removals first (deepest first), then writes
  std::vector<std::string> conflicts;      // path: why
  std::vector<std::string> ignored_in_the_way;
  std::string blocked_by_link;             // the first link on the way ("" when none)
};
Result<Plan> make_plan(git_repository* repo, const WorkTree& tree, const std::vector<Change>& changes, const ApplyLimits& limits);

// Runs the actions in order; stops at the first failure (the caller closes the route).
// after_write(k): called once the k-th write (kLeave does not count) is in place.
Result<void> run_plan(const WorkTree& tree, const std::vector<Action>& actions,
                      std::size_t at_most = static_cast<std::size_t>(-1),
                      const std::function<void(std::size_t)>& after_write = {});

// A deadline for the read-back (each step asks it).
struct Budget {
  std::chrono::steady_clock::time_point end;
  [[nodiscard]] bool spent() const { return std::chrono::steady_clock::now() >= end; }
};

}  // namespace controller::code::apply_detail
