// Name predicate: never crashes, and whatever it accepts is a plain LDH name that no address
// parser reads as an address, whose A-labels decode (policy/idna.h). The A-label decoder is also
// run on the raw bytes behind "xn--" (bounded: it refuses anything longer than a label), and the
// special-use table matches only whole trailing labels.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/address.h"
#include "policy/idna.h"
#include "policy/name.h"
#include "policy/special_names.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  const std::string label = "xn--" + std::string(raw.substr(0, 2 * policy::kMaxLabelLength));
  if (policy::is_valid_a_label(label) && label.size() > policy::kMaxLabelLength) std::abort();

  auto name = policy::checked_name(raw);
  if (!name) return 0;
  if (name->empty() || name->size() > policy::kMaxNameLength) std::abort();
  for (char c : *name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) std::abort();
  }
  if (policy::parse_answer(*name)) std::abort();
  if (!policy::is_name(policy::normalise_name(*name))) std::abort();  // stable under renormalising
  std::size_t start = 0;
  while (start <= name->size()) {
    const std::size_t dot = name->find('.', start);
    const std::string_view l = std::string_view(*name).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (l.starts_with("xn--") && !policy::is_valid_a_label(l)) std::abort();
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (const policy::SpecialUseName* row = policy::special_use_row(*name)) {
    const std::string_view n = *name;
    const bool whole = n == row->suffix || (n.ends_with(row->suffix) && n.size() > row->suffix.size() &&
                                            n[n.size() - row->suffix.size() - 1] == '.');
    if (!whole) std::abort();
  }
  return 0;
}
