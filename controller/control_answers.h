// The gatekeeper's answers to GET /journal and GET /policy, read as the space data they are: the
// gatekeeper runs beside the space, so what it prints is hostile until it parses. Each reader
// takes exactly the document the appliance writes (appliance/control/server.cc answers it), with
// every member known, typed and bounded, and refuses anything else with kGatekeeperRefused naming
// the operation and the space; nothing of a refused answer is passed on.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "controller/errors.h"
#include "controller/results.h"

namespace controller {

// The gatekeeper's ring holds at most 500 records; a longer journal is not one it wrote.
inline constexpr std::size_t kMaxJournalRecords = 500;
// The allowlist holds at most policy::kMaxAllowlistDomains names; grants have no cap of their
// own in the gatekeeper, so this bound is ours (far above what a space is given).
inline constexpr std::size_t kMaxPolicyGrants = 1000;

// {"records":[{at, listener, host, port, decision, count?, last?}], "dropped": n, "since": time}
// (policy/journal_record.h). `what` names the operation and the space in a refusal.
Result<GatekeeperJournal> parse_journal_answer(std::string_view text, const std::string& what);

// {"mode": "allowlist"|"open", "domains": [names], "grants": [grant ids]}.
Result<GatekeeperPolicy> parse_policy_answer(std::string_view text, const std::string& what);

}  // namespace controller
