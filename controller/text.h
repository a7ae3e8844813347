// Text that leaves spacectl: names are checked to be UTF-8 before they are used, JSON output is
// always valid (non-ASCII as \u escapes, invalid bytes replaced), and text output never carries a
// control character to the terminal. Much of what is printed came from a space (journal entries,
// exec stderr in error messages), so it is shown, never interpreted by the terminal.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace controller {

// Well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view text);
// A display name: 1 to 100 bytes of UTF-8 without C0/C1 controls, DEL, U+2028 or U+2029.
bool is_display_name(std::string_view text);
// C0/C1 controls, DEL and invalid bytes as \xNN (a backslash as \\); valid printable UTF-8 kept.
std::string terminal_safe(std::string_view text);
// One line of JSON: ASCII only (every other character \u-escaped), invalid UTF-8 as U+FFFD.
std::string json_text(const nlohmann::json& doc);

}  // namespace controller
