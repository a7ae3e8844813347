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

  Result<nlohmann::json> check();
  Result<nlohmann::json> create(const CreateRequest& request);
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
};

// `spacectl place list`: every place of the registry, checked (probed) in turn: its state
// (usable, unusable, unreachable, not_configured), whether it can restrict the network (the host
// isolation probe held and its positive control answered), and one line on why.
Result<nlohmann::json> list_places(const class Registry& registry, const PlaceOptions& options);

// State of a listed space: running, stopped, unreachable or needs-access
// (docs/reference-behaviour.md#space-states).
std::string space_state(const SpaceSummary& summary, bool needs_access);

}  // namespace controller
