#include "controller/manager.h"
#include "controller/registry.h"

#include <string.h>

#include <algorithm>
#include <optional>
#include <set>

#include "controller/control_answers.h"
#include "controller/gatekeeper_channel.h"
#include "controller/ids.h"
#include "controller/space_token.h"
#include "controller/spec.h"
#include "policy/control_messages.h"

namespace controller {

using nlohmann::json;

namespace {

SpaceView view_of(const SpaceSummary& s, SpaceState state) {
  SpaceView v;
  v.summary = s;
  v.state = state;
  return v;
}

// Why a creation the record knows of failed: its recorded failure, or its process ended.
CreationFailure creation_failure(const CreationRecord& c) {
  if (c.state == "failed") return {c.failure_code, c.failure_message};
  return {"space_creation_interrupted", "the process creating it ended; spacectl sweep removes it"};
}

Result<SpaceSummary> find(Place& place, const std::string& id) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  Result<std::vector<SpaceSummary>> all = place.list();
  if (!all) return all.error();
  for (SpaceSummary& s : *all) {
    if (s.id == id) return std::move(s);
  }
  return fail(Code::kSpaceNotFound, "space " + id + ": no space of this owner has that id");
}

// GET /policy, read strictly: `what` names the command and the space.
Result<GatekeeperPolicy> read_policy(Place& place, const std::string& id, const std::string& what) {
  Result<std::string> text = gatekeeper_control_text(place, id, "GET", "/policy");
  if (!text) return text.error();
  return parse_policy_answer(*text, what);
}

// Grant ids the gatekeeper holds now (GET /policy): its memory is the truth, not the record.
Result<std::vector<std::string>> held_grants(Place& place, const std::string& id) {
  Result<GatekeeperPolicy> policy = read_policy(place, id, "space list " + id);
  if (!policy) return policy.error();
  return std::move(policy->grants);
}

std::vector<std::string> needs_access(const SpaceRecord& record, const std::vector<std::string>& held) {
  std::vector<std::string> out;
  for (const GrantRecord& g : record.grants) {
    if (std::find(held.begin(), held.end(), g.id) == held.end()) out.push_back(g.id);
  }
  return out;
}

}  // namespace

SpaceState space_state(const SpaceSummary& s, bool needs) {
  if (!s.missing.empty()) return SpaceState::kUnreachable;
  if (s.space_state == "running" && s.gatekeeper_state == "running") {
    return needs ? SpaceState::kNeedsAccess : SpaceState::kRunning;
  }
  // Exit status 75 (EX_TEMPFAIL): the space stopped itself when idle, or idle stop stopped it
  // (controller/serve/idle.h); either way nothing is wrong with it.
  if (s.space_state == "exited" && s.space_exit_code == kIdleExitCode &&
      s.gatekeeper_state != "running") {
    return SpaceState::kStoppedIdle;
  }
  if (s.space_state != "running" && s.gatekeeper_state != "running") return SpaceState::kStopped;
  return SpaceState::kUnreachable;  // one half runs without the other
}

Result<PlaceChecked> Manager::check() {
  Result<CheckReport> r = place.check();
  if (!r) return r.error();
  PlaceChecked out;
  out.usable = r->seccomp && r->isolation_proved && r->positive_control && r->unsupported.empty();
  out.place = r->place;
  out.engine = r->engine_version;
  out.os_arch = r->os_arch;
  out.seccomp = r->seccomp;
  out.rootless = r->rootless;
  out.host_isolation = r->isolation_proved;
  out.positive_control = r->positive_control;
  out.findings = r->findings;
  return out;
}

Result<PlaceList> list_places(const Registry& registry, const PlaceOptions& options) {
  PlaceList out;
  for (const std::string& name : registry.names()) {
    PlaceEntry entry;
    entry.place = name;
    entry.proved = registry.proved(name);
    Result<std::unique_ptr<Place>> place = registry.make(name, options);
    if (!place) {
      entry.state = "not_configured";
      entry.detail = place.error().message;
      out.places.push_back(std::move(entry));
      continue;
    }
    Result<CheckReport> r = (*place)->check();
    if (!r) {
      entry.state = r.error().code == Code::kPlaceUnreachable ? "unreachable" : "unusable";
      entry.detail = r.error().message;
    } else {
      const bool restricts = r->isolation_proved && r->positive_control;
      entry.state = r->seccomp && restricts && r->unsupported.empty() ? "usable" : "unusable";
      entry.restricts_network = restricts;
      entry.engine = r->engine_version;
      entry.rootless = r->rootless;
      entry.detail = !r->unsupported.empty() ? r->unsupported
                     : r->findings.empty()   ? std::string()
                                             : r->findings.back();
    }
    out.places.push_back(std::move(entry));
  }
  return out;
}

Result<SpaceLock> Manager::begin_create(CreateRequest& request, const std::string& repository) {
  if (request.id.empty()) request.id = random_hex(6);
  Result<SpaceLock> lock = SpaceLock::acquire(state, request.id, "space create");
  if (!lock) return lock.error();
  SpaceRecord record;
  record.creation.state = "preparing";
  record.creation.step = "preparing";
  record.creation.started = now_utc_iso();
  record.code.repository = repository;
  if (Result<void> w = write_record(state, request.id, record); !w) return w.error();
  // The networks' subnets, from the place's pool, recorded before anything exists at the place
  // (controller/subnets.h): the place's create runs the allocation while its own first engine
  // queries do (CreateRequest::allocate_subnets). The engine's networks are read outside the pool
  // lock: what another spacectl allocates meanwhile is in its record, which is read under it.
  // Only networks not read before are inspected (controller/engine_networks.h).
  if (const std::string pool = place.subnet_pool(); !pool.empty()) {
    request.allocate_subnets = [&place = place, state = state, id = request.id,
                                pool]() -> Result<SpaceSubnets> {
      Result<std::vector<std::string>> used = engine_subnets(place, state);
      if (!used) return used.error();
      return allocate_space_subnets(state, id, pool, *used);
    };
  }
  return std::move(*lock);
}

Result<SpaceCreated> Manager::create_locked(const CreateRequest& request) {
  CreateRequest r = request;
  const std::string id = request.id;
  r.progress = [this, id, outer = request.progress](std::string_view step) {
    // The step lands in the record first, so a list or a sweep sees where a creation got to.
    if (Result<SpaceRecord> record = read_record(state, id); record && record->creation.state == "preparing") {
      record->creation.step = std::string(step);
      (void)write_record(state, id, *record);
    }
    if (outer) outer(step);
  };
  // The inner server's password (space_token.h): made here, written over exec stdin, never kept
  // on the host. An image without the file tools cannot take it; the space still works, its
  // dispatcher routes then answer space_token_unreadable. Written as soon as the space runs when
  // the place says so (while the gatekeeper gets ready), else after create.
  std::string token = make_space_token();
  std::optional<Result<void>> written;
  if (!id.empty()) r.space_running = [&] { written = write_space_token(place, id, token); };
  Result<SpaceSummary> s = place.create(r);
  if (!s) {
    std::fill(token.begin(), token.end(), '\0');
    return s.error();
  }
  SpaceCreated out;
  out.space = view_of(*s, SpaceState::kRunning);
  if (!written) written = write_space_token(place, s->id, token);
  std::fill(token.begin(), token.end(), '\0');
  const Result<void>& t = *written;
  out.token_written = t.ok();
  if (!t) out.token_failure = t.error().message;
  return out;
}

void Manager::finish_create(const std::string& id, const Failure* failure, const std::string& step) {
  Result<SpaceRecord> record = read_record(state, id);
  if (!record) return;
  if (failure == nullptr) {
    record->creation = CreationRecord{};
    (void)write_record(state, id, *record);
    return;
  }
  if (!keep_failed_creations) {
    (void)remove_record(state, id);
    return;
  }
  record->creation.state = "failed";
  record->subnets =
      SubnetRecord{};  // the rollback removed the networks: their subnets are free again
  record->creation.step = step.empty() ? record->creation.step : step;
  record->creation.failure_code = std::string(code_word(failure->code));
  record->creation.failure_message = failure->message;
  (void)write_record(state, id, *record);
}

Result<SpaceCreated> Manager::create(const CreateRequest& request) {
  CreateRequest r = request;
  Result<SpaceLock> lock = begin_create(r);
  if (!lock) return lock.error();
  Result<SpaceCreated> created = create_locked(r);
  finish_create(r.id, created ? nullptr : &created.error(), "");
  return created;
}

Result<SpaceList> Manager::list() {
  Result<std::vector<SpaceSummary>> all = place.list();
  if (!all) return all.error();
  SpaceList out;
  std::set<std::string> seen;
  for (const SpaceSummary& s : *all) {
    seen.insert(s.id);
    SpaceView entry;
    Result<SpaceRecord> record = read_record(state, s.id);
    const bool busy = SpaceLock::is_held(state, s.id);
    if (record && !record->creation.state.empty()) {
      // A creation under way (or failed) overrides what the place shows of its half-made parts.
      const bool failed = record->creation.state == "failed" || !busy;
      entry = view_of(s, failed ? SpaceState::kFailed : SpaceState::kPreparing);
      entry.step = record->creation.step;
      if (failed) entry.failure = creation_failure(record->creation);
    } else if (!busy && s.space_state == "running" && s.gatekeeper_state == "running" && record && !record->grants.empty()) {
      Result<std::vector<std::string>> held = held_grants(place, s.id);
      std::vector<std::string> lacking =
          held ? needs_access(*record, *held) : std::vector<std::string>{};
      entry = view_of(s, held ? space_state(s, !lacking.empty()) : SpaceState::kUnreachable);
      entry.needs_access = std::move(lacking);
    } else {
      entry = view_of(s, space_state(s, false));
      if (record && record->stopped_idle && entry.state == SpaceState::kStopped) {
        entry.state = SpaceState::kStoppedIdle;
      }
    }
    entry.busy = busy;
    if (record) entry.grants = record->grants;
    out.spaces.push_back(std::move(entry));
  }
  // Creations the place shows nothing of yet (or any more): preparing, or failed until dismissed.
  if (Result<std::vector<std::string>> ids = record_ids(state); ids) {
    for (const std::string& id : *ids) {
      if (seen.count(id) != 0) continue;
      Result<SpaceRecord> record = read_record(state, id);
      if (!record || record->creation.state.empty()) continue;
      const bool busy = SpaceLock::is_held(state, id);
      const bool failed = record->creation.state == "failed" || !busy;
      SpaceSummary nothing;
      nothing.id = id;
      nothing.created = record->creation.started;
      nothing.space_state = "missing";
      nothing.gatekeeper_state = "missing";
      SpaceView entry = view_of(nothing, failed ? SpaceState::kFailed : SpaceState::kPreparing);
      entry.step = record->creation.step;
      entry.busy = busy;
      if (failed) entry.failure = creation_failure(record->creation);
      out.spaces.push_back(std::move(entry));
    }
  }
  return out;
}

Result<SpaceShown> Manager::show(const std::string& id) {
  Result<SpaceSummary> s = find(place, id);
  if (!s) return s.error();
  Result<SpaceRecord> record = read_record(state, id);
  SpaceShown out;
  out.space = view_of(*s, space_state(*s, false));
  if (record) {
    out.network = SpaceShown::Network{record->mode, record->domains};
    out.grants = record->grants;
  }
  return out;
}

Result<SpaceVerified> Manager::verify(const std::string& id, SpaceVerified& found) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "space verify");
  if (!lock) return lock.error();
  Result<std::vector<Difference>> d = place.verify(id);
  if (!d) return d.error();
  found = SpaceVerified{id, *d};
  if (!d->empty()) {
    return fail(Code::kVerifyFailed, "space verify " + id + ": " + std::to_string(d->size()) + " difference(s) from the hardening spec");
  }
  return found;
}

Result<SpaceStopped> Manager::stop(const std::string& id) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "space stop");
  if (!lock) return lock.error();
  return stop_locked(id, false);
}

Result<SpaceStopped> Manager::stop_locked(const std::string& id, bool idle) {
  if (Result<void> r = place.stop(id); !r) return r.error();
  // Idle stop says so in the record (docker stop gives the space 143, not 75); a stop by hand
  // forgets an earlier idle stop.
  if (Result<SpaceRecord> record = read_record(state, id); record && record->stopped_idle != idle) {
    record->stopped_idle = idle;
    if (Result<void> w = write_record(state, id, *record); !w) return w.error();
  }
  return SpaceStopped{id, idle ? SpaceState::kStoppedIdle : SpaceState::kStopped};
}

Result<SpaceStarted> Manager::start(const std::string& id) {
  // Held from the read of the record until the gatekeeper has heard it again.
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "space start");
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(state, id);
  if (Result<void> r = place.start(id); !r) return r.error();
  SpaceStarted out{id, SpaceState::kRunning, false, std::nullopt};
  if (record && record->stopped_idle) {
    record->stopped_idle = false;
    (void)write_record(state, id, *record);
  }
  if (!record) {
    // Unreadable record: the network stays as the gatekeeper starts (allowlist, empty).
    return out;
  }
  policy::NetworkPolicy network;
  network.mode = record->mode == "open" ? policy::Mode::kOpen : policy::Mode::kAllowlist;
  for (const std::string& d : record->domains) network.domains.insert(d);
  Result<json> said = gatekeeper_control(place, id, "POST", "/network", policy::network_request_json(network));
  out.network_restored = static_cast<bool>(said);
  bool changed = false;
  out.grants = restore_grants_locked(id, *record, changed);
  if (changed) {
    (void)write_record(state, id, *record);  // expiries only; the grants were said either way
  }
  if (!out.grants->needs_access.empty()) out.state = SpaceState::kNeedsAccess;
  return out;
}

Result<SpaceRemoved> Manager::remove(const std::string& id) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "space remove");
  if (!lock) return lock.error();
  return remove_locked(id);
}

Result<SpaceRemoved> Manager::remove_locked(const std::string& id) {
  if (Result<void> r = place.remove(id); !r) {
    // A failed creation left nothing at the place: dismissing it removes its record.
    Result<SpaceRecord> record = read_record(state, id);
    if (r.error().code != Code::kSpaceNotFound || !record || record->creation.state.empty()) return r.error();
  }
  if (Result<void> r = remove_record(state, id); !r) return r.error();
  return SpaceRemoved{id, std::nullopt, std::nullopt};
}

Result<NetworkSet> Manager::network_set(const std::string& id, const std::string& mode,
                                        const std::vector<std::string>& domains) {
  const std::string body = json{{"mode", mode}, {"domains", domains}}.dump();
  // Refused here with the gatekeeper's own words before anything is sent
  // (policy/control_messages.h).
  policy::Result<policy::NetworkPolicy> parsed = policy::parse_network_request(body);
  if (!parsed) return fail(Code::kInvalidArgument, "network set " + id + ": " + parsed.error().message);
  // One lock over read, gatekeeper call and write: a concurrent change waits instead of being
  // overwritten by a record that no longer says what the gatekeeper holds.
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "network set");
  if (!lock) return lock.error();
  Result<SpaceRecord> record = read_record(state, id);
  if (!record) return record.error();
  // The gatekeeper first, then the record: a refused change is not remembered.
  Result<json> r = gatekeeper_control(place, id, "POST", "/network", policy::network_request_json(*parsed));
  if (!r) return r.error();
  record->mode = parsed->mode == policy::Mode::kOpen ? "open" : "allowlist";
  record->domains.assign(parsed->domains.begin(), parsed->domains.end());
  if (Result<void> w = write_record(state, id, *record); !w) return w.error();
  return NetworkSet{id, record->mode, record->domains};
}

Result<WindowKeyDelivered> Manager::window_key(const std::string& id) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "window-key");
  if (!lock) return lock.error();
  Result<SpaceSummary> s = find(place, id);
  if (!s) return s.error();
  if (s->window_url.size() <= kWindowBase.size()) {
    return fail(Code::kVerifyFailed, "window-key " + id + ": the space carries no window key");
  }
  if (Result<void> r = deliver_window_key(place, id, s->window_url.substr(kWindowBase.size())); !r) return r.error();
  return WindowKeyDelivered{id, s->window_url};
}

Result<GatekeeperJournal> Manager::gatekeeper_journal(const std::string& id) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "journal");
  if (!lock) return lock.error();
  Result<std::string> text = gatekeeper_control_text(place, id, "GET", "/journal");
  if (!text) return text.error();
  return parse_journal_answer(*text, "journal " + id);
}

Result<GatekeeperPolicy> Manager::gatekeeper_policy(const std::string& id) {
  Result<SpaceLock> lock = SpaceLock::acquire(state, id, "policy");
  if (!lock) return lock.error();
  Result<GatekeeperPolicy> answer = read_policy(place, id, "policy " + id);
  if (!answer) return answer;
  // Beside the gatekeeper's grant ids: where each recorded grant's secret comes from and when its
  // token expires (the record's word, never a value).
  if (Result<SpaceRecord> record = read_record(state, id); record) {
    answer->grant_sources = record->grants;
  }
  return answer;
}

}  // namespace controller
