// The host's way into a gatekeeper's control channel: the place's exec runs
// `/gatekeeper control METHOD PATH` inside the gatekeeper, the JSON body on stdin (secrets never in
// an argv; docs/reference-behaviour.md#reaching-the-control-channel). Nothing else reaches
// 127.0.0.1:9099 in there.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/place.h"

namespace controller {

inline constexpr std::chrono::milliseconds kControlTimeout{30000};
// Readiness deadline and answer cap: docs/reference-behaviour.md#reaching-the-control-channel.
inline constexpr std::chrono::milliseconds kReadyDeadline{60000};
// The pause between /health polls starts short and doubles up to kReadyInterval: a gatekeeper is
// usually ready within the first exec or two, and each poll is already an exec round trip.
inline constexpr std::chrono::milliseconds kReadyFirstInterval{10};
inline constexpr std::chrono::milliseconds kReadyInterval{250};
inline constexpr std::size_t kMaxControlAnswer = 1u << 20;  // the journal body cap

Result<nlohmann::json> gatekeeper_control(Place& place, const std::string& id, const std::string& method,
                                          const std::string& path, const std::string& body = {});
// The answer's text as the gatekeeper printed it (exit 0, at most kMaxControlAnswer bytes), for a
// caller that reads it strictly itself (control_answers.h); failures as gatekeeper_control's.
Result<std::string> gatekeeper_control_text(Place& place, const std::string& id,
                                            const std::string& method, const std::string& path);
// Polls GET /health until {"ready":true}; else kGatekeeperNotReady.
Result<void> wait_gatekeeper_ready(Place& place, const std::string& id);
// POST /window-key {"key": …} (docs/reference-behaviour.md#window-key).
Result<void> deliver_window_key(Place& place, const std::string& id, const std::string& key);

}  // namespace controller
