// Answer parser: never crashes, and an accepted address prints to a canonical text that parses
// back to the same address.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/address.h"
#include "policy/ranges.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto address = policy::parse_answer(text);
  if (!address) return 0;
  auto again = policy::parse_answer(address->to_string());
  if (!again || !(*again == *address)) std::abort();
  (void)policy::classify(*address);
  return 0;
}
