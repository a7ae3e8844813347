// The code commands' results as output (controller/render.h for the rest): `to_json` is the
// document of `--json` and of `spacectl serve` (controller/API.md), `to_text` the CLI's text,
// every value shown through terminal_safe (paths and names came from a space or a repository).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "controller/code/results.h"
#include "controller/render.h"

namespace controller::code {

nlohmann::json to_json(const CodeHistoryDone& done);
nlohmann::json to_json(const CodeFiles& files);
nlohmann::json to_json(const CodeForgotten& forgotten);
nlohmann::json to_json(const CodeOutDone& out);
nlohmann::json to_json(const Applied& applied);
nlohmann::json to_json(const ApplyStateShown& shown);

std::string to_text(const CodeHistoryDone& done);
// One line per file (path, kind, size), one per path that does not travel with its reason, and
// the totals.
std::string to_text(const CodeFiles& files);
std::string to_text(const CodeForgotten& forgotten);
// The result and its ref, the changed paths (at most kShownPathsCap, then "..."), the totals,
// nested repositories, unmerged paths and links.
std::string to_text(const CodeOutDone& out);
std::string to_text(const Applied& applied);
std::string to_text(const ApplyStateShown& shown);

}  // namespace controller::code
