// The window path rule (docs/reference-behaviour.md#window-path-rule, fixed so it has no round
// limit).
//
// Decode percent-escapes round after round until a round changes nothing. In every round
// (including the raw form) split on '/', '\\', ';', '?' and '#'; any piece that is exactly ".."
// refuses. An invalid escape ("%zz", "%4", "%" at the end) refuses. Each effective round shortens
// the text, so the loop ends. A scoped npm path ("/@scope%2fname/-/name-1.0.0.tgz") passes.
// The last form must be well-formed UTF-8 without NUL (the reference's decodeURIComponent threw
// on the first; overlong '.' and '/' and a NUL mean something else to lenient upstreams).
#pragma once

#include <string_view>

namespace policy {

// True when `rest` (the part of the request target after /model/<grant>, query included) walks
// out of the grant and must be refused with deny:path-walks-out.
bool walks_out(std::string_view rest);

}  // namespace policy
