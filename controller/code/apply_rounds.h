// Internals of apply: this space's refs in the user's repository, the intent of an apply in
// progress (a manifest blob: each path's signature before and after), and the next round's base.
#pragma once

#include <map>
#include <optional>

#include "controller/code/apply_internal.h"

namespace controller::code::apply_detail {

struct SpaceRefs {
  std::optional<git_oid> start, result, applied, applied_from, applied_head;
  std::optional<git_oid> applying, applying_from, applying_head, applying_manifest;
  std::optional<git_oid> closed;
};
SpaceRefs read_space_refs(git_repository* repo, const std::string& space_id);

// One leaf under refs/openchamber/spaces/<id>/: set it, or (nullopt) delete it if it exists.
struct RefUpdate {
  const char* leaf;
  std::optional<git_oid> target;
};
// One ref at a time, in the order given (each one rename on disk, so a kill leaves every ref
// either old or new, and the earlier ones done): the callers order them so that `applying` is
// set last and removed first, and whatever a kill leaves is read back as one of the states of
// an interrupted apply. A lock file in the way is named with what to do.
Result<void> update_refs(git_repository* repo, const std::string& space_id,
                         const std::vector<RefUpdate>& updates, const std::string& message);
std::vector<RefUpdate> intent_removal();  // `applying` first

// Removes the lock files of this space's own refs (refs/openchamber/spaces/<id>/<leaf>.lock):
// only spacectl writes those refs, under the space's lock, so one found by a holder of that lock
// is what a killed spacectl left (it would refuse every later write of that ref). Apply and code
// out both call it before they write.
void clear_stale_ref_locks(git_repository* repo, const std::string& space_id);

// Writes changes-closed at `at` (and drops the intent with it, in the same transaction) and
// returns `why` with the closing sentence.
Failure close_route(git_repository* repo, const std::string& space_id, const git_oid& at,
                    Failure why, bool drop_intent);

struct ManifestEntry {
  std::string path, pre, post;
};
std::string manifest_text(const std::vector<Action>& actions);  // "<pre>\t<post>\t<path>\0" each
std::vector<ManifestEntry> parse_manifest(const std::string& text);

struct Interrupted {
  std::string state;  // "" (no intent), finished, not_started, cut_short, edited_since
  std::vector<ManifestEntry> entries;
  std::vector<ManifestEntry> remaining;  // paths still holding what was there before
};
Result<Interrupted> read_intent(git_repository* repo, const WorkTree& tree, const SpaceRefs& refs,
                                const ApplyLimits& limits, const Budget& budget);
// The writes an interrupted apply did not make (each path still holds exactly what it held).
Result<void> finish_writes(git_repository* repo, const WorkTree& tree,
                           const std::vector<ManifestEntry>& remaining);

struct Base {
  git_oid from{};
  std::string reason;  // start, last_apply, thrown_away, all_thrown_away
};
// changes_do_not_apply (partly thrown away; the caller closes the route) or changes_undecided.
Result<Base> decide_base(git_repository* repo, const WorkTree& tree, const SpaceRefs& refs,
                         const ApplyLimits& limits, const Budget& budget);

}  // namespace controller::code::apply_detail
