// The whole-repository state comparison: every path under the given roots (work tree and .git,
// nested repositories included) with its kind, permission bits and content (file bytes or link
// target, by hash; sockets, FIFOs and devices by kind only, never opened). Tests take it before
// and after every code-in success, failure and refusal; the only changes allowed are new loose
// objects in the repository's own object store and this space's start ref (with its folders),
// added or removed but never moved.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace controller::code {

struct PathState {
  char kind = '?';  // f file, d folder, l symlink, p FIFO, s socket, c/b device, ? other
  unsigned mode = 0;
  std::string content;  // hash of bytes or link target; empty for the other kinds
  bool operator==(const PathState&) const = default;
};

using RepoState = std::map<std::string, PathState>;  // absolute path → state

// A path that cannot be read is recorded with kind '!' (and thus compared too).
RepoState capture_state(const std::vector<std::string>& roots);

// A default Allowed allows nothing: what a refused bring-out must leave.
struct Allowed {
  std::string objects_dir;  // <common dir>/objects, absolute, no trailing '/'
  std::string refs_dir;     // <common dir>/refs
  std::string space_id;     // may add/remove refs/openchamber/spaces/<id>/<each of space_refs>
  std::vector<std::string> space_refs = {"start"};
  bool loose_objects = true;  // new loose objects (code in)
  bool new_packs = false;     // new objects/pack/pack-<id>.pack and .idx (code out's promote)
  bool ref_may_move = false;  // a space ref's bytes may change (code out moves its result ref)
};

// One sentence per forbidden difference ("added .git/hooks/pre-commit", "changed bytes of …").
std::vector<std::string> forbidden_changes(const RepoState& before, const RepoState& after, const Allowed& allowed);

}  // namespace controller::code
