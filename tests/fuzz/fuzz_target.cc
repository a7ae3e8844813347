// CONNECT target splitter and the decision before DNS, in both modes: never crashes; a pending
// resolution only ever carries a checked name and port 443; and the allowlist only narrows:
//   - allowlist mode resolves only a name on the list, and only what open mode would resolve;
//   - a name open mode resolves is resolved in allowlist mode exactly when it is listed, and
//     refused with deny:not-on-allowlist when it is not.
// Whether the target's own name is put on the list is chosen by the input (its length's parity),
// so both sides of the allowlist are fuzzed from the same corpus.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/corridor.h"
#include "policy/name.h"

namespace {

void check_pending(const policy::TargetDecision& decision) {
  if (!decision.pending) {
    if (decision.decision.allowed()) std::abort();  // allow only after the answers
    return;
  }
  if (decision.pending->port() != policy::kCorridorPort) std::abort();
  if (!policy::is_name(decision.pending->name())) std::abort();
  if (decision.decision.allowed()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  policy::NetworkPolicy open;
  open.mode = policy::Mode::kOpen;
  const policy::TargetDecision in_open = policy::decide_target(text, open);
  check_pending(in_open);

  policy::NetworkPolicy allowlist;
  allowlist.mode = policy::Mode::kAllowlist;
  allowlist.domains = {"example.com", "api.anthropic.com"};
  const bool list_it = in_open.pending && size % 2 == 1;
  if (list_it) allowlist.domains.insert(in_open.pending->name());
  const policy::TargetDecision in_allowlist = policy::decide_target(text, allowlist);
  check_pending(in_allowlist);

  if (in_allowlist.pending) {
    if (allowlist.domains.count(in_allowlist.pending->name()) == 0) std::abort();
    if (!in_open.pending || in_open.pending->name() != in_allowlist.pending->name()) std::abort();
  }
  if (in_open.pending) {
    const bool listed = allowlist.domains.count(in_open.pending->name()) != 0;
    if (listed != in_allowlist.pending.has_value()) std::abort();
    if (!listed && in_allowlist.decision.word() != policy::Word::kDenyNotOnAllowlist) std::abort();
  } else if (in_open.decision.word() != in_allowlist.decision.word()) {
    std::abort();  // a refusal before the allowlist step is the same in both modes
  }
  (void)policy::split_target(text);
  return 0;
}
