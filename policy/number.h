// Numbers read from text: an engine's output, a child's report, a file under /proc or /sys, a
// flag. The whole text is the number or there is none: no space, no '+', no base prefix, no
// trailing bytes, and a value that does not fit is no value. atoi and its kin answer 0 or a
// clamped value for all of these, silently; std::stoi throws. A '-' is read only into a signed T.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace policy {

template <class T>
std::optional<T> parse_number(std::string_view text, int base = 10) noexcept {
  T value{};
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace policy
