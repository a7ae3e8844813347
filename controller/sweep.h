// Sweep: what a crash left behind, removed. At `spacectl serve` start and by `spacectl sweep`.
//
// - Objects of this owner (containers, networks, volumes, probes) whose id has no record, or whose
//   record is still `preparing` while nobody holds the space's lock (the creating process died),
//   are removed once the oldest of them is older than the grace period (a creation by an older
//   spacectl that writes no record first, or one in another process that has not written its
//   record yet, stays alone meanwhile). A record `failed` keeps its record (listed until
//   dismissed); leftovers of it go.
// - A `preparing` record with nothing at the place and a free lock goes, with the refs code in may
//   have put into the user's repository.
// - Subnets (controller/subnets.h) held by a record whose id nothing at the place carries: freed
//   (the record stays; a `preparing` one is left to the rules above).
// - Temporary folders of spacectl whose owner lock nobody holds (controller/temp_dir.h).
// Each removal holds the space's lock (a new action meanwhile gets space_busy, never a half-swept
// space); a space whose lock is held is left alone. Another owner's objects are never listed, so
// never touched.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "controller/manager.h"

namespace controller {

inline constexpr std::chrono::seconds kDefaultSweepGrace{600};

struct SweepOptions {
  std::chrono::seconds grace = kDefaultSweepGrace;
  std::string temp_base;  // empty: temp_base()
  // Removes refs/openchamber/spaces/<id>/ from a repository (controller/code/; libgit2 lives there).
  std::function<void(const std::string& repository, const std::string& id)> remove_refs;
};

// What was removed and left (each with its reason), the records removed, the temporary folders
// removed, the subnets freed and the failures (render.h: {removed, left, records_removed,
// temp_dirs_removed, subnets_freed, failures}).
Result<SweepDone> sweep(Manager& manager, const SweepOptions& options);

// "2026-12-01T17:32:39Z" or Docker's "2026-12-01 17:32:39 +0000 UTC": seconds since the epoch; 0
// when it is neither.
std::int64_t parse_utc_time(std::string_view text);

}  // namespace controller
