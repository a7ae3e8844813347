#include "policy/name.h"

#include "policy/ascii.h"
#include "policy/idna.h"

namespace policy {
namespace {

constexpr auto is_lower_letter = ascii::is_lower;
constexpr auto is_digit = ascii::is_digit;
constexpr auto is_hex_digit = ascii::is_lower_hex;

bool all_of(std::string_view text, bool (*predicate)(char)) {
  for (char c : text) {
    if (!predicate(c)) return false;
  }
  return true;
}

// A label of 1..63 letters, digits and hyphens, not starting or ending with a hyphen
// (RFC 1123 §2.1 host names; lower case because the input is normalised).
bool is_label(std::string_view label) {
  if (label.empty() || label.size() > kMaxLabelLength) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  for (char c : label) {
    if (!is_lower_letter(c) && !is_digit(c) && c != '-') return false;
  }
  // An A-label must be one IDNA2008 could have made (policy/idna.h says what is checked).
  if (label.starts_with("xn--")) return is_valid_a_label(label);
  return true;
}

// A last label that some parser reads as a number makes the whole name an address spelling:
// glibc inet_aton and c-ares read "127.1", "2130706433", "0x7f000001" and "0177.0.0.1" as
// 127.0.0.1. All digits covers decimal and octal; "0x" covers hex (bare "0x" too, which inet_aton
// reads as 0); "0o" covers the octal prefix of newer parsers (Python, JavaScript).
bool is_number_spelling(std::string_view label) {
  if (all_of(label, is_digit)) return true;
  if (label.size() >= 2 && label[0] == '0' && label[1] == 'x') {
    return all_of(label.substr(2), is_hex_digit);
  }
  if (label.size() >= 2 && label[0] == '0' && label[1] == 'o') {
    return all_of(label.substr(2), is_digit);
  }
  return false;
}

}  // namespace

std::string normalise_name(std::string_view raw) {
  std::string out(raw);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

bool is_name(std::string_view normalised) {
  if (normalised.empty() || normalised.size() > kMaxNameLength) return false;
  std::size_t labels = 0;
  std::string_view last;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = normalised.find('.', start);
    std::string_view label =
        normalised.substr(start, dot == std::string_view::npos ? normalised.npos : dot - start);
    if (!is_label(label)) return false;
    ++labels;
    last = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return labels >= kMinLabels && !is_number_spelling(last);
}

std::optional<std::string> checked_name(std::string_view raw) {
  std::string normalised = normalise_name(raw);
  if (!is_name(normalised)) return std::nullopt;
  return normalised;
}

}  // namespace policy
