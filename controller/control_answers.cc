#include "controller/control_answers.h"

#include <initializer_list>
#include <set>

#include "controller/gatekeeper_channel.h"
#include "policy/control_messages.h"
#include "policy/corridor.h"
#include "policy/decision.h"
#include "policy/journal_record.h"
#include "policy/json.h"
#include "policy/name.h"

namespace controller {
namespace {

using policy::json::Value;

Failure refused(const std::string& what, const std::string& why) {
  return fail(Code::kGatekeeperRefused, what + ": the gatekeeper's answer is refused: " + why);
}

// The object's members are exactly `required` plus any of `optional`.
bool has_members(const Value& v, std::initializer_list<std::string_view> required,
                 std::initializer_list<std::string_view> optional = {}) {
  if (!v.is_object()) return false;
  std::size_t found = 0;
  for (std::string_view key : required) {
    if (v.find(key) == nullptr) return false;
    ++found;
  }
  for (std::string_view key : optional) found += v.find(key) != nullptr ? 1 : 0;
  return found == v.members().size();
}

// "2026-11-30T12:00:00.000Z" (policy::format_iso8601_ms), nothing else.
bool is_journal_time(const Value* v) {
  if (v == nullptr || !v->is_string()) return false;
  const std::string& t = v->as_string();
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (t.size() != kShape.size()) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (kShape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != kShape[i]) return false;
  }
  return true;
}

// The journal's host: at most kJournalHostMax bytes of 0x21..0x7e (make_journal_record's
// alphabet), possibly empty (a note).
bool is_journal_host(const Value* v) {
  if (v == nullptr || !v->is_string() || v->as_string().size() > policy::kJournalHostMax) {
    return false;
  }
  for (const char c : v->as_string()) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// A decision of the vocabulary: a word without detail, or a detail word with a valid detail.
bool is_decision_text(const Value* v) {
  if (v == nullptr || !v->is_string()) return false;
  const std::string& text = v->as_string();
  if (text.size() > policy::kJournalDecisionMax) return false;
  if (std::optional<policy::Word> w = policy::word_from_text(text); w) {
    return !policy::word_takes_detail(*w);
  }
  for (std::size_t colon = text.find(':'); colon != std::string::npos;
       colon = text.find(':', colon + 1)) {
    std::optional<policy::Word> w = policy::word_from_text(std::string_view(text).substr(0, colon));
    if (w && policy::word_takes_detail(*w) &&
        policy::is_valid_detail(std::string_view(text).substr(colon + 1))) {
      return true;
    }
  }
  return false;
}

Result<JournalEntry> journal_entry(const Value& v, const std::string& what, std::size_t index) {
  const std::string at = "record " + std::to_string(index);
  if (!has_members(v, {"at", "listener", "host", "port", "decision"}, {"count", "last"})) {
    return refused(what, at + " is not {at, listener, host, port, decision, count?, last?}");
  }
  JournalEntry e;
  if (!is_journal_time(v.find("at"))) return refused(what, at + ": at is not a journal time");
  e.at = v.find("at")->as_string();
  const Value* listener = v.find("listener");
  if (!listener->is_string() || !policy::listener_from_text(listener->as_string())) {
    return refused(what, at + ": listener is not corridor, window or control");
  }
  e.listener = listener->as_string();
  if (!is_journal_host(v.find("host"))) {
    return refused(what, at + ": host is not at most 256 printable ASCII characters");
  }
  e.host = v.find("host")->as_string();
  const std::optional<std::int64_t> port =
      v.find("port")->is_number() ? v.find("port")->as_int() : std::nullopt;
  if (!port || *port < 0 || *port > 65535) return refused(what, at + ": port is not 0 to 65535");
  e.port = static_cast<std::uint16_t>(*port);
  if (!is_decision_text(v.find("decision"))) {
    return refused(what, at + ": decision is not a decision word");
  }
  e.decision = v.find("decision")->as_string();
  const Value* count = v.find("count");
  const Value* last = v.find("last");
  if ((count == nullptr) != (last == nullptr)) {
    return refused(what, at + ": count and last come together");
  }
  if (count != nullptr) {
    const std::optional<std::int64_t> n = count->is_number() ? count->as_int() : std::nullopt;
    if (!n || *n < 2) return refused(what, at + ": count is not a whole number of at least 2");
    if (!is_journal_time(last)) return refused(what, at + ": last is not a journal time");
    e.count = static_cast<std::uint64_t>(*n);
    e.last = last->as_string();
  }
  return e;
}

Result<Value> parse_bounded(std::string_view text, const std::string& what,
                            std::size_t max_elements) {
  policy::json::Limits limits;
  limits.max_bytes = kMaxControlAnswer;
  limits.max_depth = 3;
  limits.max_elements = max_elements;
  policy::Result<Value> doc = policy::json::parse(text, limits);
  if (!doc) return refused(what, "not JSON within its bounds: " + doc.error().message);
  return std::move(*doc);
}

}  // namespace

Result<GatekeeperJournal> parse_journal_answer(std::string_view text, const std::string& what) {
  // Each record holds at most 8 values (itself and 7 members); the document 4 more.
  Result<Value> doc = parse_bounded(text, what, 4 + kMaxJournalRecords * 8);
  if (!doc) return doc.error();
  if (!has_members(*doc, {"records", "dropped", "since"}) || !doc->find("records")->is_array()) {
    return refused(what, "not {records: [...], dropped, since}");
  }
  const std::vector<Value>& records = doc->find("records")->items();
  if (records.size() > kMaxJournalRecords) {
    return refused(what, std::to_string(records.size()) + " records, more than the " +
                             std::to_string(kMaxJournalRecords) + " a journal holds");
  }
  GatekeeperJournal out;
  const std::optional<std::int64_t> dropped =
      doc->find("dropped")->is_number() ? doc->find("dropped")->as_int() : std::nullopt;
  if (!dropped || *dropped < 0) return refused(what, "dropped is not a whole number");
  out.dropped = static_cast<std::uint64_t>(*dropped);
  if (!is_journal_time(doc->find("since"))) return refused(what, "since is not a journal time");
  out.since = doc->find("since")->as_string();
  out.records.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    Result<JournalEntry> e = journal_entry(records[i], what, i);
    if (!e) return e.error();
    out.records.push_back(std::move(*e));
  }
  return out;
}

Result<GatekeeperPolicy> parse_policy_answer(std::string_view text, const std::string& what) {
  Result<Value> doc =
      parse_bounded(text, what, 5 + policy::kMaxAllowlistDomains + kMaxPolicyGrants);
  if (!doc) return doc.error();
  if (!has_members(*doc, {"mode", "domains", "grants"})) {
    return refused(what, "not {mode, domains, grants}");
  }
  GatekeeperPolicy out;
  const Value* mode = doc->find("mode");
  if (!mode->is_string() || (mode->as_string() != "allowlist" && mode->as_string() != "open")) {
    return refused(what, "mode is not allowlist or open");
  }
  out.mode = mode->as_string();
  const Value* domains = doc->find("domains");
  if (!domains->is_array() || domains->items().size() > policy::kMaxAllowlistDomains) {
    return refused(what, "domains is not a list of at most " +
                             std::to_string(policy::kMaxAllowlistDomains) + " names");
  }
  std::set<std::string> seen;
  for (const Value& d : domains->items()) {
    if (!d.is_string() || !policy::is_name(d.as_string()) || !seen.insert(d.as_string()).second) {
      return refused(what, "domains holds something that is not a name, or one twice");
    }
    out.domains.push_back(d.as_string());
  }
  const Value* grants = doc->find("grants");
  if (!grants->is_array() || grants->items().size() > kMaxPolicyGrants) {
    return refused(
        what, "grants is not a list of at most " + std::to_string(kMaxPolicyGrants) + " grant ids");
  }
  seen.clear();
  for (const Value& g : grants->items()) {
    if (!g.is_string() || !policy::is_grant_id(g.as_string()) ||
        !seen.insert(g.as_string()).second) {
      return refused(what, "grants holds something that is not a grant id, or one twice");
    }
    out.grants.push_back(g.as_string());
  }
  return out;
}

}  // namespace controller
