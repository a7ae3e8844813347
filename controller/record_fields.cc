// What each member of a record may hold (records.h). A record is the user's own file, but it can be
// edited by hand, truncated by a full disk, or written by another tool: every value is checked
// against the rule the command that wrote it applied, so a record that no spacectl could have
// written is unreadable (and nothing acts on it) instead of being sent to a gatekeeper, used as a
// path, or shown. Messages name the member, never echo the value (it may be anything).
#include "controller/record_fields.h"

#include <set>

#include <nlohmann/json.hpp>

#include "controller/inspect_summary.h"
#include "controller/text.h"
#include "policy/control_messages.h"

namespace controller {

using nlohmann::json;

namespace {

bool is_lower_hex(std::string_view text) {
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A git object id: SHA-1 (40) or SHA-256 (64) lowercase hex.
bool is_object_id(std::string_view text) {
  return (text.size() == 40 || text.size() == 64) && is_lower_hex(text);
}

// A word of ours: progress steps, history states, error codes.
bool is_word(std::string_view text) {
  if (text.empty() || text.size() > kMaxRecordWordBytes) return false;
  for (const char c : text)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

// An absolute path of UTF-8 without control characters (it becomes an argument and is shown).
bool is_clean_absolute_path(std::string_view text) {
  if (text.empty() || text.size() > kMaxRecordPathBytes || text.front() != '/' || !valid_utf8(text))
    return false;
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

Result<void> check_record_fields(const SpaceRecord& r, const std::string& what) {
  auto bad = [&](const std::string& why) -> Result<void> {
    return fail(Code::kRecordUnreadable, "record " + what + ": " + why);
  };
  // The network choice: exactly what POST /network accepts (the record is replayed to a restarted
  // gatekeeper), and each name once.
  {
    const json body = {{"mode", r.mode}, {"domains", r.domains}};
    policy::Result<policy::NetworkPolicy> n =
        policy::parse_network_request(body.dump(-1, ' ', false, json::error_handler_t::replace));
    if (!n) return bad("domains: " + n.error().message);
    const std::set<std::string> unique(r.domains.begin(), r.domains.end());
    if (unique.size() != r.domains.size()) return bad("domains lists a name twice");
    // network set records the names as the gatekeeper normalised them; any other spelling is no
    // record of ours (and could be read differently by a later gatekeeper).
    if (unique != n->domains) return bad("domains: a name is not in the form network set records");
  }
  // Grants: what POST /grants accepts (a stand-in secret where the record says there was one: the
  // value is never recorded), in the canonical form grant add records, each id once.
  std::set<std::string> grant_ids;
  for (const GrantRecord& g : r.grants) {
    json body = {{"id", g.id}, {"upstream", g.upstream}};
    if (g.has_secret != !g.header.empty())
      return bad("grant " + (policy::is_grant_id(g.id) ? g.id : std::string("?")) +
                 ": a header is recorded exactly when a secret was given");
    if (g.has_secret) {
      body["header"] = g.header;
      body["secret"] = "x";
    }
    if (g.unsafe_private_upstream) body["unsafe_private_upstream"] = true;
    policy::Result<policy::Grant> parsed =
        policy::parse_grant_request(body.dump(-1, ' ', false, json::error_handler_t::replace));
    if (!parsed) return bad("a grant: " + parsed.error().message);
    if (parsed->upstream.to_string() != g.upstream || parsed->header.value_or("") != g.header)
      return bad("grant " + g.id + ": upstream or header is not in the form grant add records");
    if (!grant_ids.insert(g.id).second) return bad("grant " + g.id + " is listed twice");
  }
  // begin_create records the repository before code in has placed it: each path is checked when
  // set.
  if (!r.code.repository.empty() && !is_clean_absolute_path(r.code.repository))
    return bad("code.repository is not an absolute path without control characters");
  if (!r.code.space_path.empty() &&
      (!is_clean_absolute_path(r.code.space_path) || !r.code.space_path.starts_with("/spaces/")))
    return bad("code.space_path is not a folder under /spaces/");
  if (!r.code.project_path.empty() && (!is_clean_absolute_path(r.code.project_path) ||
                                       !r.code.project_path.starts_with(r.code.space_path)))
    return bad("code.project_path is not inside code.space_path");
  if (!r.code.base.empty() && !is_object_id(r.code.base))
    return bad("code.base is not an object id");
  static const std::set<std::string> kHistory = {"pending", "sent", "already_complete",
                                                 "host_shallow", "failed"};
  if (kHistory.count(r.code.history) == 0)
    return bad("code.history is not pending, sent, already_complete, host_shallow or failed");
  if (!r.out.result.empty() || !r.out.start.empty() || !r.out.space_head.empty()) {
    if (!is_object_id(r.out.result) || !is_object_id(r.out.start) ||
        !is_object_id(r.out.space_head))
      return bad("out.result, out.start and out.space_head are not object ids");
  }
  if (!r.creation.state.empty()) {
    if (!is_word(r.creation.step)) return bad("creation.step is not a step word");
    if (!r.creation.started.empty() && !is_utc_time_text(r.creation.started))
      return bad("creation.started is not YYYY-MM-DDTHH:MM:SSZ");
    if (!r.creation.failure_code.empty() && !is_word(r.creation.failure_code))
      return bad("creation.failure_code is not an error code word");
    if (r.creation.failure_message.size() > kMaxRecordMessageBytes ||
        !valid_utf8(r.creation.failure_message))
      return bad("creation.failure_message is not UTF-8 of at most " +
                 std::to_string(kMaxRecordMessageBytes) + " bytes");
  }
  return {};
}

}  // namespace controller
