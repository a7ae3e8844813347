// The gatekeeper's answers to GET /journal and GET /policy (controller/control_answers.h), read as
// the hostile space data they are. Never crash, never throw. The first byte picks the reader; the
// rest is the answer. Invariants: a refusal is kGatekeeperRefused with a message that names the
// operation; an accepted journal or policy stays inside the bounds the readers promise (record
// and name counts, host length and bytes, the two modes).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "controller/control_answers.h"
#include "policy/journal_record.h"

namespace {

const std::string kWhat = "journal 0123456789ab";

bool printable(const std::string& s) {
  for (const char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

void check_refusal(const controller::Failure& f) {
  if (f.code != controller::Code::kGatekeeperRefused) std::abort();
  if (f.message.rfind(kWhat, 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto journal = controller::parse_journal_answer(text, kWhat);
    if (!journal.ok()) {
      check_refusal(journal.error());
      return 0;
    }
    if (journal->records.size() > controller::kMaxJournalRecords) std::abort();
    for (const controller::JournalEntry& r : journal->records) {
      if (r.host.size() > policy::kJournalHostMax || !printable(r.host)) std::abort();
      if (r.decision.empty() || r.decision.size() > policy::kJournalDecisionMax) std::abort();
      if (r.count.has_value() && (*r.count < 2 || !r.last.has_value())) std::abort();
    }
    return 0;
  }
  auto shown = controller::parse_policy_answer(text, kWhat);
  if (!shown.ok()) {
    check_refusal(shown.error());
    return 0;
  }
  if (shown->mode != "allowlist" && shown->mode != "open") std::abort();
  if (shown->grants.size() > controller::kMaxPolicyGrants) std::abort();
  return 0;
}
