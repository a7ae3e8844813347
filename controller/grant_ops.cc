// The space manager's grants: add, say again at start, refresh, and the keeper's in-place
// replacement (controller/grants/README.md). A secret lives in a grants::Token (wiped when it
// goes) and in the request text for the exec's stdin (wiped after the call); it never reaches a
// record, an argv, an answer or a log.
#include <string.h>

#include <algorithm>
#include <map>

#include "controller/gatekeeper_channel.h"
#include "controller/manager.h"
#include "policy/control_messages.h"

namespace controller {

using nlohmann::json;
using Clock = std::chrono::system_clock;

namespace {

// The POST /grants body for `g`, with the token's secret when it has one. Every JSON copy of the
// secret is wiped here; the caller wipes the text.
std::string grant_body(const GrantRecord& g, const grants::Token* token) {
  json body = {{"id", g.id}, {"upstream", g.upstream}};
  if (g.unsafe_private_upstream) body["unsafe_private_upstream"] = true;
  if (!g.header.empty() || token != nullptr) {
    body["header"] = g.header;
    body["secret"] = token != nullptr ? token->secret : std::string();
  }
  std::string text = body.dump();
  if (body.contains("secret")) {
    std::string& held = body["secret"].get_ref<std::string&>();
    explicit_bzero(held.data(), held.size());
  }
  return text;
}

void stamp(GrantRecord& g, const grants::Token* token) {
  g.expires_at =
      token != nullptr && token->expires ? grants::rfc3339(*token->expires) : std::string();
  g.obtained_at = token != nullptr && g.source.kind == grants::SourceKind::kHelper
                      ? grants::rfc3339(Clock::now())
                      : std::string();
}

GrantRecord* find_grant(SpaceRecord& record, const std::string& grant) {
  for (GrantRecord& g : record.grants) {
    if (g.id == grant) return &g;
  }
  return nullptr;
}

}  // namespace

Result<void> Manager::say_grant(const std::string& id, const GrantRecord& g,
                                const grants::Token* token) {
  std::string text = grant_body(g, token);
  // Refused here with the gatekeeper's own words before anything is sent.
  policy::Result<policy::Grant> parsed = policy::parse_grant_request(text);
  if (!parsed) {
    explicit_bzero(text.data(), text.size());
    return fail(Code::kInvalidArgument,
                "grant " + g.id + " of " + id + ": " + parsed.error().message);
  }
  Result<json> r = gatekeeper_control(place, id, "POST", "/grants", text);
  explicit_bzero(text.data(), text.size());
  if (!r) return r.error();
  return {};
}

Result<GrantAdded> Manager::grant_add(const std::string& id, const std::string& grant,
                                      const std::string& upstream, const std::string& header,
                                      std::string secret, bool unsafe_private_upstream) {
  GrantRequest request;
  request.id = grant;
  request.upstream = upstream;
  request.header = header;
  request.unsafe_private_upstream = unsafe_private_upstream;
  grants::Token token;
  token.secret.swap(secret);  // no copy is left behind in `secret`
  if (!token.secret.empty() || !header.empty()) request.source.kind = grants::SourceKind::kStdin;
  return grant_add(id, request, std::move(token));
}

Result<GrantAdded> Manager::grant_add(const std::string& id, const GrantRequest& request,
                                      grants::Token typed) {
  const std::string what = "grant add " + request.id + " to " + id;
  GrantRecord g;
  g.id = request.id;
  g.upstream = request.upstream;
  g.header = request.header;
  g.provider = request.provider;
  g.source = request.source;
  g.unsafe_private_upstream = request.unsafe_private_upstream;
  g.has_secret = g.source.kind != grants::SourceKind::kNone;
  if (g.has_secret && g.header.empty()) {
    return fail(Code::kUsage, what + ": a secret needs --header (the header that carries it)");
  }
  // The secret is read before the space's lock is taken: a helper may take its whole deadline.
  grants::Token token;
  switch (g.source.kind) {
    case grants::SourceKind::kNone:
      if (!typed.secret.empty()) {
        return fail(Code::kUsage, what + ": a secret needs --header (the header that carries it)");
      }
      break;
    case grants::SourceKind::kStdin:
      token = std::move(typed);
      break;
    case grants::SourceKind::kEnv:
    case grants::SourceKind::kHelper: {
      Result<grants::Token> fetched = grants::fetch(g.source);
      if (!fetched) return fail(fetched.error().code, what + ": " + fetched.error().message);
      token = std::move(*fetched);
      break;
    }
  }
  const grants::Token* said = g.has_secret ? &token : nullptr;
  {
    std::string text = grant_body(g, said);
    policy::Result<policy::Grant> parsed = policy::parse_grant_request(text);
    explicit_bzero(text.data(), text.size());
    if (!parsed) return fail(Code::kInvalidArgument, what + ": " + parsed.error().message);
    g.id = parsed->id;
    g.upstream = parsed->upstream.to_string();
    g.header = parsed->header.value_or("");
  }
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "grant add");
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(state, id);
  if (!record) return record.error();
  if (Result<void> r = say_grant(id, g, said); !r) return r.error();
  stamp(g, said);
  auto& list = record->grants;
  list.erase(
      std::remove_if(list.begin(), list.end(), [&](const GrantRecord& x) { return x.id == g.id; }),
      list.end());
  list.push_back(g);
  if (Result<void> w = write_record(state, id, *record); !w) return w.error();
  Result<std::vector<SpaceSummary>> all = place.list();
  GrantAdded out{id, g, {}};
  if (all) {
    for (const SpaceSummary& s : *all) {
      if (s.id == id && !s.window_url.empty()) out.window = s.window_url + "/model/" + g.id;
    }
  }
  return out;
}

GrantsRestored Manager::restore_grants_locked(const std::string& id, SpaceRecord& record,
                                              bool& changed) {
  GrantsRestored out;
  // One run per helper argv in this start, shared by every grant that names it.
  std::map<std::vector<std::string>, Result<grants::Token>> helpers;
  for (GrantRecord& g : record.grants) {
    if (!grants::rereadable(g.source.kind)) {
      out.needs_access.push_back(g.id);  // a typed secret is never kept: only the user can say it
      continue;
    }
    Result<void> said = {};
    grants::Token token;
    if (g.source.kind == grants::SourceKind::kNone) {
      said = say_grant(id, g, nullptr);
    } else {
      Result<grants::Token> fetched = fail(Code::kInternal, "unread");
      if (g.source.kind == grants::SourceKind::kHelper) {
        auto it = helpers.find(g.source.helper);
        if (it == helpers.end()) {
          it = helpers.emplace(g.source.helper, grants::fetch(g.source)).first;
        }
        if (it->second) {
          token.secret = it->second->secret;
          token.expires = it->second->expires;
          fetched = std::move(token);
        } else {
          fetched = it->second.error();
        }
      } else {
        fetched = grants::fetch(g.source);
      }
      said = fetched ? say_grant(id, g, &*fetched) : Result<void>(fetched.error());
      if (said) {
        stamp(g, &*fetched);
        changed = true;
      }
    }
    if (said) {
      out.restored.push_back(g.id);
    } else {
      out.needs_access.push_back(g.id);
      out.failures.push_back(GrantFailure{g.id, said.error()});
    }
  }
  return out;
}

Result<GrantsRefreshed> Manager::grant_refresh(const std::string& id, const std::string& grant) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "grant refresh");
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(state, id);
  if (!record) return record.error();
  if (!grant.empty()) {
    GrantRecord* g = find_grant(*record, grant);
    if (g == nullptr) {
      return fail(Code::kInvalidArgument,
                  "grant refresh " + grant + " of " + id + ": the space has no such grant");
    }
    if (g->source.kind != grants::SourceKind::kEnv &&
        g->source.kind != grants::SourceKind::kHelper) {
      return fail(Code::kInvalidArgument, "grant refresh " + grant + " of " + id +
                                              ": its source is " +
                                              std::string(grants::source_word(g->source.kind)) +
                                              "; only env and helper sources can be read again");
    }
  }
  GrantsRefreshed out;
  out.id = id;
  std::optional<Failure> first;
  std::map<std::vector<std::string>, Result<grants::Token>> helpers;
  for (GrantRecord& g : record->grants) {
    if (!grant.empty() && g.id != grant) continue;
    if (g.source.kind != grants::SourceKind::kEnv && g.source.kind != grants::SourceKind::kHelper) {
      continue;
    }
    Result<grants::Token> fetched = fail(Code::kInternal, "unread");
    if (g.source.kind == grants::SourceKind::kHelper) {
      auto it = helpers.find(g.source.helper);
      if (it == helpers.end()) it = helpers.emplace(g.source.helper, grants::fetch(g.source)).first;
      if (it->second) {
        grants::Token copy;
        copy.secret = it->second->secret;
        copy.expires = it->second->expires;
        fetched = std::move(copy);
      } else {
        fetched = it->second.error();
      }
    } else {
      fetched = grants::fetch(g.source);
    }
    Result<void> said = fetched ? say_grant(id, g, &*fetched) : Result<void>(fetched.error());
    if (!said) {
      // The gatekeeper keeps the token it holds until that one expires.
      out.failed.push_back(GrantFailure{g.id, said.error()});
      if (!first) {
        first = fail(said.error().code,
                     "grant refresh " + g.id + " of " + id + ": " + said.error().message);
      }
      continue;
    }
    stamp(g, &*fetched);
    out.refreshed.push_back(g);
  }
  if (Result<void> w = write_record(state, id, *record); !w) return w.error();
  if (first && out.refreshed.empty()) return *first;
  return out;
}

Result<void> Manager::replace_grant_locked(const std::string& id, const std::string& grant,
                                           const grants::Token& token) {
  Result<SpaceRecord> record = read_record(state, id);
  if (!record) return record.error();
  GrantRecord* g = find_grant(*record, grant);
  if (g == nullptr) {
    return fail(Code::kInvalidArgument,
                "grant " + grant + " of " + id + ": the space has no such grant any more");
  }
  if (Result<void> r = say_grant(id, *g, &token); !r) return r.error();
  stamp(*g, &token);
  return write_record(state, id, *record);
}

Result<void> Manager::withdraw_grant_locked(const std::string& id, const std::string& grant) {
  Result<json> r = gatekeeper_control(place, id, "DELETE", "/grants/" + grant);
  if (!r && r.error().code != Code::kGatekeeperRefused) {
    return r.error();  // refused: it holds no such grant
  }
  return {};
}

}  // namespace controller
