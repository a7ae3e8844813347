// The space manager: what each spacectl command does, over any place. It keeps no state of its own
// (labels are the only record of what exists); the host record holds network choice and grant ids.
// Every operation answers a struct of results.h (render.h turns it into text or JSON).
#pragma once

#include <string>
#include <vector>

#include "controller/place.h"
#include "controller/records.h"
#include "controller/results.h"

namespace controller {

// A grant as the user gave it (CLI flags or serve's body); the secret, when typed, comes
// separately.
struct GrantRequest {
  std::string id, upstream, header, provider;
  grants::SecretSource source;  // kNone: an opened domain
  bool unsafe_private_upstream = false;
};

struct Manager {
  Place& place;
  std::string state;  // state directory (records)
  // A failed creation stays in the record as `failed` (listed until the space is removed) instead
  // of vanishing: `spacectl serve` answers creations at once, so the failure has to be findable.
  bool keep_failed_creations = false;

  Result<PlaceChecked> check();
  // begin_create + create_locked + finish_create.
  Result<SpaceCreated> create(const CreateRequest& request);
  // Picks the id (when the request has none), takes the space's lock and writes a `preparing`
  // record (with the repository code in will come from, so sweep can remove its refs) before
  // anything exists at the place.
  Result<SpaceLock> begin_create(CreateRequest& request, const std::string& repository = {});
  // The place's create under the lock begin_create took; each step also lands in the record.
  Result<SpaceCreated> create_locked(const CreateRequest& request);
  // Done: the record loses its creation state. Failed: the record is removed, or kept as
  // `failed` with the failure (keep_failed_creations).
  void finish_create(const std::string& id, const Failure* failure, const std::string& step);
  Result<SpaceList> list();
  Result<SpaceShown> show(const std::string& id);
  // The differences from the spec; any makes it a kVerifyFailed failure, with them in `found`.
  Result<SpaceVerified> verify(const std::string& id, SpaceVerified& found);
  Result<SpaceStopped> stop(const std::string& id);
  Result<SpaceStarted> start(const std::string& id);
  Result<SpaceRemoved> remove(const std::string& id);
  Result<NetworkSet> network_set(const std::string& id, const std::string& mode,
                                 const std::vector<std::string>& domains);
  // secret empty and header empty: an opened domain. The secret goes only to the exec's stdin.
  // unsafe_private_upstream: the gatekeeper's grant field of that name (policy/control_messages.h).
  Result<GrantAdded> grant_add(const std::string& id, const std::string& grant,
                               const std::string& upstream, const std::string& header,
                               std::string secret, bool unsafe_private_upstream = false);
  // The grant from its source: a typed secret (kStdin) is `typed`; env and helper sources are
  // read here, before the space's lock is taken. The record keeps the source, never the value.
  Result<GrantAdded> grant_add(const std::string& id, const GrantRequest& request,
                               grants::Token typed);
  // One round of reading env and helper sources again and replacing the tokens in place; `grant`
  // empty: every such grant of the space. A failed source leaves the gatekeeper's token as it is.
  Result<GrantsRefreshed> grant_refresh(const std::string& id, const std::string& grant);
  // Under the caller's lock (the keeper): the gatekeeper gets `token` for `grant` in place of the
  // old one, and the record its expiry; or the grant is withdrawn (its token expired).
  Result<void> replace_grant_locked(const std::string& id, const std::string& grant,
                                    const grants::Token& token);
  Result<void> withdraw_grant_locked(const std::string& id, const std::string& grant);
  // POST /grants for one recorded grant (token null: no secret).
  Result<void> say_grant(const std::string& id, const GrantRecord& g, const grants::Token* token);
  // At start, under its lock: every grant whose source can be read again is said again; stdin
  // ones, and any whose source or gatekeeper refuses, are needs-access (with the failure).
  GrantsRestored restore_grants_locked(const std::string& id, SpaceRecord& record, bool& changed);
  Result<WindowKeyDelivered> window_key(const std::string& id);
  // GET /journal and GET /policy of the gatekeeper, read strictly (control_answers.h): an answer
  // that is not one is kGatekeeperRefused naming the command and the space, never passed on.
  Result<GatekeeperJournal> gatekeeper_journal(const std::string& id);
  Result<GatekeeperPolicy> gatekeeper_policy(const std::string& id);
  // stop() under a lock the caller holds; idle: idle stop did it (listed as stopped-idle).
  Result<SpaceStopped> stop_locked(const std::string& id, bool idle);
  // remove() for a space whose lock the caller already holds (sweep, a failed create --repo).
  Result<SpaceRemoved> remove_locked(const std::string& id);
};

// `spacectl place list`: every place of the registry, checked (probed) in turn: its state
// (usable, unusable, unreachable, not_configured), whether it can restrict the network (the host
// isolation probe held and its positive control answered), and one line on why.
Result<PlaceList> list_places(const class Registry& registry, const PlaceOptions& options);

// The exit status of a space that stopped because it was idle (EX_TEMPFAIL).
inline constexpr int kIdleExitCode = 75;

// State of a listed space from what the place shows: running, stopped, stopped-idle, unreachable
// or needs-access (docs/reference-behaviour.md#space-states).
SpaceState space_state(const SpaceSummary& summary, bool needs_access);

}  // namespace controller
