// The name predicate: what the corridor accepts as a domain name.
//
// ASCII only; lower-cased; one trailing dot removed; at least two labels; labels of 1..63
// letters, digits and hyphens, not starting or ending with a hyphen; at most 253 characters; the
// last label is not a number in any spelling (all digits, 0x/0X hex, 0o octal). Anything glibc or
// c-ares could read as an address (127.1, 2130706433, 0177.0.0.1, 0x7f000001, 1.1.257, IPv6 with
// or without brackets, zone ids) is therefore not a name. A label starting "xn--" must be a valid
// A-label (policy/idna.h). Special-use names (policy/special_names.h) are names here; the
// corridor and the window refuse them by their own rule.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace policy {

inline constexpr std::size_t kMaxNameLength = 253;
inline constexpr std::size_t kMaxLabelLength = 63;
inline constexpr std::size_t kMinLabels = 2;

// Lower-cases ASCII letters and removes one trailing dot. Does not judge anything else.
std::string normalise_name(std::string_view raw);

// True when `normalised` (the output of normalise_name) passes every rule above.
bool is_name(std::string_view normalised);

// normalise_name, then is_name: the normalised name, or nullopt when it is not a name.
std::optional<std::string> checked_name(std::string_view raw);

}  // namespace policy
