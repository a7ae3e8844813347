#include "controller/render.h"

#include <cstddef>

#include "controller/manager.h"
#include "controller/text.h"

namespace controller {

using nlohmann::json;

std::string_view state_word(SpaceState state) {
  switch (state) {
    case SpaceState::kRunning:
      return "running";
    case SpaceState::kStopped:
      return "stopped";
    case SpaceState::kStoppedIdle:
      return "stopped-idle";
    case SpaceState::kUnreachable:
      return "unreachable";
    case SpaceState::kNeedsAccess:
      return "needs-access";
    case SpaceState::kPreparing:
      return "preparing";
    case SpaceState::kFailed:
      return "failed";
  }
  return "unreachable";
}

namespace {

// A grant as show describes it: where it goes, which header carries it, where its secret comes
// from (the variable's name or the helper's argv, never a value).
json shown_grant_json(const GrantRecord& g) {
  json one = {{"id", g.id},
              {"upstream", g.upstream},
              {"header", g.header},
              {"secret", g.has_secret},
              {"source", std::string(grants::source_word(g.source.kind))},
              {"expires_at", g.expires_at.empty() ? json() : json(g.expires_at)}};
  if (!g.provider.empty()) one["provider"] = g.provider;
  if (g.source.kind == grants::SourceKind::kEnv) one["env"] = g.source.env;
  if (g.source.kind == grants::SourceKind::kHelper) one["helper"] = g.source.helper;
  return one;
}

// Text output: every value is shown through terminal_safe (much of it came from a space).
std::string show(const json& v) {
  return terminal_safe(v.is_string() ? v.get<std::string>() : json_text(v));
}

json nullable(const std::string& text) { return text.empty() ? json() : json(text); }

json failure_json(const std::string& grant, const Failure& f) {
  return {{"grant", grant}, {"code", std::string(code_word(f.code))}, {"message", f.message}};
}

}  // namespace

std::string member_lines(const json& doc) {
  std::string out;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    out += terminal_safe(it.key()) + ": " + show(*it) + "\n";
  }
  return out;
}

json grant_summary_json(const GrantRecord& g) {
  json out = {{"id", g.id}, {"source", std::string(grants::source_word(g.source.kind))}};
  if (!g.provider.empty()) out["provider"] = g.provider;
  out["expires_at"] = nullable(g.expires_at);
  return out;
}

json to_json(const SpaceView& view) {
  const SpaceSummary& s = view.summary;
  json out = {{"id", s.id},
              {"name", s.name},
              {"created", s.created},
              {"state", std::string(state_word(view.state))},
              {"space", s.space_state},
              {"gatekeeper", s.gatekeeper_state},
              {"missing", s.missing},
              {"window", s.window_url}};
  if (s.space_state == "exited") out["exit_code"] = s.space_exit_code;
  if (!s.refused_labels.empty()) out["refused_labels"] = s.refused_labels;
  if (view.step) out["step"] = *view.step;
  if (view.failure) {
    out["failure"] = {{"code", view.failure->code}, {"message", view.failure->message}};
  }
  if (view.needs_access) out["needs_access"] = *view.needs_access;
  if (view.busy) out["busy"] = *view.busy;
  if (view.grants) {
    json grants = json::array();
    for (const GrantRecord& g : *view.grants) grants.push_back(grant_summary_json(g));
    out["grants"] = grants;
  }
  return out;
}

json to_json(const SpaceList& list) {
  json spaces = json::array();
  for (const SpaceView& v : list.spaces) spaces.push_back(to_json(v));
  return json{{"spaces", spaces}};
}

json to_json(const SpaceShown& shown) {
  json out = to_json(shown.space);
  if (!shown.network) {
    out["network"] = nullptr;  // unknown, never "open" (docs/reference-behaviour.md#host-records)
    return out;
  }
  json grants = json::array();
  for (const GrantRecord& g : shown.grants) grants.push_back(shown_grant_json(g));
  out["network"] = {{"mode", shown.network->mode}, {"domains", shown.network->domains}};
  out["grants"] = grants;
  return out;
}

json to_json(const SpaceCreated& created) {
  json out = to_json(created.space);
  out["token_written"] = created.token_written;
  if (created.token_failure) out["token_failure"] = *created.token_failure;
  if (created.code) out["code"] = to_json(*created.code);
  return out;
}

json to_json(const SpaceRemoved& removed) {
  json out = {{"id", removed.id}, {"removed", true}};
  if (removed.refs_removed) out["refs_removed"] = *removed.refs_removed;
  if (removed.refs_not_removed) out["refs_not_removed"] = *removed.refs_not_removed;
  return out;
}

json to_json(const SpaceStopped& stopped) {
  return json{{"id", stopped.id}, {"state", std::string(state_word(stopped.state))}};
}

json to_json(const SpaceStarted& started) {
  json out = {{"id", started.id},
              {"state", std::string(state_word(started.state))},
              {"network_restored", started.network_restored}};
  if (started.grants) {
    json failures = json::array();
    for (const GrantFailure& f : started.grants->failures) {
      failures.push_back(failure_json(f.grant, f.failure));
    }
    out["grants_restored"] = started.grants->restored;
    out["needs_access"] = started.grants->needs_access;
    out["grant_failures"] = failures;
  }
  return out;
}

json to_json(const PlaceChecked& c) {
  json out = {{"usable", c.usable},
              {"place", c.place},
              {"engine", c.engine},
              {"os_arch", c.os_arch},
              {"seccomp", c.seccomp},
              {"rootless", c.rootless},
              {"host_isolation", c.host_isolation},
              {"positive_control", c.positive_control},
              {"findings", c.findings}};
  if (c.warnings) out["warnings"] = *c.warnings;
  return out;
}

json to_json(const PlaceList& list) {
  json places = json::array();
  for (const PlaceEntry& p : list.places) {
    json entry = {{"place", p.place},
                  {"state", p.state},
                  {"restricts_network", p.restricts_network},
                  {"proved", p.proved},
                  {"detail", p.detail}};
    if (p.engine) entry["engine"] = *p.engine;
    if (p.rootless) entry["rootless"] = *p.rootless;
    places.push_back(entry);
  }
  return json{{"places", places}};
}

json to_json(const SpaceVerified& v) {
  json differences = json::array();
  for (const Difference& d : v.differences) {
    differences.push_back({{"check", d.check}, {"message", d.message}});
  }
  return json{{"id", v.id}, {"differences", differences}};
}

json to_json(const NetworkSet& n) {
  return json{{"id", n.id}, {"mode", n.mode}, {"domains", n.domains}};
}

json to_json(const WindowKeyDelivered& k) {
  return json{{"id", k.id}, {"window", k.window}, {"delivered", true}};
}

std::string to_text(const SpaceList& list) {
  if (list.spaces.empty()) return "no spaces\n";
  std::string out;
  for (const SpaceView& v : list.spaces) {
    const SpaceSummary& s = v.summary;
    out += terminal_safe(s.id) + "  " + terminal_safe(state_word(v.state)) + "  " +
           terminal_safe(s.name);
    if (!s.missing.empty()) out += "  (missing: " + show(json(s.missing)) + ")";
    if (!s.refused_labels.empty()) {
      out +=
          "  (labels not shown, not as spacectl writes them: " + show(json(s.refused_labels)) + ")";
    }
    if (v.needs_access && !v.needs_access->empty()) {
      out += "  (needs access: " + show(json(*v.needs_access)) + ")";
    }
    if (v.grants && !v.grants->empty()) {
      out += "  grants:";
      for (const GrantRecord& g : *v.grants) {
        out += " " + terminal_safe(g.id) + " (" + terminal_safe(grants::source_word(g.source.kind));
        if (!g.expires_at.empty()) out += ", expires " + terminal_safe(g.expires_at);
        out += ")";
      }
    }
    out += "\n";
  }
  return out;
}

std::string to_text(const SpaceShown& shown) { return member_lines(to_json(shown)); }
std::string to_text(const SpaceCreated& created) { return member_lines(to_json(created)); }
std::string to_text(const SpaceRemoved& removed) { return member_lines(to_json(removed)); }
std::string to_text(const SpaceStopped& stopped) { return member_lines(to_json(stopped)); }
std::string to_text(const SpaceStarted& started) { return member_lines(to_json(started)); }
std::string to_text(const NetworkSet& set) { return member_lines(to_json(set)); }
std::string to_text(const WindowKeyDelivered& delivered) {
  return member_lines(to_json(delivered));
}

std::string to_text(const PlaceChecked& c) {
  std::string out;
  for (const std::string& f : c.findings) out += "- " + terminal_safe(f) + "\n";
  return out + (c.usable ? "This place can run isolated spaces.\n"
                         : "This place cannot run isolated spaces (see above).\n");
}

std::string to_text(const PlaceList& list) {
  std::string out;
  for (const PlaceEntry& p : list.places) {
    out += terminal_safe(p.place) + "  " + terminal_safe(p.state) + "  " +
           (p.restricts_network ? "can restrict the network" : "cannot restrict the network") +
           "  " + terminal_safe(p.detail) + "\n    " + terminal_safe(p.proved) + "\n";
  }
  return out;
}

std::string to_text(const SpaceVerified& v) {
  std::string out;
  for (const Difference& d : v.differences) {
    out += terminal_safe(d.check) + ": " + terminal_safe(d.message) + "\n";
  }
  return out.empty() ? "verify: no differences from the hardening spec\n" : out;
}

json to_json(const CodeBrought& b) {
  json not_travelling = json::array();
  for (const PathLeftOut& n : b.not_travelling) {
    not_travelling.push_back({{"path", n.path}, {"reason", n.reason}});
  }
  return json{{"id", b.id},
              {"repository", b.repository},
              {"space_path", b.space_path},
              {"project_path", b.project_path},
              {"base", b.base},
              {"staged", b.staged},
              {"start", b.start},
              {"branch", nullable(b.branch)},
              {"object_format", b.object_format},
              {"identity_copied", {{"name", b.name_copied}, {"email", b.email_copied}}},
              {"not_travelling", not_travelling},
              {"space_git", b.space_git},
              {"history", b.history}};
}

json to_json(const GrantAdded& a) {
  const GrantRecord& g = a.grant;
  json out = {{"id", a.id},
              {"grant", g.id},
              {"upstream", g.upstream},
              {"header", g.header},
              {"source", std::string(grants::source_word(g.source.kind))},
              {"expires_at", nullable(g.expires_at)},
              {"window", nullable(a.window)}};
  if (!g.provider.empty()) out["provider"] = g.provider;
  return out;
}

json to_json(const GrantsRefreshed& r) {
  json refreshed = json::array(), failed = json::array();
  for (const GrantRecord& g : r.refreshed) refreshed.push_back(grant_summary_json(g));
  for (const GrantFailure& f : r.failed) failed.push_back(failure_json(f.grant, f.failure));
  return json{{"id", r.id}, {"refreshed", refreshed}, {"failed", failed}};
}

json to_json(const GrantProviders& p) {
  json known = json::array(), refused = json::array();
  for (const grants::Preset& preset : p.presets) {
    known.push_back({{"provider", std::string(preset.provider)},
                     {"upstream", std::string(preset.upstream)},
                     {"header", std::string(preset.header)},
                     {"source", std::string(preset.source)}});
  }
  for (const grants::Refused& r : p.refused) {
    refused.push_back({{"provider", std::string(r.provider)}, {"reason", std::string(r.reason)}});
  }
  return json{{"providers", known}, {"refused", refused}};
}

json to_json(const GatekeeperJournal& j) {
  json records = json::array();
  for (const JournalEntry& e : j.records) {
    json one = {{"at", e.at},
                {"listener", e.listener},
                {"host", e.host},
                {"port", e.port},
                {"decision", e.decision}};
    if (e.count) one["count"] = *e.count;
    if (e.last) one["last"] = *e.last;
    records.push_back(one);
  }
  return json{{"records", records}, {"dropped", j.dropped}, {"since", j.since}};
}

json to_json(const GatekeeperPolicy& p) {
  json out = {{"mode", p.mode}, {"domains", p.domains}, {"grants", p.grants}};
  if (p.grant_sources) {
    json sources = json::array();
    for (const GrantRecord& g : *p.grant_sources) sources.push_back(grant_summary_json(g));
    out["grant_sources"] = sources;
  }
  return out;
}

json to_json(const SweepDone& s) {
  const auto spaces = [](const std::vector<SweptSpace>& list) {
    json out = json::array();
    for (const SweptSpace& one : list) out.push_back({{"id", one.id}, {"reason", one.reason}});
    return out;
  };
  json freed = json::array(), failures = json::array();
  for (const FreedSubnets& f : s.subnets_freed) {
    freed.push_back({{"id", f.id}, {"subnets", f.subnets}});
  }
  for (const SweepFailure& f : s.failures) {
    failures.push_back({{"id", f.id},
                        {"code", std::string(code_word(f.failure.code))},
                        {"message", f.failure.message}});
  }
  return json{{"removed", spaces(s.removed)},
              {"left", spaces(s.left)},
              {"records_removed", s.records_removed},
              {"temp_dirs_removed", s.temp_dirs_removed},
              {"subnets_freed", freed},
              {"failures", failures}};
}

json to_json(const ImagesPushed& pushed) {
  json images = json::array();
  for (const PushedImage& p : pushed.images) {
    if (!p.skipped.empty()) {
      images.push_back({{"name", p.name}, {"skipped", p.skipped}});
    } else {
      images.push_back(
          {{"name", p.name}, {"id", p.id}, {"reference", p.reference}, {"record", p.record}});
    }
  }
  return json{{"images", images}};
}

json to_json(const VersionShown& v) {
  return json{{"version", v.version},
              {"revision", nullable(v.revision)},
              {"gatekeeper_image", v.gatekeeper_image},
              {"space_image", v.space_image}};
}

std::string to_text(const CodeBrought& brought) { return member_lines(to_json(brought)); }
std::string to_text(const GrantAdded& added) { return member_lines(to_json(added)); }
std::string to_text(const GrantsRefreshed& refreshed) { return member_lines(to_json(refreshed)); }
std::string to_text(const GrantProviders& providers) { return member_lines(to_json(providers)); }
std::string to_text(const GatekeeperJournal& journal) { return member_lines(to_json(journal)); }
std::string to_text(const GatekeeperPolicy& policy) { return member_lines(to_json(policy)); }
std::string to_text(const SweepDone& swept) { return member_lines(to_json(swept)); }
std::string to_text(const ImagesPushed& pushed) { return member_lines(to_json(pushed)); }

}  // namespace controller
