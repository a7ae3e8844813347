// Ids and image words (ids.h).
#include <sys/random.h>

#include <string>
#include <string_view>

#include "controller/ids.h"

namespace controller {

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

bool is_image_id(std::string_view text) {
  if (text.size() != 71 || text.substr(0, 7) != "sha256:") return false;
  for (const char c : text.substr(7)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_image_reference(std::string_view text) {
  // Docker's reference grammar, loosely: never a flag, only its alphabet, bounded.
  if (text.empty() || text.size() > 512 || text.front() == '-' || text.front() == '.' ||
      text.front() == ':') {
    return false;
  }
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@';
    if (!ok) return false;
  }
  return true;
}

}  // namespace controller
