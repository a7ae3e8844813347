// `spacectl help [TOPIC]`: the main concepts in a few paragraphs each, for a user at a terminal.
// The manual page spacectl(1) says the same at more length.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace controller {

// The topic names, in the order `spacectl help` lists them.
std::vector<std::string_view> help_topics();
// The text of one topic; nullopt for an unknown name.
std::optional<std::string> help_text(std::string_view topic);
// `spacectl help` without a topic: one line per topic.
std::string help_index();

}  // namespace controller
