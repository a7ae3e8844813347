// The host's way into a gatekeeper's control channel: the place's exec runs
// `/gatekeeper control METHOD PATH` inside the gatekeeper, the JSON body on stdin (secrets never in
// an argv; reference-gatekeeper.md §4.3). Nothing else reaches 127.0.0.1:9099 in there.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/place.h"

namespace controller {

inline constexpr std::chrono::milliseconds kControlTimeout{30000};
inline constexpr std::chrono::milliseconds kReadyDeadline{60000};  // reference §4.3
inline constexpr std::chrono::milliseconds kReadyInterval{250};
inline constexpr std::size_t kMaxControlAnswer = 1u << 20;  // journal body cap (reference §4.3)

Result<nlohmann::json> gatekeeper_control(Place& place, const std::string& id, const std::string& method,
                                          const std::string& path, const std::string& body = {});
// Polls GET /health until {"ready":true}; else kGatekeeperNotReady.
Result<void> wait_gatekeeper_ready(Place& place, const std::string& id);
// POST /window-key {"key": …} (issue #4 item 2).
Result<void> deliver_window_key(Place& place, const std::string& id, const std::string& key);

}  // namespace controller
