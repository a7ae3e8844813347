// The journal (docs/reference-behaviour.md#journal): a ring of 500 records in memory, `dropped`,
// `since`. Notes (traffic that never reached a decision: cap drops, unreadable requests) are
// rate-limited to one per 60 s per (listener, decision); what the window suppressed is not lost:
// when the window ends, a note with host "suppressed=<n>" records the count
// (docs/reference-behaviour.md#journal: a second flood within the minute left no trace).
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <deque>
#include <string>

#include "policy/decision.h"
#include "policy/journal_record.h"

namespace appliance::serve {

class Metrics;

class Journal {
 public:
  static constexpr std::size_t kCapacity = 500;
  static constexpr std::uint64_t kNoteWindowMs = 60'000;

  Journal(uv_loop_t* loop, Metrics& metrics);
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void record(policy::Listener listener, std::string_view host, std::uint16_t port,
              const policy::Decision& decision);
  // A rate-limited note for kDenyTooManyConnections or kDenyUnreadableRequest.
  void note(policy::Listener listener, policy::Word word);

  // {"records":[…],"dropped":<n>,"since":"<ISO>"}
  [[nodiscard]] std::string json() const;
  [[nodiscard]] std::size_t size() const { return ring_.size(); }

  // Closes the note timers (shutdown). The journal must outlive the loop run.
  void close();

 private:
  struct NoteSlot {
    Journal* journal = nullptr;
    policy::Listener listener = policy::Listener::kCorridor;
    policy::Word word = policy::Word::kDenyUndecided;
    uv_timer_t timer{};
    bool window_open = false;
    std::uint64_t suppressed = 0;
  };
  static void on_note_window_end(uv_timer_t* timer) noexcept;
  NoteSlot* slot_for(policy::Listener listener, policy::Word word);
  void append(policy::JournalRecord record);

  uv_loop_t* loop_;
  Metrics& metrics_;
  std::deque<policy::JournalRecord> ring_;
  std::uint64_t dropped_ = 0;
  std::int64_t since_ms_;
  // (listener × {too-many-connections, unreadable-request})
  std::array<NoteSlot, 6> slots_;
  bool closed_ = false;
};

std::int64_t wall_clock_ms();

}  // namespace appliance::serve
