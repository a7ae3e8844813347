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

#include "controller/grants/presets.h"
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

// A path of the project that does not travel, and why (repository, submodule, ignored).
struct PathLeftOut {
  std::string path, reason;
};

// code in (and the `code` of create --repo): where the snapshot came from and went, and whether
// the user's identity travelled. `history` is pending after code in; create --repo sets what its
// history step did (sent, already_complete, host_shallow, failed).
struct CodeBrought {
  std::string id, repository, space_path, project_path, base, staged, start;
  std::string branch;  // empty: a detached HEAD (null in JSON)
  std::string object_format;
  bool name_copied = false, email_copied = false;
  std::vector<PathLeftOut> not_travelling;
  std::string space_git;
  std::string history = "pending";
};

// space create (and create --repo: `code` is what code in brought, with its history).
struct SpaceCreated {
  SpaceView space;
  bool token_written = false;
  std::optional<std::string> token_failure;
  std::optional<CodeBrought> code;
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

// grant add: the grant as recorded (its source, never a value) and where the space reaches it.
struct GrantAdded {
  std::string id;  // the space
  GrantRecord grant;
  std::string window;  // <window URL>/model/<grant>; empty when the place did not list the space
};

// grant refresh: the grants whose tokens were replaced, and why each other one failed (it keeps
// the token the gatekeeper holds).
struct GrantsRefreshed {
  std::string id;
  std::vector<GrantRecord> refreshed;
  std::vector<GrantFailure> failed;
};

// grant providers: the presets and the providers refused, each with its reason.
struct GrantProviders {
  std::vector<grants::Preset> presets;
  std::vector<grants::Refused> refused;
};

// One journal record as the gatekeeper wrote it (policy/journal_record.h), checked field by
// field: times in its ISO-8601 form, a known listener, a printable host, a decision of the
// vocabulary. `count` and `last` are present together, for a record that stands for several.
struct JournalEntry {
  std::string at, listener, host;
  std::uint16_t port = 0;
  std::string decision;
  std::optional<std::uint64_t> count;
  std::optional<std::string> last;
};

// journal: the gatekeeper's ring (space data: shown, never obeyed).
struct GatekeeperJournal {
  std::vector<JournalEntry> records;
  std::uint64_t dropped = 0;
  std::string since;
};

// policy: the network and grant ids the gatekeeper holds, and beside them the record's grants
// (their sources and expiries, never a value; absent when the record is unreadable).
struct GatekeeperPolicy {
  std::string mode;  // allowlist or open
  std::vector<std::string> domains, grants;
  std::optional<std::vector<GrantRecord>> grant_sources;
};

// sweep (sweep.h says what each list holds).
struct SweptSpace {
  std::string id, reason;
};
struct SweepFailure {
  std::string id;
  Failure failure;
};
struct FreedSubnets {
  std::string id, subnets;
};
struct SweepDone {
  std::vector<SweptSpace> removed, left;
  std::vector<std::string> records_removed, temp_dirs_removed;
  std::vector<FreedSubnets> subnets_freed;
  std::vector<SweepFailure> failures;
};

// --version --json: the version, the git revision (empty: unknown) and the pins this invocation
// would use.
struct VersionShown {
  std::string version, revision, gatekeeper_image, space_image;
};

}  // namespace controller
