// The one place where an operation's result becomes output: `to_json` is the document of
// `--json` and of `spacectl serve`'s answers (controller/API.md), `to_text` the CLI's text. Text
// shows every value through terminal_safe (much of it came from a space).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "controller/image_push.h"
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
nlohmann::json to_json(const CodeBrought& brought);
nlohmann::json to_json(const GrantAdded& added);
nlohmann::json to_json(const GrantsRefreshed& refreshed);
nlohmann::json to_json(const GrantProviders& providers);
nlohmann::json to_json(const GatekeeperJournal& journal);
nlohmann::json to_json(const GatekeeperPolicy& policy);
nlohmann::json to_json(const SweepDone& swept);
nlohmann::json to_json(const ImagesPushed& pushed);
nlohmann::json to_json(const VersionShown& version);
// {id, source, provider?, expires_at} of a recorded grant, as list, policy and refresh show it
// (never a value).
nlohmann::json grant_summary_json(const GrantRecord& g);

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
std::string to_text(const CodeBrought& brought);
std::string to_text(const GrantAdded& added);
std::string to_text(const GrantsRefreshed& refreshed);
std::string to_text(const GrantProviders& providers);
std::string to_text(const GatekeeperJournal& journal);
std::string to_text(const GatekeeperPolicy& policy);
std::string to_text(const SweepDone& swept);
std::string to_text(const ImagesPushed& pushed);

// One `key: value` line per member of a document, each value through terminal_safe: the text of
// every result without a layout of its own.
std::string member_lines(const nlohmann::json& document);

}  // namespace controller
