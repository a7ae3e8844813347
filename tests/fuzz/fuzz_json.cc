// JSON reader and the control messages built on it: never crash; what parses dumps to text that
// parses again to the same dump.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/control_messages.h"
#include "policy/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto value = policy::json::parse(text);
  if (value) {
    std::string once = value->dump();
    auto again = policy::json::parse(once);
    if (!again || again->dump() != once) std::abort();
  }
  (void)policy::parse_network_request(text);
  (void)policy::parse_grant_request(text);
  return 0;
}
