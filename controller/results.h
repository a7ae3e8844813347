// What the space manager's operations answer, as values (one struct per operation). The CLI and
// `spacectl serve` both turn them into output through render.h, so `--json` and the API answer
// the same document for the same operation (controller/API.md is that document's contract).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/place.h"
#include "controller/records.h"

namespace controller {

// The state of a listed space (docs/reference-behaviour.md#space-states). Preparing and failed
// are creations the host record knows of; the others are read from the place.
enum class SpaceState : std::uint8_t {
  kRunning,
  kStopped,
  kStoppedIdle,  // stopped because it was idle (exit status kIdleExitCode, or idle stop did it)
  kUnreachable,  // a part is missing, one half runs without the other, or the gatekeeper did not
                 // answer
  kNeedsAccess,  // running, but the gatekeeper lacks a recorded grant (its secret must be said
                 // again)
  kPreparing,
  kFailed,
};

inline constexpr std::array<SpaceState, 7> kAllSpaceStates = {
    SpaceState::kRunning,     SpaceState::kStopped,     SpaceState::kStoppedIdle,
    SpaceState::kUnreachable, SpaceState::kNeedsAccess, SpaceState::kPreparing,
    SpaceState::kFailed};

// The state's word in every output: running, stopped, stopped-idle, unreachable, needs-access,
// preparing, failed.
std::string_view state_word(SpaceState state);

// Why a creation failed (its failure code word and message), as list shows it.
struct CreationFailure {
  std::string code, message;
};

// One space as list, show and create describe it: what the place shows, and the state the
// manager read from it and the host record.
struct SpaceView {
  SpaceSummary summary;
  SpaceState state = SpaceState::kUnreachable;
  // List only: where a creation under way got to, why it failed, the grants the gatekeeper lacks,
  // whether an action holds the space's lock, and the recorded grants (never a value).
  std::optional<std::string> step;
  std::optional<CreationFailure> failure;
  std::optional<std::vector<std::string>> needs_access;
  std::optional<bool> busy;
  std::optional<std::vector<GrantRecord>> grants;
};

// space list
struct SpaceList {
  std::vector<SpaceView> spaces;
};

// space show: the space, and its network choice and grants from the host record (absent when the
// record is unreadable: the network is then unknown, never "open").
struct SpaceShown {
  SpaceView space;
  struct Network {
    std::string mode;
    std::vector<std::string> domains;
  };
  std::optional<Network> network;
  std::vector<GrantRecord> grants;
};

// space create (and create --repo: `code` is what code in brought, with its history).
struct SpaceCreated {
  SpaceView space;
  bool token_written = false;
  std::optional<std::string> token_failure;
  std::optional<nlohmann::json> code;
};

// space remove: refs removed from the repository code came from (or why not).
struct SpaceRemoved {
  std::string id;
  std::optional<std::vector<std::string>> refs_removed;
  std::optional<std::string> refs_not_removed;
};

// The grants said again at start: those the gatekeeper took, those it lacks (a typed secret is
// never kept, so only the user can say it again; or its source or the gatekeeper refused), and
// why each refused one failed.
struct GrantFailure {
  std::string grant;
  Failure failure;
};
struct GrantsRestored {
  std::vector<std::string> restored, needs_access;
  std::vector<GrantFailure> failures;
};

// space start: running, or needs-access when a grant could not be said again. Without a readable
// record nothing is said again (the gatekeeper starts with an empty allowlist).
struct SpaceStarted {
  std::string id;
  SpaceState state = SpaceState::kRunning;
  bool network_restored = false;
  std::optional<GrantsRestored> grants;
};

// space stop
struct SpaceStopped {
  std::string id;
  SpaceState state = SpaceState::kStopped;  // kStopped or kStoppedIdle
};

// place check: whether this place can run isolated spaces, and what proved it. `warnings` (the
// CLI adds them) name running gatekeepers that are not the pinned image.
struct PlaceChecked {
  bool usable = false;
  std::string place, engine, os_arch;
  bool seccomp = false, rootless = false, host_isolation = false, positive_control = false;
  std::vector<std::string> findings;
  std::optional<std::vector<std::string>> warnings;
};

// place list: every place of the registry, probed in turn.
struct PlaceEntry {
  std::string place;
  std::string state;  // usable, unusable, unreachable, not_configured
  bool restricts_network = false;
  std::string proved;  // Registry::proved
  std::string detail;
  std::optional<std::string> engine;  // only for a place whose check answered
  std::optional<bool> rootless;
};
struct PlaceList {
  std::vector<PlaceEntry> places;
};

// space verify: the differences from the hardening spec (none: the space may start).
struct SpaceVerified {
  std::string id;
  std::vector<Difference> differences;
};

// network set: what the gatekeeper now holds and the record says.
struct NetworkSet {
  std::string id, mode;
  std::vector<std::string> domains;
};

// window-key: the key went to the gatekeeper again.
struct WindowKeyDelivered {
  std::string id, window;
};

}  // namespace controller
