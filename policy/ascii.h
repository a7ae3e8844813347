// ASCII character classes, defined once for every parser in policy/. Locale-free and
// byte-exact on purpose: <cctype> depends on the C locale and takes an int that must be an
// unsigned char value, and a hostile byte 0x80-0xFF must never be a letter or a digit.
#pragma once

namespace policy::ascii {

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
constexpr bool is_alpha(char c) noexcept { return is_lower(c) || is_upper(c); }
constexpr bool is_alnum(char c) noexcept { return is_alpha(c) || is_digit(c); }
// 0-9, a-f, A-F.
constexpr bool is_hex(char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// 0-9, a-f only (names are compared lower-cased).
constexpr bool is_lower_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f'); }
// The value of a hex digit (either case), -1 for any other byte.
constexpr int hex_value(char c) noexcept {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
constexpr char to_lower(char c) noexcept {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace policy::ascii
