// Code in, host side: the snapshot of the user's project, made in this process with libgit2
// (no host `git` process, so no user hook, fsmonitor program or GIT_* variable runs or redirects
// anything). What it may change in the user's repository: new loose objects, and one ref,
// refs/openchamber/spaces/<id>/start, written create-only (README.md "What code in may change").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/errors.h"

namespace controller::code {

enum class Mode : std::uint8_t { kUncommitted, kClean };

// "uncommitted" / "clean"; anything else is nullopt.
std::optional<Mode> parse_mode(const std::string& text);

// 12 lowercase hex (the space id spacectl makes).
bool is_space_id(const std::string& id);
std::string start_ref_name(const std::string& space_id);  // refs/openchamber/spaces/<id>/start

// The project folder's name inside the space: basename of the work tree top with runs of
// characters outside [A-Za-z0-9._-] turned into '-', leading '.'/'-' dropped, at most 64
// characters, and "project" when nothing alphanumeric is left or it is node_modules.
std::string space_folder_name(const std::string& top);

struct NotTravelling {
  std::string path;    // relative to the work tree top; a folder ends in '/'
  std::string reason;  // repository (untracked nested repository), submodule, ignored
};

struct Snapshot {
  std::string top;          // work tree top (real path, no trailing '/')
  std::string common_dir;   // the repository's common .git folder (objects, refs)
  std::string prefix;       // subfolder project relative to top, "" for the top itself
  std::string folder;       // space_folder_name(top)
  std::string branch;       // refs/heads/<branch> name, "" for a detached HEAD
  std::string base, staged, start;  // commit ids (hex); clean mode: all three are HEAD
  std::string object_format = "sha1";
  std::optional<std::string> user_name, user_email;  // only values that pass identity_ok
  std::vector<NotTravelling> not_travelling;         // nested repositories and submodules
};

// One line of 1 to 256 bytes without control characters (C0, DEL): what may travel as
// user.name / user.email. Nothing is guessed.
bool identity_ok(const std::string& value);
// A branch name we pass to the space's git: valid for git, not starting with '-', no control
// characters.
bool branch_name_ok(const std::string& name);

// The refusals that need only the repository (missing folder, not a work tree, unsupported
// format or index, no commit, unmerged paths, branch name), read without writing anything: what
// `space create --repo` checks before it creates a space.
Result<void> preflight(const std::string& repository);

// Pre-flight refusals (each its own Code), then the two snapshot commits and the start ref.
Result<Snapshot> take_snapshot(const std::string& repository, const std::string& space_id, Mode mode);

// Deletes refs/openchamber/spaces/<id>/start only while it still names `start` (the cleanup
// after a failed transfer never removes a ref that moved).
Result<void> delete_start_ref(const std::string& repository, const std::string& space_id, const std::string& start);

// Every ref under refs/openchamber/spaces/<id>/, removed in one transaction. Returns the names.
Result<std::vector<std::string>> remove_space_refs(const std::string& repository, const std::string& space_id);

struct TravellingFile {
  std::string path;
  std::string kind;  // file or symlink
  std::uint64_t size = 0;
};
struct FileListing {
  std::vector<TravellingFile> files;  // sorted by path
  std::vector<NotTravelling> not_travelling;
  std::uint64_t total_bytes = 0;
};
// What a snapshot of the work tree would carry, without writing anything.
Result<FileListing> list_travelling_files(const std::string& repository);

}  // namespace controller::code
