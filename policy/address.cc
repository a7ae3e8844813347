#include "policy/address.h"

#include <cstddef>

#include "policy/ascii.h"
#include "policy/crash.h"

namespace policy {
namespace {

// Longest IPv6 text RFC 4291 allows: eight groups of four digits and seven colons (39), or six
// groups, six colons and a dotted quad (45). Anything longer cannot be an address.
constexpr std::size_t kMaxIpv6TextLength = 45;
constexpr std::size_t kIpv6Groups = 8;
constexpr std::size_t kMaxGroupDigits = 4;
constexpr std::size_t kMaxOctetDigits = 3;

using ascii::hex_value;
using ascii::is_digit;

// One decimal octet: "0", or 1..3 digits without a leading zero (a leading zero means octal to
// inet_aton and decimal to others: a parser differential), value 0..255.
std::optional<std::uint8_t> parse_octet(std::string_view text) {
  if (text.empty() || text.size() > kMaxOctetDigits) return std::nullopt;
  if (text.size() > 1 && text[0] == '0') return std::nullopt;
  unsigned value = 0;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 255) return std::nullopt;
  return static_cast<std::uint8_t>(value);
}

std::optional<std::array<std::uint8_t, 4>> parse_dotted_quad(std::string_view text) {
  std::array<std::uint8_t, 4> out{};
  std::size_t index = 0;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = text.find('.', start);
    std::string_view part =
        text.substr(start, dot == std::string_view::npos ? text.npos : dot - start);
    if (index == out.size()) return std::nullopt;
    std::optional<std::uint8_t> octet = parse_octet(part);
    if (!octet) return std::nullopt;
    out[index++] = *octet;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (index != out.size()) return std::nullopt;
  return out;
}

std::optional<std::uint16_t> parse_group(std::string_view text) {
  if (text.empty() || text.size() > kMaxGroupDigits) return std::nullopt;
  unsigned value = 0;
  for (char c : text) {
    int digit = hex_value(c);
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<unsigned>(digit);
  }
  return static_cast<std::uint16_t>(value);
}

struct Groups {
  std::array<std::uint16_t, kIpv6Groups> values{};
  std::size_t count = 0;
};

// Parses "g:g:...:g" (possibly empty) into `out`. When `may_end_in_quad`, the last piece may be a
// dotted quad, which fills two groups (RFC 4291 §2.2 form 3).
bool parse_groups(std::string_view text, bool may_end_in_quad, Groups& out) {
  if (text.empty()) return true;
  std::size_t start = 0;
  while (true) {
    std::size_t colon = text.find(':', start);
    bool last = colon == std::string_view::npos;
    std::string_view piece = text.substr(start, last ? text.npos : colon - start);
    if (last && may_end_in_quad && piece.find('.') != std::string_view::npos) {
      std::optional<std::array<std::uint8_t, 4>> quad = parse_dotted_quad(piece);
      if (!quad || out.count + 2 > kIpv6Groups) return false;
      out.values[out.count++] = static_cast<std::uint16_t>(((*quad)[0] << 8) | (*quad)[1]);
      out.values[out.count++] = static_cast<std::uint16_t>(((*quad)[2] << 8) | (*quad)[3]);
      return true;
    }
    std::optional<std::uint16_t> group = parse_group(piece);
    if (!group || out.count == kIpv6Groups) return false;
    out.values[out.count++] = *group;
    if (last) return true;
    start = colon + 1;
  }
}

void append_hex_group(std::string& out, std::uint16_t group) {
  static constexpr char kDigits[] = "0123456789abcdef";
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    unsigned digit = (group >> shift) & 0xfu;
    if (digit == 0 && !started && shift != 0) continue;
    started = true;
    out.push_back(kDigits[digit]);
  }
}

void append_quad(std::string& out, std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  out += std::to_string(a);
  out.push_back('.');
  out += std::to_string(b);
  out.push_back('.');
  out += std::to_string(c);
  out.push_back('.');
  out += std::to_string(d);
}

}  // namespace

Address Address::v4(std::uint32_t host_order) {
  return v4_bytes(
      {static_cast<std::uint8_t>(host_order >> 24), static_cast<std::uint8_t>(host_order >> 16),
       static_cast<std::uint8_t>(host_order >> 8), static_cast<std::uint8_t>(host_order)});
}

Address Address::v4_bytes(const std::array<std::uint8_t, 4>& bytes) {
  Address address;
  address.family_ = Family::kV4;
  for (std::size_t i = 0; i < bytes.size(); ++i) address.bytes_[i] = bytes[i];
  return address;
}

Address Address::v6(const std::array<std::uint8_t, 16>& bytes) {
  Address address;
  address.family_ = Family::kV6;
  address.bytes_ = bytes;
  return address;
}

std::uint32_t Address::v4_host_order() const noexcept {
  // Asking an IPv6 address for its IPv4 value is a programming error, not hostile input.
  if (family_ != Family::kV4) contract_broken();
  return (std::uint32_t{bytes_[0]} << 24) | (std::uint32_t{bytes_[1]} << 16) |
         (std::uint32_t{bytes_[2]} << 8) | std::uint32_t{bytes_[3]};
}

std::string Address::to_string() const {
  std::string out;
  if (family_ == Family::kV4) {
    append_quad(out, bytes_[0], bytes_[1], bytes_[2], bytes_[3]);
    return out;
  }
  std::array<std::uint16_t, kIpv6Groups> groups{};
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i] = static_cast<std::uint16_t>((bytes_[2 * i] << 8) | bytes_[2 * i + 1]);
  }
  // RFC 5952 §4.2: "::" replaces the longest run of two or more zero groups; on a tie, the first.
  std::size_t best_start = kIpv6Groups;
  std::size_t best_length = 0;
  for (std::size_t i = 0; i < groups.size();) {
    if (groups[i] != 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < groups.size() && groups[j] == 0) ++j;
    if (j - i > best_length) {
      best_start = i;
      best_length = j - i;
    }
    i = j;
  }
  if (best_length < 2) best_start = kIpv6Groups;
  // RFC 5952 §5: IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses are shown
  // with their dotted quad, as inet_ntop does; "::" and "::1" stay in hex.
  bool mapped = best_start == 0 && best_length == 5 && groups[5] == 0xffff;
  bool compatible = best_start == 0 && best_length == 6;
  std::size_t hex_groups = (mapped || compatible) ? 6 : kIpv6Groups;
  for (std::size_t i = 0; i < hex_groups;) {
    if (i == best_start) {
      out += "::";
      i += best_length;
      continue;
    }
    if (i != 0 && out.back() != ':') out.push_back(':');
    append_hex_group(out, groups[i]);
    ++i;
  }
  if (mapped || compatible) {
    if (out.back() != ':') out.push_back(':');
    append_quad(out, bytes_[12], bytes_[13], bytes_[14], bytes_[15]);
  }
  return out;
}

std::optional<Address> parse_ipv4_strict(std::string_view text) {
  std::optional<std::array<std::uint8_t, 4>> quad = parse_dotted_quad(text);
  if (!quad) return std::nullopt;
  return Address::v4_bytes(*quad);
}

std::optional<Address> parse_ipv6_strict(std::string_view text) {
  if (text.empty() || text.size() > kMaxIpv6TextLength) return std::nullopt;
  std::size_t gap = text.find("::");
  Groups head;
  Groups tail;
  if (gap == std::string_view::npos) {
    if (!parse_groups(text, true, head) || head.count != kIpv6Groups) return std::nullopt;
  } else {
    std::string_view after = text.substr(gap + 2);
    // At most one "::" (RFC 4291 §2.2 item 2); a third colon in a row leaves an empty piece,
    // which parse_groups refuses.
    if (after.find("::") != std::string_view::npos) return std::nullopt;
    if (!parse_groups(text.substr(0, gap), false, head)) return std::nullopt;
    if (!parse_groups(after, true, tail)) return std::nullopt;
    // "::" stands for one or more zero groups (RFC 4291 §2.2 item 2).
    if (head.count + tail.count >= kIpv6Groups) return std::nullopt;
  }
  std::array<std::uint16_t, kIpv6Groups> groups{};
  for (std::size_t i = 0; i < head.count; ++i) groups[i] = head.values[i];
  for (std::size_t i = 0; i < tail.count; ++i) {
    groups[kIpv6Groups - tail.count + i] = tail.values[i];
  }
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < groups.size(); ++i) {
    bytes[2 * i] = static_cast<std::uint8_t>(groups[i] >> 8);
    bytes[2 * i + 1] = static_cast<std::uint8_t>(groups[i]);
  }
  return Address::v6(bytes);
}

std::optional<Address> parse_answer(std::string_view text) {
  if (std::optional<Address> v4 = parse_ipv4_strict(text)) return v4;
  return parse_ipv6_strict(text);
}

}  // namespace policy
