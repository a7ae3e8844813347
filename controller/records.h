// The host's record of a space (docs/reference-behaviour.md#host-records): network choice and grant
// ids, so a restarted gatekeeper can be told again. Never a secret: a grant records only whether it
// had one.
//
// Files live in a state directory that must be the user's own: a directory (never a symlink)
// owned by the effective uid and writable by nobody else; every file in it is opened without
// following symlinks and refused when it is not the user's or is writable by others. Records are
// written atomically (a fresh temporary file, fsync, rename, fsync of the directory) and read
// strictly (unknown members or wrong types make a record unreadable, never a default).
// Every read-change-write of a record together with its gatekeeper call runs under SpaceLock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"
#include "controller/grants/source.h"
#include "policy/corridor.h"

namespace controller {

struct GrantRecord {
  std::string id, upstream, header;  // header empty: an opened domain without a secret
  bool has_secret = false;           // the value itself is never stored
  bool unsafe_private_upstream = false;  // the host's word: the upstream may be a private address
  std::string provider;                  // the preset it came from (grants/presets.h), or empty
  // Where the secret comes from: its kind and the variable's name or the helper's argv, never a
  // value. A record written before sources existed reads as stdin (secret) or none.
  grants::SecretSource source;
  // The token the gatekeeper holds now: when it expires and when it was obtained (RFC 3339, UTC);
  // empty when it does not expire or is not known.
  std::string expires_at, obtained_at;
};

// What code in brought (controller/code/): the repository it came from (its work tree top), where
// it lives in the space, and the base commit history starts from. Empty repository: no code in.
struct CodeRecord {
  std::string repository, space_path, project_path, base;
  std::string history = "pending";  // pending, sent, already_complete, host_shallow, failed
};

// What the last successful code out brought (controller/code/out.h): the result commit (also
// refs/openchamber/spaces/<id>/result in the repository, which is the truth), the start it is
// compared with, the space's HEAD under it, and the counts shown. Empty result: none yet.
struct OutRecord {
  std::string result, start, space_head;
  std::uint64_t changed_paths = 0, changed_bytes = 0;
};

// A creation under way or failed. `preparing` is written under the space's lock before anything
// is created, so a record still `preparing` whose lock nobody holds is a creation whose process
// died (sweep removes it). `failed` stays until the space is removed (dismissed).
struct CreationRecord {
  std::string state;  // empty (done), preparing, failed
  std::string step;   // the last step reached (create's progress words)
  std::string started;
  std::string failure_code, failure_message;
};

// Idle stop of this space (controller/serve/idle.h); absent: the default of `spacectl serve`.
struct IdleStopRecord {
  bool set = false;
  bool enabled = true;
  int hours = 4;
};

// The subnets spacectl allocated to the space's networks (controller/subnets.h); empty: none
// (the engine chose them, as before the pool existed).
struct SubnetRecord {
  std::string inner, outer;
};

struct SpaceRecord {
  std::string mode = "allowlist";
  std::vector<std::string> domains;
  std::vector<GrantRecord> grants;
  CodeRecord code;
  OutRecord out;
  CreationRecord creation;
  IdleStopRecord idle_stop;
  SubnetRecord subnets;
  bool stopped_idle = false;  // idle stop stopped it (listed as stopped-idle until the next start or stop)
};

inline constexpr int kMinIdleStopHours = 1;
inline constexpr int kMaxIdleStopHours = 168;

inline constexpr std::size_t kMaxRecordBytes = 1u << 20;
// As many as the gatekeeper takes (policy/corridor.h): a network set that succeeded must read back.
inline constexpr std::size_t kMaxRecordDomains = policy::kMaxAllowlistDomains;
inline constexpr std::size_t kMaxRecordGrants = 100;

// Now, UTC, ISO 8601 to the second (record times).
std::string now_utc_iso();

// --state-dir, else $XDG_STATE_HOME/spacectl (absolute), else $HOME/.local/state/spacectl; no
// fallback: without HOME there is no state directory (never a shared one such as /tmp).
Result<std::string> state_dir(const std::string& override_dir);
// Makes the directory (0700) when missing; refuses one that is a symlink, not a directory, not
// owned by the effective uid, or writable by group or others.
Result<void> ensure_private_dir(const std::string& path);
// The installation id that scopes every label filter: made once (24 hex), file 0600. Any read
// error other than "missing" is an error (a new id would hide every running space).
Result<std::string> load_or_make_owner(const std::string& dir);
Result<SpaceRecord> read_record(const std::string& dir, const std::string& id);  // missing: defaults
// Whether a record file exists (read_record answers defaults for a missing one).
Result<bool> record_exists(const std::string& dir, const std::string& id);
// Ids of every record file in the state directory (names that are not <12 hex>.json are ignored).
Result<std::vector<std::string>> record_ids(const std::string& dir);
Result<void> write_record(const std::string& dir, const std::string& id, const SpaceRecord& record);
Result<void> remove_record(const std::string& dir, const std::string& id);
// The text write_record stores (parse_record reads every one back as the same record).
std::string record_text(const SpaceRecord& record);
// A file of spacectl's own in the state directory `dir` (made 0700 when missing), read and
// written like the records: no symlink, this user's, not writable by others, at most `cap`
// bytes; written atomically. A missing file reads as nullopt.
Result<std::optional<std::string>> read_state_file(const std::string& dir, std::string_view name,
                                                   std::size_t cap);
Result<void> write_state_file(const std::string& dir, std::string_view name,
                              const std::string& text);
// Strict parse of a record's text (tests feed it directly).
Result<SpaceRecord> parse_record(const std::string& text, const std::string& what);

// An exclusive flock on <state>/locks/<id>.lock for the life of the object, shared by every
// spacectl process and every thread of `spacectl serve` (each acquire opens the file afresh, and
// flock excludes open file descriptions, not processes). The descriptor is close-on-exec, so no
// child keeps it; a crash releases it. A lock held by another action is kSpaceBusy at once, never
// a silent wait. The holder writes "<pid> <action>" into the file so a refusal can say who holds it.
class SpaceLock {
 public:
  static Result<SpaceLock> acquire(const std::string& dir, const std::string& id, const std::string& action = "an action");
  SpaceLock(SpaceLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  SpaceLock& operator=(SpaceLock&&) = delete;
  SpaceLock(const SpaceLock&) = delete;
  SpaceLock& operator=(const SpaceLock&) = delete;
  ~SpaceLock();
  // Whether some action holds the space's lock now (list shows it as busy; sweep leaves it).
  static bool is_held(const std::string& dir, const std::string& id);

 private:
  explicit SpaceLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace controller
