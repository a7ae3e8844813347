#include "policy/idna.h"

#include <cstdint>
#include <vector>

#include "policy/name.h"

namespace policy {
namespace {

// RFC 3492 §5 parameters.
constexpr std::uint32_t kBase = 36;
constexpr std::uint32_t kTMin = 1;
constexpr std::uint32_t kTMax = 26;
constexpr std::uint32_t kSkew = 38;
constexpr std::uint32_t kDamp = 700;
constexpr std::uint32_t kInitialBias = 72;
constexpr std::uint32_t kInitialN = 0x80;
constexpr std::uint32_t kMaxInt = 0xffffffffu;
constexpr std::uint32_t kMaxCodePoint = 0x10ffff;

// RFC 3492 §5: a-z are 0-25, 0-9 are 26-35 (the label is lower case already).
int digit_value(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= '0' && c <= '9') return c - '0' + 26;
  return -1;
}

// RFC 3492 §6.1.
std::uint32_t adapt(std::uint32_t delta, std::uint32_t points, bool first) {
  delta = first ? delta / kDamp : delta / 2;
  delta += delta / points;
  std::uint32_t k = 0;
  while (delta > ((kBase - kTMin) * kTMax) / 2) {
    delta /= kBase - kTMin;
    k += kBase;
  }
  return k + (kBase - kTMin + 1) * delta / (delta + kSkew);
}

// RFC 3492 §6.2 with its overflow checks. False on any failure.
bool punycode_decode(std::string_view in, std::vector<std::uint32_t>& out) {
  const std::size_t delimiter = in.rfind('-');
  std::size_t pos = 0;
  if (delimiter != std::string_view::npos) {
    for (std::size_t k = 0; k < delimiter; ++k) {
      // The basic code points of a U-label are LDH (RFC 5891 §5.4, RFC 5892 appendix B.1).
      const char c = in[k];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
      out.push_back(static_cast<unsigned char>(c));
    }
    pos = delimiter + 1;
  }
  std::uint32_t n = kInitialN;
  std::uint32_t i = 0;
  std::uint32_t bias = kInitialBias;
  while (pos < in.size()) {
    const std::uint32_t old_i = i;
    std::uint32_t w = 1;
    for (std::uint32_t k = kBase;; k += kBase) {
      if (pos >= in.size()) return false;  // a delta cut short
      const int digit = digit_value(in[pos++]);
      if (digit < 0) return false;
      const auto d = static_cast<std::uint32_t>(digit);
      if (d > (kMaxInt - i) / w) return false;
      i += d * w;
      const std::uint32_t t = k <= bias ? kTMin : k >= bias + kTMax ? kTMax : k - bias;
      if (d < t) break;
      if (w > kMaxInt / (kBase - t)) return false;
      w *= kBase - t;
    }
    const auto points = static_cast<std::uint32_t>(out.size() + 1);
    bias = adapt(i - old_i, points, old_i == 0);
    if (i / points > kMaxInt - n) return false;
    n += i / points;
    i %= points;
    if (n > kMaxCodePoint || (n >= 0xd800 && n <= 0xdfff)) return false;
    out.insert(out.begin() + i, n);
    ++i;
  }
  return true;
}

bool in_range(std::uint32_t c, std::uint32_t first, std::uint32_t last) { return c >= first && c <= last; }

bool is_combining_mark(std::uint32_t c) {
  return in_range(c, 0x0300, 0x036f) || in_range(c, 0x1ab0, 0x1aff) || in_range(c, 0x1dc0, 0x1dff) ||
         in_range(c, 0x20d0, 0x20ff) || in_range(c, 0xfe20, 0xfe2f);
}

// Rule 3 of idna.h, row by row.
bool is_refused_code_point(std::uint32_t c) {
  return c < 0x20 || in_range(c, 0x7f, 0x9f) ||                                     // controls
         c == 0xa0 || c == 0x1680 || in_range(c, 0x2000, 0x200b) ||                 // spaces
         in_range(c, 0x2028, 0x202f) || in_range(c, 0x205f, 0x206f) || c == 0x3000 || c == 0xfeff ||
         c == 0x200c || c == 0x200d ||                                                // joiners
         c == 0x3002 || c == 0xff0e || c == 0xff61 ||                                 // full stops
         in_range(c, 0xa1, 0xbf) || c == 0xd7 || c == 0xf7 ||                         // Latin-1 symbols
         in_range(c, 0xc0, 0xde) || in_range(c, 0x391, 0x3ab) || in_range(c, 0x400, 0x42f) ||  // upper case
         in_range(c, 0x2010, 0x2bff) ||                                               // symbol blocks
         in_range(c, 0x3001, 0x303f) ||                                               // CJK punctuation
         in_range(c, 0xfe00, 0xfe0f) || in_range(c, 0xe0100, 0xe01ef) ||              // variation selectors
         in_range(c, 0xfe10, 0xfe6f) || in_range(c, 0xff00, 0xffef) ||                // width forms
         in_range(c, 0xfff0, 0xffff) ||                                               // specials
         in_range(c, 0xe000, 0xf8ff) || c >= 0xf0000 ||                               // private use
         in_range(c, 0xe0000, 0xe007f) ||                                             // tags
         in_range(c, 0xfdd0, 0xfdef) || (c & 0xfffe) == 0xfffe ||                     // noncharacters
         in_range(c, 0x1f000, 0x1faff);                                               // emoji
}

}  // namespace

bool is_valid_a_label(std::string_view label) {
  if (label.size() <= 4 || label.size() > kMaxLabelLength || !label.starts_with("xn--")) return false;
  std::vector<std::uint32_t> u;
  u.reserve(kMaxLabelLength);
  if (!punycode_decode(label.substr(4), u) || u.empty()) return false;
  bool non_ascii = false;
  for (std::uint32_t c : u) non_ascii = non_ascii || c >= 0x80;
  if (!non_ascii) return false;
  if (u.front() == '-' || u.back() == '-') return false;
  if (u.size() >= 4 && u[2] == '-' && u[3] == '-') return false;
  if (is_combining_mark(u.front())) return false;
  for (std::uint32_t c : u) {
    if (is_refused_code_point(c)) return false;
  }
  return true;
}

}  // namespace policy
