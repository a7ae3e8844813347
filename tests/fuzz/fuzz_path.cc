// Window path rule: never crashes (the fixed-point decode must end); a byte outside RFC 3986
// path and query characters is always refused; a text of those characters with no '%' and no
// ".." piece is never refused.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/window_path.h"

namespace {
bool all_target_chars(std::string_view s) {
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && std::string_view("-._~%!$&'()*+,;=:@/?").find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool has_dotdot_piece(std::string_view s) {
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '/' || s[i] == '\\' || s[i] == ';' || s[i] == '?' || s[i] == '#') {
      if (s.substr(start, i - start) == "..") return true;
      start = i + 1;
    }
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const bool refused = policy::walks_out(rest);
  if (has_dotdot_piece(rest) && !refused) std::abort();
  if (!all_target_chars(rest) && !refused) std::abort();
  if (all_target_chars(rest) && rest.find('%') == std::string_view::npos && !has_dotdot_piece(rest) && refused) {
    std::abort();
  }
  return 0;
}
