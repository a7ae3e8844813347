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
};

struct SpaceRecord {
  std::string mode = "allowlist";
  std::vector<std::string> domains;
  std::vector<GrantRecord> grants;
};

// --state-dir, else $XDG_STATE_HOME/spacectl, else ~/.local/state/spacectl.
std::string state_dir(const std::string& override_dir);
// The installation id that scopes every label filter: made once (24 hex), file 0600.
Result<std::string> load_or_make_owner(const std::string& dir);
Result<SpaceRecord> read_record(const std::string& dir, const std::string& id);  // missing: defaults
Result<void> write_record(const std::string& dir, const std::string& id, const SpaceRecord& record);
void remove_record(const std::string& dir, const std::string& id);

}  // namespace controller
