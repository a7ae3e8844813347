// Test-only: a child started with posix_spawn and left running (a spacectl in the background, one
// stopped at a step, one killed at a progress line). Header-only.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

extern char** environ;

namespace controller::testing {

// `argv` with stdin and stdout on /dev/null, stderr on `stderr_fd` (dup'ed there; -1: /dev/null
// too), and `env` as its whole environment (nullptr: this process's). The pid, or -1 when it did
// not start.
inline pid_t spawn_quiet(std::vector<std::string> argv,
                         const std::vector<std::string>* env = nullptr, int stderr_fd = -1) {
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_text = env != nullptr ? *env : std::vector<std::string>{};
  std::vector<char*> cenv;
  for (std::string& e : env_text) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stderr_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, stderr_fd, 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, cargv.data(),
                                  env != nullptr ? cenv.data() : environ);
  posix_spawn_file_actions_destroy(&fa);
  return spawned == 0 ? pid : -1;
}

}  // namespace controller::testing
