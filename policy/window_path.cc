#include "policy/window_path.h"

#include "policy/ascii.h"

#include <string>
#include <vector>

namespace policy {
namespace {

// The separators a server, a framework or a file system may treat as a path boundary: '/' and
// '\\' (Windows and some Java servers), ';' (path parameters, RFC 3986 §3.3; Tomcat's "..;/"
// bypass), '?' and '#' (start of query and fragment).
bool is_separator(char c) { return c == '/' || c == '\\' || c == ';' || c == '?' || c == '#'; }

bool has_dot_dot_piece(std::string_view form) {
  std::size_t start = 0;
  for (std::size_t i = 0; i <= form.size(); ++i) {
    if (i == form.size() || is_separator(form[i])) {
      if (form.substr(start, i - start) == "..") return true;
      start = i + 1;
    }
  }
  return false;
}

// RFC 3986 §3.3 pchar and §3.4 query: unreserved / pct-encoded / sub-delims / ":" / "@", plus
// "/" and "?". The escapes themselves are judged by the decoding below.
bool is_target_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("-._~%!$&'()*+,;=:@/?").find(c) != std::string_view::npos;
}

using ascii::hex_value;

// RFC 3629 §4: well-formed UTF-8 only (no overlong form, no surrogate, nothing past U+10FFFF).
bool is_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xbf;  // bounds of the second byte
    if (b >= 0xc2 && b <= 0xdf) {
      n = 1;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b == 0xe0) low = 0xa0;   // overlong
      if (b == 0xed) high = 0x9f;  // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b == 0xf0) low = 0x90;   // overlong
      if (b == 0xf4) high = 0x8f;  // past U+10FFFF
    } else {
      return false;  // continuation byte first, C0/C1 (always overlong), F5..FF
    }
    if (i + n >= s.size()) return false;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (c < low || c > high) : (c < 0x80 || c > 0xbf)) return false;
    }
    i += n + 1;
  }
  return true;
}

// C0 controls and DEL (RFC 5234 CTL): never part of a path or query the window passes on.
bool has_control(std::string_view s) {
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) return true;
  }
  return false;
}

bool is_clean_text(std::string_view s) { return is_utf8(s) && !has_control(s); }

}  // namespace

bool walks_out(std::string_view rest) {
  for (char c : rest) {
    if (!is_target_char(c)) return true;
  }
  // Rule 3 on the raw form too: with rule 1 it cannot fail today, but the two checks stay
  // independent so a wider character set never reopens raw "\xc0\xae" or "..\t".
  if (!is_clean_text(rest)) return true;
  if (rest.find('%') == std::string_view::npos) return has_dot_dot_piece(rest);

  // The rule of window_path.h decodes round after round (RFC 3986 §2.1, byte-wise), with
  // no round limit (a bound of three let a four-times-encoded ".." through,
  // docs/reference-behaviour.md#window-path-rule).
  //
  // Rewriting the whole text every round costs O(n^2): 16 KiB of "%2525...2e" took 300 ms, a
  // stall of the window's loop that a space could repeat at will. The rounds below touch only
  // the '%' of the current form, so the total work is linear: the text is a linked list, and
  // each escape turns its '%' node into the decoded byte and unlinks the two digits.
  //
  // Only the last form is split. That is the same answer as splitting every round: a ".." piece,
  // once present, is in every later form, because its dots and the separators around it are not
  // '%' and not hex digits, so no round can consume them (an escape that reaches one of them is
  // invalid, which refuses too).
  const std::size_t end = rest.size();
  std::string bytes(rest);
  std::vector<std::size_t> next(end);
  std::vector<std::size_t> percents;
  for (std::size_t i = 0; i < end; ++i) {
    next[i] = i + 1;
    if (bytes[i] == '%') percents.push_back(i);
  }
  std::vector<std::size_t> later;
  while (!percents.empty()) {
    // One round, left to right. A '%' whose digits include another '%' is invalid here, so no
    // node is unlinked before its own turn, and a byte decoded this round is read next round.
    for (std::size_t at : percents) {
      const std::size_t high_at = next[at];
      if (high_at == end) return true;  // "%" at the end
      const std::size_t low_at = next[high_at];
      if (low_at == end) return true;  // "%4" at the end
      const int high = hex_value(bytes[high_at]);
      const int low = hex_value(bytes[low_at]);
      if (high < 0 || low < 0) return true;  // "%zz"
      bytes[at] = static_cast<char>(high * 16 + low);
      next[at] = next[low_at];
      if (bytes[at] == '%') later.push_back(at);
    }
    percents.swap(later);
    later.clear();
  }
  // Node 0 is never unlinked (only the digits after a '%' are), so the list starts there.
  std::string form;
  for (std::size_t i = 0; i != end; i = next[i]) form += bytes[i];
  // What the reference's decodeURIComponent refused as undecodable is refused too. An overlong
  // '.' or '/' (%c0%ae, %c0%af) is ".." or a separator to an upstream that decodes leniently
  // (CVE-2000-0884, IIS), a NUL cuts the path short in C-based servers, and "..%09" is ".." to a
  // server that trims whitespace.
  if (!is_clean_text(form)) return true;
  return has_dot_dot_piece(form);
}

}  // namespace policy
