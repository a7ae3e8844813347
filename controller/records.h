// The host's record of a space (docs/reference-behaviour.md#host-records): network choice and grant
// ids, so a restarted gatekeeper can be told again. Never a secret: a grant records only whether it
// had one. Files are mode 0600 under a 0700 directory, written through a temporary name and a
// rename.
#pragma once

#include <string>
#include <vector>

#include "controller/errors.h"

namespace controller {

struct GrantRecord {
  std::string id, upstream, header;  // header empty: an opened domain without a secret
  bool has_secret = false;           // the value itself is never stored
  bool unsafe_private_upstream = false;  // the host's word: the upstream may be a private address
};

// What code in brought (controller/code/): the repository it came from (its work tree top), where
// it lives in the space, and the base commit history starts from. Empty repository: no code in.
struct CodeRecord {
  std::string repository, space_path, project_path, base;
  std::string history = "pending";  // pending, sent, already_complete, host_shallow, failed
};

struct SpaceRecord {
  std::string mode = "allowlist";
  std::vector<std::string> domains;
  std::vector<GrantRecord> grants;
  CodeRecord code;
};

// --state-dir, else $XDG_STATE_HOME/spacectl, else ~/.local/state/spacectl.
std::string state_dir(const std::string& override_dir);
// The installation id that scopes every label filter: made once (24 hex), file 0600.
Result<std::string> load_or_make_owner(const std::string& dir);
Result<SpaceRecord> read_record(const std::string& dir, const std::string& id);  // missing: defaults
Result<void> write_record(const std::string& dir, const std::string& id, const SpaceRecord& record);
void remove_record(const std::string& dir, const std::string& id);

}  // namespace controller
