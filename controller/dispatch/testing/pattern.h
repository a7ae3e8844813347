// The byte pattern the tests' inner server sends and the host checks, so a 64 MiB transfer needs
// no 64 MiB file on either side: byte i of a stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace controller::dispatch::testing {

constexpr std::uint8_t pattern_byte(std::uint64_t i) {
  // Not periodic at any power of two a buffer might share (a shifted or repeated chunk shows).
  return static_cast<std::uint8_t>((i * 2654435761u) >> 13 ^ (i >> 16));
}

// The stream's first n bytes, for the host's side of a transfer.
inline std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(pattern_byte(i));
  return s;
}

}  // namespace controller::dispatch::testing
