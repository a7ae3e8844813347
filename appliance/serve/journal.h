// The journal (docs/reference-behaviour.md#journal): a ring of 500 records in memory, `dropped`,
// `since`. Notes (traffic that never reached a decision: cap drops, unreadable requests) are
// rate-limited to one per 60 s per (listener, decision); what the window suppressed is not lost:
// when the window ends, a note with host "suppressed=<n>" records the count
// (docs/reference-behaviour.md#journal: a second flood within the minute left no trace).
//
// A space must not be able to flush the evidence of what it tried (a flood of cheap refusals):
//   - a refusal identical to one still in the ring (same listener, decision text and host) is
//     coalesced into it: its count grows and its last time moves; it takes no new place;
//   - the first refusal of each (listener, word) is pinned: never overwritten (at most
//     kListenerCount × words of them, far below the capacity);
//   - `allow` and `failed:*` records keep a reserved share (kAllowShare): refusals overwrite the
//     oldest refusal, never one of them, while they hold no more than that share;
//   - what is overwritten is counted in `dropped` (each record by its count).
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "policy/decision.h"
#include "policy/journal_record.h"

namespace appliance::serve {

class Metrics;

class Journal {
 public:
  static constexpr std::size_t kCapacity = 500;
  static constexpr std::size_t kAllowShare = 200;  // allow/failed records refusals cannot evict
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
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

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
  void append(policy::JournalRecord record, policy::Word word);
  void evict_one();

  // Which share of the ring a record belongs to.
  enum class Kind : std::uint8_t { kRefusal, kConnection, kPinned };
  struct Entry {
    policy::JournalRecord record;
    Kind kind = Kind::kRefusal;
  };
  using Key = std::tuple<policy::Listener, std::string, std::string>;  // listener, decision, host

  uv_loop_t* loop_;
  Metrics& metrics_;
  std::list<Entry> ring_;  // oldest first
  std::map<Key, std::list<Entry>::iterator> by_key_;  // refusals that can still be coalesced
  std::set<std::pair<policy::Listener, policy::Word>> seen_words_;
  std::size_t connections_ = 0;  // kConnection entries in the ring
  std::uint64_t dropped_ = 0;
  std::int64_t since_ms_;
  // (listener × {too-many-connections, unreadable-request})
  std::array<NoteSlot, 6> slots_;
  bool closed_ = false;
};

std::int64_t wall_clock_ms();

}  // namespace appliance::serve
