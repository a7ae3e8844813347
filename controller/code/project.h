// Opening the user's repository for code in (internal to code/): the refusals that need only the
// folder, and the facts every later step uses.
#pragma once

#include <string>

#include "controller/code/git2.h"
#include "controller/errors.h"

namespace controller::code {

struct Project {
  Repository repo;
  std::string top;         // real path of the work tree top, no trailing '/'
  std::string git_dir;     // this work tree's git folder (a linked worktree has its own), ends '/'
  std::string common_dir;  // objects and refs, ends '/'
  std::string prefix;      // the folder given, relative to top ("" for top)
};

// project_folder_missing, not_a_git_work_tree (bare too, or a folder inside .git),
// repository_unsupported (an object format this libgit2 cannot read). The environment is never
// consulted for the repository's location (no GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES).
Result<Project> open_project(const std::string& repository);

}  // namespace controller::code
