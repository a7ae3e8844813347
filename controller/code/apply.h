// Apply: the space's result, already promoted into the user's repository as
// refs/openchamber/spaces/<id>/result, lands as a new branch or as uncommitted changes in the
// user's work tree. Everything runs in this process with libgit2 and plain file calls: no host
// `git`, so no user hook, filter driver, fsmonitor or GIT_* variable runs. README.md "Apply"
// describes the rounds, the refs, the route that closes and the codes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "controller/errors.h"

namespace controller::code {

// The caps of the changes route (a branch holds any result bring-out accepted).
struct ApplyLimits {
  std::uint64_t max_changed_bytes = 128ull << 20;  // both sides of every changed path, inflated
  std::uint64_t max_changed_entries = 100000;      // changed paths; also the folder cap
  // Whole-call budget for reading the work tree back (rounds, interrupted applies).
  std::uint64_t read_back_ms = 300000;
  // Tests only: stop after this many writes as a killed process would (the intent stays).
  std::size_t testing_stop_after_writes = static_cast<std::size_t>(-1);
};
inline constexpr std::uint64_t kStepsPerEntry = 32;  // nesting steps cap = 32 × entries

// One line per step of an apply, for the user (and the tests that kill spacectl at each step).
// Each line starts with the step's fixed words; README.md "An interrupted apply" lists them.
using ApplyProgress = std::function<void(const std::string&)>;

// Names of this space's refs in the user's repository.
std::string space_ref(const std::string& space_id, const char* leaf);  // refs/openchamber/spaces/<id>/<leaf>

struct BranchApplied {
  std::string branch;  // refs/heads/<name>
  std::string commit;
};

// A new branch at the result (create-only: an existing name, or one beside a folder of names or
// a name of its folder, is refused). Nothing is checked out; the applied refs are not touched.
Result<BranchApplied> apply_as_branch(const std::string& repository, const std::string& space_id,
                                      const std::string& name, const ApplyProgress& progress = {});

struct ChangesApplied {
  bool nothing_to_apply = false;
  std::string result, from;                      // the patch was from → result
  std::vector<std::string> applied_paths;         // every path this apply wrote or deleted
  std::vector<std::string> merged_paths;          // paths where the user's own edits were kept (3-way)
  std::vector<std::string> nested_repositories;   // gitlinks among the applied paths (empty folders)
  std::vector<std::string> conflicted;            // new content holding "<<<<<<< " lines (text check)
  std::string recovered;                          // what an interrupted apply found: "" or a word
  bool remembered = false;                        // the applied refs were written
};

// The uncommitted-changes route: only what is new since the last apply, checked whole before
// anything is written (caps, names, links, every path read back), then written path by path
// under an intent recorded in refs. A refusal writes nothing but, where the route closes,
// refs/openchamber/spaces/<id>/changes-closed. The caller holds the space's lock (apply_work
// does): a lock file of this space's own refs found here is one a killed apply left, and goes.
Result<ChangesApplied> apply_as_changes(const std::string& repository, const std::string& space_id,
                                        const ApplyLimits& limits,
                                        const ApplyProgress& progress = {});

struct ApplyState {
  bool route_open = true;
  std::string closed_at;     // the result the route closed at, when closed
  std::string result;        // "" when nothing was brought out
  std::string last_applied;  // "" when never applied as changes
  std::string base;          // what the next apply would start from ("" when undecided / closed)
  std::string base_reason;   // start, last_apply, thrown_away, all_thrown_away
  std::vector<std::string> new_paths;  // paths the next apply would write (capped at 100)
  std::uint64_t new_path_count = 0;
  bool new_paths_over_limit = false;
  std::string undecided;     // why the next apply could not be predicted ("" when it could)
  std::string interrupted;   // "", or what an interrupted apply left: finished, not_started, cut_short, edited_since
};

// What the next apply_as_changes would do, read-only (it reads the work tree back).
Result<ApplyState> describe_apply_state(const std::string& repository, const std::string& space_id, const ApplyLimits& limits);

}  // namespace controller::code
