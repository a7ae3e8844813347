#include "appliance/serve/journal.h"

#include <chrono>

#include "appliance/loop/handle.h"
#include "appliance/serve/metrics.h"

namespace appliance::serve {

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Journal::Journal(uv_loop_t* loop, Metrics& metrics)
    : loop_(loop), metrics_(metrics), since_ms_(wall_clock_ms()) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    NoteSlot& slot = slots_[i];
    slot.journal = this;
    slot.listener = static_cast<policy::Listener>(i / 2);
    slot.word = (i % 2 == 0) ? policy::Word::kDenyTooManyConnections
                             : policy::Word::kDenyUnreadableRequest;
    uv_timer_init(loop_, &slot.timer);
    slot.timer.data = &slot;
    // The note timers never keep the loop alive on their own.
    uv_unref(loop::as_handle(&slot.timer));
  }
}

void Journal::close() {
  if (closed_) return;
  closed_ = true;
  for (NoteSlot& slot : slots_) {
    uv_close(loop::as_handle(&slot.timer), nullptr);
  }
}

void Journal::evict_one() {
  // Refusals go first while the connection records keep to their share; pinned ones never.
  const bool evict_connection = connections_ > kAllowShare;
  auto victim = ring_.end();
  auto fallback = ring_.end();
  for (auto it = ring_.begin(); it != ring_.end(); ++it) {
    if (it->kind == Kind::kPinned) continue;
    const bool wanted = evict_connection ? it->kind == Kind::kConnection : it->kind == Kind::kRefusal;
    if (wanted) {
      victim = it;
      break;
    }
    if (fallback == ring_.end()) fallback = it;
  }
  if (victim == ring_.end()) victim = fallback;
  if (victim == ring_.end()) return;  // only pinned records: cannot happen below kCapacity words
  if (victim->kind == Kind::kConnection) --connections_;
  by_key_.erase(Key{victim->record.listener, victim->record.decision, victim->record.host});
  dropped_ += victim->record.count;
  ring_.erase(victim);
}

void Journal::append(policy::JournalRecord record, policy::Word word) {
  const bool connection = word == policy::Word::kAllow || word == policy::Word::kFailed;
  if (!connection) {
    auto found = by_key_.find(Key{record.listener, record.decision, record.host});
    if (found != by_key_.end()) {
      policy::JournalRecord& kept = found->second->record;
      ++kept.count;
      kept.last_unix_ms = record.at_unix_ms;
      return;
    }
  }
  Kind kind = connection ? Kind::kConnection : Kind::kRefusal;
  if (!connection && seen_words_.insert({record.listener, word}).second) kind = Kind::kPinned;
  if (ring_.size() >= kCapacity) evict_one();
  record.last_unix_ms = record.at_unix_ms;
  ring_.push_back(Entry{std::move(record), kind});
  auto it = std::prev(ring_.end());
  if (kind == Kind::kConnection) {
    ++connections_;
  } else {
    by_key_[Key{it->record.listener, it->record.decision, it->record.host}] = it;
  }
}

void Journal::record(policy::Listener listener, std::string_view host, std::uint16_t port,
                     const policy::Decision& decision) {
  metrics_.decided(listener, decision.word());
  append(policy::make_journal_record(wall_clock_ms(), listener, host, port, decision), decision.word());
}

Journal::NoteSlot* Journal::slot_for(policy::Listener listener, policy::Word word) {
  for (NoteSlot& slot : slots_) {
    if (slot.listener == listener && slot.word == word) return &slot;
  }
  return nullptr;
}

void Journal::note(policy::Listener listener, policy::Word word) {
  NoteSlot* slot = slot_for(listener, word);
  if (slot == nullptr) {  // not a note word: journal it plainly
    record(listener, "", 0, policy::Decision::of(word));
    return;
  }
  if (slot->window_open) {
    metrics_.decided(listener, word);
    ++slot->suppressed;
    return;
  }
  record(listener, "", 0, policy::Decision::of(word));
  slot->window_open = true;
  slot->suppressed = 0;
  if (!closed_) uv_timer_start(&slot->timer, on_note_window_end, kNoteWindowMs, 0);
}

void Journal::on_note_window_end(uv_timer_t* timer) noexcept {
  auto* slot = static_cast<NoteSlot*>(timer->data);
  Journal* self = slot->journal;
  if (slot->suppressed == 0) {
    slot->window_open = false;
    return;
  }
  // The count of what the window held back; this note opens the next window.
  self->append(policy::make_journal_record(wall_clock_ms(), slot->listener,
                                           "suppressed=" + std::to_string(slot->suppressed), 0,
                                           policy::Decision::of(slot->word)),
               slot->word);
  slot->suppressed = 0;
  if (!self->closed_) uv_timer_start(&slot->timer, on_note_window_end, kNoteWindowMs, 0);
}

std::string Journal::json() const {
  std::string out = "{\"records\":[";
  bool first = true;
  for (const Entry& entry : ring_) {
    if (!first) out += ',';
    first = false;
    out += policy::journal_record_json(entry.record);
  }
  out += "],\"dropped\":";
  out += std::to_string(dropped_);
  out += ",\"since\":\"";
  out += policy::format_iso8601_ms(since_ms_);
  out += "\"}";
  return out;
}

}  // namespace appliance::serve
