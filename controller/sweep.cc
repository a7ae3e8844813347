#include "controller/sweep.h"

#include <ctime>
#include <map>
#include <set>

#include "controller/records.h"
#include "controller/temp_dir.h"

namespace controller {

std::int64_t parse_utc_time(std::string_view text) {
  if (text.size() < 19) return 0;
  std::tm tm{};
  auto num = [&](std::size_t at, std::size_t len, int& out) {
    out = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!num(0, 4, y) || text[4] != '-' || !num(5, 2, mo) || text[7] != '-' || !num(8, 2, d) ||
      (text[10] != 'T' && text[10] != ' ') || !num(11, 2, h) || text[13] != ':' ||
      !num(14, 2, mi) || text[16] != ':' || !num(17, 2, se)) {
    return 0;
  }
  // Only UTC: the label's "Z" or Docker's "+0000".
  const std::string_view rest = text.substr(19);
  const bool utc = rest == "Z" || rest.find("+0000") != std::string_view::npos ||
                   (rest.size() > 1 && rest[0] == '.' &&
                    (rest.back() == 'Z' || rest.find("+0000") != std::string_view::npos));
  if (!utc) return 0;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  return static_cast<std::int64_t>(timegm(&tm));
}

Result<std::vector<LabelledId>> Place::labelled_ids() {
  Result<std::vector<SpaceSummary>> all = list();
  if (!all) return all.error();
  std::vector<LabelledId> out;
  for (const SpaceSummary& s : *all) out.push_back({s.id, parse_utc_time(s.created)});
  return out;
}

Result<SweepDone> sweep(Manager& manager, const SweepOptions& options) {
  SweepDone out;
  std::vector<SweptSpace>&removed = out.removed, &left = out.left;
  std::vector<std::string>& records_removed = out.records_removed;
  std::vector<SweepFailure>& failures = out.failures;
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t grace = options.grace.count();
  auto old_enough = [&](std::int64_t created) { return created > 0 && created + grace <= now; };
  auto forget_refs = [&](const SpaceRecord& record, const std::string& id) {
    if (options.remove_refs && !record.code.repository.empty()) {
      options.remove_refs(record.code.repository, id);
    }
  };

  Result<std::vector<LabelledId>> labelled = manager.place.labelled_ids();
  if (!labelled) return labelled.error();  // an unreachable place is never "nothing to sweep"
  std::set<std::string> at_place;
  for (const LabelledId& l : *labelled) {
    at_place.insert(l.id);
    if (SpaceLock::is_held(manager.state, l.id)) {
      left.push_back({l.id, "busy"});
      continue;
    }
    Result<bool> exists = record_exists(manager.state, l.id);
    Result<SpaceRecord> record = read_record(manager.state, l.id);
    if (!exists || !record) {
      // An unreadable record is never taken for a missing one.
      left.push_back({l.id, "record_unreadable"});
      continue;
    }
    const bool orphan = !*exists || !record->creation.state.empty();
    if (!orphan) continue;  // a space
    std::int64_t created = l.created_unix;
    if (created == 0 && *exists) created = parse_utc_time(record->creation.started);
    if (!old_enough(created)) {
      left.push_back({l.id, "within_grace"});
      continue;
    }
    Result<SpaceLock> lock = SpaceLock::acquire(manager.state, l.id, "sweep");
    if (!lock) {
      left.push_back({l.id, "busy"});
      continue;
    }
    // Judged again under the lock: a creation may have finished meanwhile.
    Result<bool> still = record_exists(manager.state, l.id);
    Result<SpaceRecord> again = read_record(manager.state, l.id);
    if (!still || !again || (*still && again->creation.state.empty())) continue;
    const std::string reason = !*still                                ? "no_record"
                               : again->creation.state == "preparing" ? "creation_interrupted"
                                                                      : "creation_failed";
    if (Result<void> r = manager.place.remove(l.id); !r && r.error().code != Code::kSpaceNotFound) {
      failures.push_back({l.id, r.error()});
      continue;
    }
    removed.push_back({l.id, reason});
    if (*still && again->creation.state == "preparing") {
      forget_refs(*again, l.id);
      if (Result<void> r = remove_record(manager.state, l.id); r) records_removed.push_back(l.id);
    }
  }

  // Creations that died before the place made anything (or whose objects are gone already).
  if (Result<std::vector<std::string>> ids = record_ids(manager.state); ids) {
    for (const std::string& id : *ids) {
      if (at_place.count(id) != 0 || SpaceLock::is_held(manager.state, id)) continue;
      Result<SpaceRecord> record = read_record(manager.state, id);
      if (!record || record->creation.state != "preparing" ||
          !old_enough(parse_utc_time(record->creation.started))) {
        continue;
      }
      Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id, "sweep");
      if (!lock) continue;
      Result<SpaceRecord> again = read_record(manager.state, id);
      if (!again || again->creation.state != "preparing") continue;
      forget_refs(*again, id);
      if (Result<void> r = remove_record(manager.state, id); r) records_removed.push_back(id);
    }
  }

  // Subnets held by records that nothing at the place carries any more (a space removed behind
  // spacectl's back, a failed creation whose record outlived its networks): freed, the record
  // kept. Judged again after taking each lock, against a fresh list: a creation that finished
  // meanwhile is at the place by then.
  if (Result<std::vector<std::string>> ids = record_ids(manager.state); ids) {
    std::vector<std::pair<std::string, SpaceLock>> held;
    for (const std::string& id : *ids) {
      if (at_place.count(id) != 0 || SpaceLock::is_held(manager.state, id)) continue;
      Result<SpaceRecord> record = read_record(manager.state, id);
      if (!record || record->subnets.inner.empty() || record->creation.state == "preparing") {
        continue;
      }
      Result<SpaceLock> lock = SpaceLock::acquire(manager.state, id, "sweep");
      if (lock) held.emplace_back(id, std::move(*lock));
    }
    std::set<std::string> carried;
    if (!held.empty()) {
      Result<std::vector<LabelledId>> again = manager.place.labelled_ids();
      if (!again) return again.error();
      for (const LabelledId& l : *again) carried.insert(l.id);
    }
    for (const auto& [id, lock] : held) {
      if (carried.count(id) != 0) continue;
      Result<SpaceRecord> record = read_record(manager.state, id);
      if (!record || record->subnets.inner.empty() || record->creation.state == "preparing") {
        continue;
      }
      const std::string freed = record->subnets.inner + " " + record->subnets.outer;
      record->subnets = SubnetRecord{};
      if (Result<void> w = write_record(manager.state, id, *record); w) {
        out.subnets_freed.push_back({id, freed});
      } else {
        failures.push_back({id, w.error()});
      }
    }
  }

  out.temp_dirs_removed =
      sweep_temp_dirs(options.temp_base.empty() ? temp_base() : options.temp_base);
  return out;
}

}  // namespace controller
