// The one place where an operation's result becomes output: `to_json` is the document of
// `--json` and of `spacectl serve`'s answers (controller/API.md), `to_text` the CLI's text. Text
// shows every value through terminal_safe (much of it came from a space).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "controller/results.h"

namespace controller {

nlohmann::json to_json(const SpaceView& view);
nlohmann::json to_json(const SpaceList& list);
nlohmann::json to_json(const SpaceShown& shown);
nlohmann::json to_json(const SpaceCreated& created);
nlohmann::json to_json(const SpaceRemoved& removed);
nlohmann::json to_json(const SpaceStopped& stopped);
nlohmann::json to_json(const SpaceStarted& started);
nlohmann::json to_json(const PlaceChecked& checked);
nlohmann::json to_json(const PlaceList& list);
nlohmann::json to_json(const SpaceVerified& verified);
nlohmann::json to_json(const NetworkSet& set);
nlohmann::json to_json(const WindowKeyDelivered& delivered);
// Results still carried as documents (their operation has no struct of its own yet).
inline const nlohmann::json& to_json(const nlohmann::json& document) { return document; }

std::string to_text(const SpaceList& list);
std::string to_text(const SpaceShown& shown);
std::string to_text(const SpaceCreated& created);
std::string to_text(const SpaceRemoved& removed);
std::string to_text(const SpaceStopped& stopped);
std::string to_text(const SpaceStarted& started);
std::string to_text(const PlaceChecked& checked);
std::string to_text(const PlaceList& list);
std::string to_text(const SpaceVerified& verified);
std::string to_text(const NetworkSet& set);
std::string to_text(const WindowKeyDelivered& delivered);
// A document of an operation without a struct yet: code files and code out have a layout of
// their own (picked by their members), any other is one `key: value` line per member.
std::string to_text(const nlohmann::json& document);

}  // namespace controller
