// DockerPlace::interactive_exec_argv: the engine's `exec` with a terminal, for `space exec`.
#include "controller/docker_place.h"

namespace controller {

Result<std::vector<std::string>> DockerPlace::interactive_exec_argv(const std::string& id,
                                                                    bool terminal) {
  Result<std::vector<std::string>> argv = exec_argv(id);
  if (!argv || !terminal) return argv;
  // --tty after `exec`, behind the CLI's global arguments (docker_cli.h with_tty).
  return with_tty(std::move(*argv));
}

}  // namespace controller
