// Runs a program the way the image tests need: argv only (never a shell), stdin from /dev/null,
// stdout and stderr captured, killed with its whole process group at a deadline so a hung
// `docker` CLI cannot hang ctest past its own timeout.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace image_testing {

struct RunOutcome {
  int exit_code = -1;       // -1 when the program did not exit normally
  bool timed_out = false;
  std::string out;
  std::string err;
  std::string spawn_error;  // set when the program could not be started at all
};

RunOutcome run(const std::vector<std::string>& argv, std::chrono::seconds timeout);

// "docker run --rm …: exit 125: <stderr tail>" (docs/decisions.md#error-messages), for assertion
// messages.
std::string describe(const std::vector<std::string>& argv, const RunOutcome& outcome);

}  // namespace image_testing
