// Numbers read from text: an engine's output, a child's report, a file under /proc or /sys, a
// flag. The whole text is the number or there is none: no space, no '+', no base prefix, no
// trailing bytes, and a value that does not fit is no value. atoi and its kin answer 0 or a
// clamped value for all of these, silently; std::stoi throws. A '-' is read only into a signed T.
// A floating T reads plain decimal or exponent notation ("1.5", "2e3"); `base` is for integers.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <type_traits>

namespace policy {

template <class T>
std::optional<T> parse_number(std::string_view text, int base = 10) noexcept {
  T value{};
  const char* const end = text.data() + text.size();
  std::from_chars_result got{};
  if constexpr (std::is_floating_point_v<T>) {
    (void)base;
    // from_chars reads "inf" and "nan" too: a measurement or a count is never either.
    if (!text.empty() && ((text[0] >= '0' && text[0] <= '9') || text[0] == '-')) {
      got = std::from_chars(text.data(), end, value);
    } else {
      got.ec = std::errc::invalid_argument;
    }
    if (got.ec == std::errc() && text[0] == '-' &&
        (text.size() < 2 || text[1] < '0' || text[1] > '9')) {
      got.ec = std::errc::invalid_argument;  // "-inf", "-nan"
    }
  } else {
    got = std::from_chars(text.data(), end, value, base);
  }
  if (text.empty() || got.ec != std::errc() || got.ptr != end) return std::nullopt;
  return value;
}

}  // namespace policy
