// The space manager: what each spacectl command does, over any place. It keeps no state of its own
// (labels are the only record of what exists); the host record holds network choice and grant ids.
// Every operation answers one JSON document, which the CLI prints or turns into text.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/place.h"
#include "controller/records.h"

namespace controller {

struct Manager {
  Place& place;
  std::string state;  // state directory (records)
  // A failed creation stays in the record as `failed` (listed until the space is removed) instead
  // of vanishing: `spacectl serve` answers creations at once, so the failure has to be findable.
  bool keep_failed_creations = false;

  Result<nlohmann::json> check();
  // begin_create + create_locked + finish_create.
  Result<nlohmann::json> create(const CreateRequest& request);
  // Picks the id (when the request has none), takes the space's lock and writes a `preparing`
  // record (with the repository code in will come from, so sweep can remove its refs) before
  // anything exists at the place.
  Result<SpaceLock> begin_create(CreateRequest& request, const std::string& repository = {});
  // The place's create under the lock begin_create took; each step also lands in the record.
  Result<nlohmann::json> create_locked(const CreateRequest& request);
  // Done: the record loses its creation state. Failed: the record is removed, or kept as
  // `failed` with the failure (keep_failed_creations).
  void finish_create(const std::string& id, const Failure* failure, const std::string& step);
  Result<nlohmann::json> list();
  Result<nlohmann::json> show(const std::string& id);
  // {"differences":[…]}; differences make it a kVerifyFailed failure carrying the document.
  Result<nlohmann::json> verify(const std::string& id, nlohmann::json& document);
  Result<nlohmann::json> stop(const std::string& id);
  Result<nlohmann::json> start(const std::string& id);
  Result<nlohmann::json> remove(const std::string& id);
  Result<nlohmann::json> network_set(const std::string& id, const std::string& mode, const std::vector<std::string>& domains);
  // secret empty and header empty: an opened domain. The secret goes only to the exec's stdin.
  // unsafe_private_upstream: the gatekeeper's grant field of that name (policy/control_messages.h).
  Result<nlohmann::json> grant_add(const std::string& id, const std::string& grant, const std::string& upstream,
                                   const std::string& header, std::string secret, bool unsafe_private_upstream = false);
  Result<nlohmann::json> window_key(const std::string& id);
  Result<nlohmann::json> control_get(const std::string& id, const std::string& path);  // /journal, /policy
  // stop() under a lock the caller holds; idle: idle stop did it (listed as stopped-idle).
  Result<nlohmann::json> stop_locked(const std::string& id, bool idle);
  // remove() for a space whose lock the caller already holds (sweep, a failed create --repo).
  Result<nlohmann::json> remove_locked(const std::string& id);
};

// `spacectl place list`: every place of the registry, checked (probed) in turn: its state
// (usable, unusable, unreachable, not_configured), whether it can restrict the network (the host
// isolation probe held and its positive control answered), and one line on why.
Result<nlohmann::json> list_places(const class Registry& registry, const PlaceOptions& options);

// The exit status of a space that stopped because it was idle (EX_TEMPFAIL).
inline constexpr int kIdleExitCode = 75;

// State of a listed space: running, stopped, stopped-idle, unreachable or needs-access
// (docs/reference-behaviour.md#space-states).
std::string space_state(const SpaceSummary& summary, bool needs_access);

}  // namespace controller
