// CONNECT target splitter and the decision before DNS: never crashes; a pending resolution only
// ever carries a checked name and port 443.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/corridor.h"
#include "policy/name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  policy::NetworkPolicy open;
  open.mode = policy::Mode::kOpen;
  policy::TargetDecision decision = policy::decide_target(text, open);
  if (decision.pending) {
    if (decision.pending->port() != policy::kCorridorPort) std::abort();
    if (!policy::is_name(decision.pending->name())) std::abort();
    if (decision.decision.allowed()) std::abort();  // allow only after the answers
  } else if (decision.decision.allowed()) {
    std::abort();
  }
  (void)policy::split_target(text);
  return 0;
}
