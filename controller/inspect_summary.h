// What `space list` shows, read from the engine's answers alone (docker_place.cc runs the
// queries). Pure, so the fuzz target and unit tests feed it any document: an inspect answer from
// a compromised or odd engine, and labels written by someone else, can only drop a value and name
// the label it came from, never crash, never show a value no spacectl would have written.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/place.h"

namespace controller {

inline constexpr std::size_t kMaxImageLabelBytes =
    128;  // org.opencontainers.image.version / revision

// containers: the `container inspect` answer for the labelled containers (any JSON);
// network_names: the labelled networks' names. Containers whose owner label is not `owner` or whose
// id label is not a space id are not ours and are skipped.
std::vector<SpaceSummary> summarise_spaces(const nlohmann::json& containers,
                                           const std::vector<std::string>& network_names,
                                           const std::string& owner);

// YYYY-MM-DDTHH:MM:SSZ (the created label and record times).
bool is_utc_time_text(std::string_view text);

}  // namespace controller
