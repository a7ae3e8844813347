#include "controller/text.h"

namespace controller {
namespace {

// Length of the UTF-8 sequence at text[i] and its code point; 0 when it is not well formed.
std::size_t sequence(std::string_view text, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool is_control(char32_t cp) { return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f); }

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = sequence(text, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool is_display_name(std::string_view text) {
  if (text.empty() || text.size() > 100) return false;
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = sequence(text, i, cp);
    if (n == 0 || is_control(cp) || cp == 0x2028 || cp == 0x2029) return false;
    i += n;
  }
  return true;
}

std::string terminal_safe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = sequence(text, i, cp);
    if (n > 0 && cp == '\\') {
      out += "\\\\";
    } else if (n > 0 && !is_control(cp) && cp != 0x2028 && cp != 0x2029) {
      out.append(text.substr(i, n));
    } else {
      // One byte at a time: an invalid or control sequence shows as its bytes.
      const std::size_t m = n == 0 ? 1 : n;
      for (std::size_t k = 0; k < m; ++k) {
        const auto c = static_cast<unsigned char>(text[i + k]);
        out += "\\x";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
      i += m;
      continue;
    }
    i += n;
  }
  return out;
}

std::string json_text(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

}  // namespace controller
