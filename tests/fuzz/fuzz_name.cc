// Name predicate: never crashes, and whatever it accepts is a plain LDH name that no address
// parser reads as an address.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/address.h"
#include "policy/name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  auto name = policy::checked_name(raw);
  if (!name) return 0;
  if (name->empty() || name->size() > policy::kMaxNameLength) std::abort();
  for (char c : *name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) std::abort();
  }
  if (policy::parse_answer(*name)) std::abort();
  if (!policy::is_name(policy::normalise_name(*name))) std::abort();  // stable under renormalising
  return 0;
}
