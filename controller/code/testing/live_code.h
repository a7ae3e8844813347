// The fixture of the code tests on real Docker: the shared live space (controller/testing/
// live_space.h: an owner of the test's own, a private state directory, spacectl with this build's
// pins and profiles, the proof at the end that nothing of the owner is left) on the second test
// pool, which these tests' lock `gk_pool_second` stands for (tests/support/docker_pools.h), and a
// private HOME with no GIT_* variable for the test's own git. Header-only, like live_space.h.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "controller/code/testing/git_fixture.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "controller/testing/spawn.h"
#include "tests/support/docker_pools.h"

namespace controller::code::testing {

// A spacectl run cut short on purpose (kill_at_marker).
struct KilledRun {
  bool marker_seen = false;  // the marker came on stderr before the process ended
  bool killed = false;       // the process ended by the SIGKILL (not by itself first)
  std::string err;           // stderr as far as it was read
};

// Starts `argv` (stdin and stdout /dev/null, stderr on a pipe) with exactly `env` (DOCKER_HOST
// added when this process has one, so it drives the engine the rest of the test uses), reads
// stderr until `marker` appears or the process ends, calls `before_kill` with its pid, then kills
// it with SIGKILL and reaps it.
inline KilledRun kill_at_marker(std::vector<std::string> argv, std::vector<std::string> env,
                                const std::string& marker,
                                const std::function<void(pid_t)>& before_kill = {}) {
  KilledRun run;
  if (const char* host = std::getenv("DOCKER_HOST"))
    env.push_back(std::string("DOCKER_HOST=") + host);
  int err[2];
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  const pid_t pid = controller::testing::spawn_quiet(std::move(argv), &env, err[1]);
  EXPECT_GT(pid, 0) << "spawn";
  close(err[1]);
  if (pid <= 0) {
    close(err[0]);
    return run;
  }
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(err[0], chunk, sizeof chunk);
    if (n <= 0) break;
    run.err.append(chunk, static_cast<std::size_t>(n));
    if (run.err.find(marker) != std::string::npos) {
      run.marker_seen = true;
      break;
    }
  }
  if (before_kill) before_kill(pid);
  kill(pid, SIGKILL);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  run.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  return run;
}

class LiveCodeTest : public ::testing::Test {
 protected:
  // The owner is `owner_prefix` and 12 random hex digits; `timeout` bounds each spacectl run,
  // whose output may reach 64 MiB (a whole `code out` report).
  explicit LiveCodeTest(std::string owner_prefix,
                        std::chrono::milliseconds timeout = std::chrono::minutes(8))
      : live_(controller::testing::LiveSpaceOptions{
            std::move(owner_prefix), controller::testing::kReleasePin, timeout, 64u << 20, false}) {
    live_.set_subnet_pool(gk_test::kSecondSubnetPool);
  }
  void SetUp() override { isolate_git_environment(home_.path()); }

  // An engine, the pinned images and the profiles: else the test skips (fails under CI=true).
  [[nodiscard]] bool ready() const { return live_.ready(); }
  [[nodiscard]] ProcessOutcome spacectl(const std::vector<std::string>& args,
                                        bool as_json = true) const {
    return live_.spacectl(args, {}, as_json);
  }
  // A command in space `id` as its user: its output; a non-zero exit fails the test.
  std::string inside(const std::string& id, const std::vector<std::string>& argv) const {
    const ProcessOutcome o = live_.inside(id, argv);
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    return o.out;
  }

  TempTree home_, dir_;  // HOME, and a folder for the test's repositories
  controller::testing::LiveSpace live_;
};

}  // namespace controller::code::testing
