// The byte pattern the tests' inner server sends and the host checks, so a 64 MiB transfer needs
// no 64 MiB file on either side: byte i of a stream.
#pragma once

#include <cstdint>

namespace controller::dispatch::testing {

constexpr std::uint8_t pattern_byte(std::uint64_t i) {
  // Not periodic at any power of two a buffer might share (a shifted or repeated chunk shows).
  return static_cast<std::uint8_t>((i * 2654435761u) >> 13 ^ (i >> 16));
}

}  // namespace controller::dispatch::testing
