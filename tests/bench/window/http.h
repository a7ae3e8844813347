// The little HTTP/1.1 both ends of the window benchmark need: they talk only to each other and to
// the window, so a head is trusted to be well formed (a bad one fails the row, it is not parsed
// around).
#pragma once

#include <optional>
#include <string_view>

namespace bench {

// The value of the first field `name` (case-insensitive, surrounding blanks trimmed) in a head
// that ends before its blank line; nullopt when there is none.
std::optional<std::string_view> header_value(std::string_view head, std::string_view name);
// Whether field `name` lists `token` (case-insensitive), as in "Connection: keep-alive, close".
bool header_has_token(std::string_view head, std::string_view name, std::string_view token);

}  // namespace bench
