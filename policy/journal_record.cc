#include "policy/journal_record.h"

#include <string>

#include "policy/json.h"

namespace policy {
namespace {

constexpr std::int64_t kMsPerDay = 86'400'000;

// Floor division: the day of a time before 1970 is the earlier day, not the one towards zero.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

struct CivilDate {
  std::int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

// Days since 1970-01-01 to a proleptic Gregorian date: Howard Hinnant's civil_from_days
// (https://howardhinnant.github.io/date_algorithms.html#civil_from_days). Eras of 400 years
// (146097 days) starting on March 1st, so the leap day is the last day of a computed year.
CivilDate civil_from_days(std::int64_t days) {
  const std::int64_t z = days + 719468;  // shift the epoch to 0000-03-01
  const std::int64_t era = floor_div(z, 146097);
  const std::int64_t doe = z - era * 146097;                                    // [0, 146096]
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);             // [0, 365]
  const std::int64_t mp = (5 * doy + 2) / 153;                                  // [0, 11]
  const auto day = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  const auto month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return CivilDate{year, month, day};
}

void append_padded(std::string& out, std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) out.append(width - digits.size(), '0');
  out += digits;
}

// Bytes a journal reader can show as they are; everything else (space, controls, DEL, bytes of
// non-ASCII text) is '?', so a host name cannot forge lines or hide in look-alike characters.
char printable(char c) {
  const auto b = static_cast<unsigned char>(c);
  return (b >= 0x21 && b <= 0x7e) ? c : '?';
}

// The shown form of a journal field: printable bytes only, at most `max` of them.
std::string shown(std::string_view text, std::size_t max) {
  const std::string_view kept = text.substr(0, max);
  std::string out;
  out.reserve(kept.size());
  for (char c : kept) out += printable(c);
  return out;
}

}  // namespace

std::string_view listener_text(Listener listener) {
  switch (listener) {
    case Listener::kCorridor: return "corridor";
    case Listener::kWindow: return "window";
    case Listener::kControl: return "control";
  }
  return "corridor";
}

std::optional<Listener> listener_from_text(std::string_view text) {
  for (Listener listener : {Listener::kCorridor, Listener::kWindow, Listener::kControl}) {
    if (listener_text(listener) == text) return listener;
  }
  return std::nullopt;
}

JournalRecord make_journal_record(std::int64_t at_unix_ms, Listener listener,
                                  std::string_view host, std::uint16_t port,
                                  const Decision& decision) {
  JournalRecord record;
  record.at_unix_ms = at_unix_ms;
  record.listener = listener;
  // Cut because a plain-proxy request line can carry a ~16 KiB host: 500 such records would
  // outgrow the 1 MiB the host reads of /journal (docs/reference-behaviour.md#journal).
  record.host = shown(host, kJournalHostMax);
  record.port = port;
  record.decision = shown(decision.text(), kJournalDecisionMax);
  return record;
}

std::string format_iso8601_ms(std::int64_t unix_ms) {
  const std::int64_t days = floor_div(unix_ms, kMsPerDay);
  std::int64_t ms_of_day = unix_ms % kMsPerDay;  // not unix_ms - days * kMsPerDay: overflows
  if (ms_of_day < 0) ms_of_day += kMsPerDay;      // [0, kMsPerDay)
  const CivilDate date = civil_from_days(days);
  std::string out;
  out.reserve(24);
  // ISO 8601 needs a sign for years outside 0000..9999; our clocks never get there, but the
  // text must stay unambiguous for any input.
  if (date.year < 0) {
    out += '-';
    append_padded(out, static_cast<std::uint64_t>(-date.year), 4);
  } else {
    if (date.year > 9999) out += '+';
    append_padded(out, static_cast<std::uint64_t>(date.year), 4);
  }
  out += '-';
  append_padded(out, date.month, 2);
  out += '-';
  append_padded(out, date.day, 2);
  out += 'T';
  append_padded(out, static_cast<std::uint64_t>(ms_of_day / 3'600'000), 2);
  out += ':';
  append_padded(out, static_cast<std::uint64_t>(ms_of_day / 60'000 % 60), 2);
  out += ':';
  append_padded(out, static_cast<std::uint64_t>(ms_of_day / 1000 % 60), 2);
  out += '.';
  append_padded(out, static_cast<std::uint64_t>(ms_of_day % 1000), 3);
  out += 'Z';
  return out;
}

std::string journal_record_json(const JournalRecord& record) {
  // Built by hand, not with json::Value: the key order at, listener, host, port, decision is
  // part of the format and json::Value sorts its keys. Host and decision go through the same
  // printable-and-cut step again, so a record built by hand still keeps the limits.
  std::string out = "{\"at\":";
  json::append_quoted(out, format_iso8601_ms(record.at_unix_ms));
  out += ",\"listener\":";
  json::append_quoted(out, listener_text(record.listener));
  out += ",\"host\":";
  json::append_quoted(out, shown(record.host, kJournalHostMax));
  out += ",\"port\":";
  out += std::to_string(record.port);
  out += ",\"decision\":";
  json::append_quoted(out, shown(record.decision, kJournalDecisionMax));
  if (record.count > 1) {
    out += ",\"count\":";
    out += std::to_string(record.count);
    out += ",\"last\":";
    json::append_quoted(out, format_iso8601_ms(record.last_unix_ms));
  }
  out += '}';
  return out;
}

}  // namespace policy
