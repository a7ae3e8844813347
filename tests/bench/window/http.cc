#include "tests/bench/window/http.h"

#include <cctype>

namespace bench {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string_view> header_value(std::string_view head, std::string_view name) {
  std::size_t at = head.find("\r\n");  // after the start line
  while (at != std::string_view::npos) {
    const std::size_t start = at + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), name)) return trim(line.substr(colon + 1));
    at = end;
  }
  return std::nullopt;
}

bool header_has_token(std::string_view head, std::string_view name, std::string_view token) {
  std::optional<std::string_view> value = header_value(head, name);
  if (!value) return false;
  std::string_view rest = *value;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    if (iequals(trim(rest.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace bench
