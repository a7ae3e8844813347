// IP addresses as values, and the strict text parsers used for DNS answers.
// Strict means: IPv4 only as a dotted quad of decimal octets (no leading zeros, no short forms,
// no hex or octal); IPv6 only as RFC 4291 §2.2 text (no zone id, no brackets).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace policy {

class Address {
 public:
  enum class Family : std::uint8_t { kV4, kV6 };

  static Address v4(std::uint32_t host_order);
  static Address v4_bytes(const std::array<std::uint8_t, 4>& bytes);
  static Address v6(const std::array<std::uint8_t, 16>& bytes);

  [[nodiscard]] Family family() const noexcept { return family_; }
  [[nodiscard]] bool is_v4() const noexcept { return family_ == Family::kV4; }
  // v4: bytes 0..3 hold the address in network order, the rest are zero. v6: all 16 bytes.
  [[nodiscard]] const std::array<std::uint8_t, 16>& bytes() const noexcept { return bytes_; }
  // IPv4 only: asking an IPv6 address is a programming error and aborts.
  [[nodiscard]] std::uint32_t v4_host_order() const noexcept;
  // Canonical text: dotted quad, or RFC 5952 IPv6 (lower case, longest zero run as "::").
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const Address&, const Address&) = default;

 private:
  Address() = default;
  Family family_ = Family::kV4;
  std::array<std::uint8_t, 16> bytes_{};
};

// Exactly four decimal octets 0..255, each "0" or without a leading zero, separated by dots.
std::optional<Address> parse_ipv4_strict(std::string_view text);
// RFC 4291 §2.2 text forms: 8 groups of 1..4 hex digits, at most one "::", optionally ending in
// a strict dotted quad. No zone id ("%eth0"), no brackets, no whitespace.
std::optional<Address> parse_ipv6_strict(std::string_view text);
// A DNS answer in text: parse_ipv4_strict, else parse_ipv6_strict.
std::optional<Address> parse_answer(std::string_view text);

}  // namespace policy
