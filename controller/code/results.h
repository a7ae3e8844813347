// What the code commands answer, as values (one struct per operation; code in's is CodeBrought in
// controller/results.h, since space create --repo carries it). controller/code/render.h turns each
// into the CLI's text and into the document `--json` prints and `spacectl serve` answers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/code/apply.h"
#include "controller/code/out.h"
#include "controller/code/snapshot.h"

namespace controller::code {

// code history: what the history step did (sent, already_complete, host_shallow).
struct CodeHistoryDone {
  std::string id, history;
};

// code files: what code in would carry, what it would not and why.
struct CodeFiles {
  FileListing listing;
};

// code forget: the refs removed from the repository code came from (none recorded: no
// repository).
struct CodeForgotten {
  std::string id;
  std::optional<std::string> repository;
  std::vector<std::string> refs_removed;
};

// code out: the result brought out and what it changes.
struct CodeOutDone {
  std::string id;
  BringOut out;
};

// apply: as a branch or as changes (exactly one), and with --remove-afterwards whether the
// space went.
struct Applied {
  std::string id, repository;
  std::optional<BranchApplied> branch;
  std::optional<ChangesApplied> changes;
  std::optional<bool> removed;
  std::optional<std::string> remove_error;
};

// apply-state: what the next apply --as-changes would do.
struct ApplyStateShown {
  std::string id, repository;
  ApplyState state;
};

}  // namespace controller::code
