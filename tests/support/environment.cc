#include "tests/support/environment.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace gk_test {
namespace {

// Runs argv with stdout/stderr discarded; true when it exits 0.
bool quietly_succeeds(const char* const argv[]) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    FILE* null_out = freopen("/dev/null", "w", stdout);
    FILE* null_err = freopen("/dev/null", "w", stderr);
    (void)null_out;
    (void)null_err;
    execvp(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

bool running_as_root() { return geteuid() == 0; }

bool can_use_network_namespaces() {
  if (!running_as_root()) return false;
  const char* argv[] = {"ip", "netns", "list", nullptr};
  return quietly_succeeds(argv);
}

bool docker_engine_answers() {
  const char* argv[] = {"docker", "info", "--format", "{{.ServerVersion}}", nullptr};
  return quietly_succeeds(argv);
}

}  // namespace gk_test
