// The window path rule (docs/reference-behaviour.md#window-path-rule, fixed so it has no round
// limit).
//
// 1. Every raw byte is one RFC 3986 allows in a path or query (§3.3 pchar, §3.4 query):
//    unreserved (ALPHA DIGIT - . _ ~), '%', sub-delims (! $ & ' ( ) * + , ; =), ':', '@', '/'
//    and '?'. Anything else refuses: controls, SP, DEL, bytes 0x80-0xFF, '"', '<', '>', '\\',
//    '^', '`', '{', '|', '}', '[', ']' and '#'. The window's llhttp is strict and refuses some of
//    these first; this rule does not depend on that.
// 2. Decode percent-escapes round after round until a round changes nothing. In every round
//    (including the raw form) split on '/', '\\', ';', '?' and '#'; any piece that is exactly ".."
//    refuses. An invalid escape ("%zz", "%4", "%" at the end) refuses. Each effective round
//    shortens the text, so the loop ends. A scoped npm path ("/@scope%2fname/-/name-1.0.0.tgz")
//    passes.
// 3. The raw form and the last form are well-formed UTF-8 with no C0 control (NUL, HTAB, CR, LF,
//    ...) and no DEL. The reference's decodeURIComponent threw on the first; overlong '.' and '/'
//    mean ".." and '/' to lenient upstreams, a NUL cuts the path short in C-based servers, and a
//    trailing HTAB or CR is trimmed by servers that strip whitespace ("..\t" becomes "..").
#pragma once

#include <string_view>

namespace policy {

// True when `rest` (the part of the request target after /model/<grant>, query included) walks
// out of the grant, or is not a path and query the window passes on, and must be refused with
// deny:path-walks-out.
bool walks_out(std::string_view rest);

}  // namespace policy
