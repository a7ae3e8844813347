// The journal record (docs/reference-behaviour.md#journal): five keys, never a path, a query, a
// body, a header value or a secret.
//   {"at":"2026-11-30T12:00:00.000Z","listener":"corridor","host":"example.com","port":443,
//    "decision":"allow"}
// A record that stands for several identical ones (same listener, decision and host; the journal
// coalesces repeated refusals so a flood cannot push evidence out) has two more keys after them:
// "count" (≥ 2) and "last" (the time of the latest; "at" is the first's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "policy/decision.h"

namespace policy {

enum class Listener : std::uint8_t { kCorridor = 0, kWindow, kControl };
std::string_view listener_text(Listener listener);
std::optional<Listener> listener_from_text(std::string_view text);

inline constexpr std::size_t kJournalHostMax = 256;
inline constexpr std::size_t kJournalDecisionMax = 64;

struct JournalRecord {
  std::int64_t at_unix_ms = 0;  // the caller's clock; policy/ has none
  Listener listener = Listener::kCorridor;
  std::string host;             // shown text, at most kJournalHostMax characters
  std::uint16_t port = 0;
  std::string decision;         // Decision::text(), at most kJournalDecisionMax characters
  std::uint64_t count = 1;      // identical records this one stands for
  std::int64_t last_unix_ms = 0;  // the latest of them (meaningful when count > 1)
};

// Builds a record: the host is made printable (bytes outside 0x21..0x7e become '?') and cut to
// kJournalHostMax; the decision text is cut to kJournalDecisionMax.
JournalRecord make_journal_record(std::int64_t at_unix_ms, Listener listener,
                                  std::string_view host, std::uint16_t port,
                                  const Decision& decision);

// ISO-8601 UTC with milliseconds: "2026-11-30T12:00:00.000Z".
std::string format_iso8601_ms(std::int64_t unix_ms);

// One record as a JSON object with the five keys, in the order at, listener, host, port, decision,
// then count and last when count > 1.
std::string journal_record_json(const JournalRecord& record);

}  // namespace policy
