// Code out (space → host): the agent's work leaves the space as hostile data. A fixed sequence
// of argv commands inside makes the result commit (or takes HEAD when the tree is unchanged);
// this process fetches exactly that one commit over the place's exec (its own upload-pack
// client) into a quarantine repository whose alternates are the user's objects, checks every
// object the user lacks (caps, tree entry names and modes, `.gitmodules`, symlink targets) and
// only then copies those objects into the user's object store and sets one ref.
//
// Where a bring-out is recorded (what apply reads):
//   - the user's repository: refs/openchamber/spaces/<id>/result names the result commit (the
//     only ref bring-out writes; it keeps the last good result after a later refusal);
//     refs/openchamber/spaces/<id>/start (written by code in) is what the space began from, so the
//     change to apply is start → result;
//   - the host record of the space (records.h, SpaceRecord::out): result, start, the space's HEAD
//     under the result, and the counts shown by `code out`. The record is for showing; the refs
//     are the truth.
//
// What a bring-out may change in the user's repository: new pack files under objects/pack
// (holding only objects that passed every check) and the result ref. Nothing else, and after
// any refusal nothing at all.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/code/transfer.h"
#include "controller/errors.h"

namespace controller::code {

// Every limit is a named constant; the defaults are the floor the reference behaviour gives users.
struct OutLimits {
  std::uint64_t max_transfer_bytes = 256ull << 20;  // pack bytes on the wire, enforced while they arrive
  std::uint64_t max_new_bytes = 128ull << 20;       // inflated size of every object the user lacks
  std::uint64_t max_changed_bytes = 128ull << 20;   // result side of every changed path
  std::uint64_t max_entries = 100000;               // new objects, changed paths, changed folders each
  std::uint64_t max_object_bytes = 4ull << 20;      // any commit, tree or tag (blobs: max_new_bytes)
  std::uint64_t max_steps = 3200000;                // sum of the depths of changed paths and folders
};

struct OutOptions {
  std::chrono::milliseconds timeout{600000};  // host deadline of the fetch (process-group kill)
  int inner_margin_seconds = 5;               // inner `timeout -s KILL` = deadline + margin
  OutLimits limits;
  // A private folder of this user (the spacectl state directory) under which the quarantine
  // `quarantine/<id>-<pid>-<random>.git` is made and always removed again.
  std::string work_dir;
  std::function<void(const std::string&)> progress;  // one line per step, may be empty
};

enum class ChangeKind : std::uint8_t { kAdded, kModified, kDeleted, kTypeChanged };
std::string_view change_word(ChangeKind kind);  // added, modified, deleted, type_changed

struct ChangedPath {
  std::string path;  // raw bytes from the tree; shown with control characters replaced
  ChangeKind kind = ChangeKind::kModified;
  std::uint32_t old_mode = 0, new_mode = 0;  // 0: absent on that side
  std::uint64_t old_bytes = 0, new_bytes = 0;  // blob sizes (0 for gitlinks and absent sides)
};

struct SymlinkOut {
  std::string path, target;  // reported, never followed
  bool leaves_tree = false;  // absolute, or climbs above the project's top
};

struct BringOut {
  std::string space_id;
  std::string repository;      // the user's work tree top
  std::string result_commit;   // what refs/openchamber/spaces/<id>/result now names
  std::string start_commit;    // refs/openchamber/spaces/<id>/start (code in's snapshot)
  std::string base_commit;     // HEAD at code in (the record's code.base)
  std::string space_head;      // the space's HEAD; the result's parent when made_commit
  bool made_commit = false;    // false: the space's tree equalled HEAD's, the result is HEAD
  std::vector<ChangedPath> changed;           // start tree → result tree, no renames, path order
  std::uint64_t changed_bytes = 0;            // both sides of every changed path
  std::uint64_t new_objects = 0, new_bytes = 0;  // what the user lacked (and now holds)
  std::uint64_t transfer_bytes = 0;           // pack bytes received
  std::uint64_t changed_folders = 0, steps = 0;
  std::vector<std::string> nested_repositories;  // changed paths that are gitlinks in the result
  std::vector<std::string> unmerged;             // the space's unmerged paths, as it reported them
  std::vector<SymlinkOut> symlinks;              // new symlinks in the result
};

// Paths listed per kind in code out's report (the counts are whole).
inline constexpr std::size_t kShownPathsCap = 100;

// refs/openchamber/spaces/<id>/result
std::string result_ref_name(const std::string& space_id);

// space_path is the one code in returned (/spaces/<id>/<folder>). Refusals before anything
// reaches the space, then snapshot inside → quarantine fetch → checks → promote. On any failure
// the quarantine is gone and the user's repository is as it was.
Result<BringOut> bring_code_out(const std::string& repository, const std::string& space_id, const std::string& space_path,
                                const SpaceExec& exec, const OutOptions& options);

// Removes quarantine folders under work_dir whose owning process is gone (a host crash or a
// kill -9 mid-fetch). Returns the names removed.
std::vector<std::string> sweep_quarantines(const std::string& work_dir);

}  // namespace controller::code
