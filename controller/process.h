// The only place in controller/ that starts a process (docs/reference-behaviour.md#processes: every
// child is spawned directly with an argv, never a shell, always with a timeout and an output cap).
// The environment is inherited so DOCKER_HOST and DOCKER_CONTEXT reach the docker CLI.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace controller {

inline constexpr std::size_t kDefaultOutputCap = 4u << 20;  // docs/reference-behaviour.md#processes
inline constexpr std::size_t kStderrKept = 16u << 10;       // only the tail goes into messages

struct ProcessRequest {
  std::vector<std::string> argv;          // argv[0] is looked up in PATH (execvp)
  std::string stdin_bytes;                // written to the child's stdin, then closed; secrets go here
  std::chrono::milliseconds timeout{60000};
  std::size_t output_cap = kDefaultOutputCap;  // stdout bytes; past it the child is killed
  // Interactive `space exec`: no capture, no stdin bytes, no deadline. The child stays in our
  // process group, so at a terminal it is in the foreground group and may read it (a child in a
  // group of its own would be stopped by SIGTTIN and waited for forever); a stop signal sent to
  // spacectl is passed on to it.
  bool inherit_stdio = false;
  // When set, output is handed over as it arrives (stdout: false, stderr: true) instead of being
  // kept; no output cap applies, the deadline still does (a stream read to its end).
  std::function<void(bool is_stderr, std::string_view bytes)> on_output;
};

struct ProcessOutcome {
  int exit_code = -1;          // valid when exited
  bool exited = false;         // false: killed by a signal (see signal) or never started
  int signal = 0;
  bool spawn_failed = false;   // fork/exec failed; spawn_errno says why (ENOENT: not installed)
  int spawn_errno = 0;
  bool timed_out = false;      // the whole process group was killed at the deadline
  bool output_too_large = false;
  bool interrupted = false;    // a stop signal (signals.h) came while it ran; the group was killed
  int wait_errno = 0;          // waitpid failed (e.g. ECHILD): nothing is known about its exit
  std::string out;
  std::string err;             // last kStderrKept bytes

  [[nodiscard]] bool succeeded() const {
    return exited && exit_code == 0 && !timed_out && !output_too_large && !interrupted && wait_errno == 0;
  }
  // One line for messages: "exit 125: <stderr tail>", "timed out after 30 s", …
  [[nodiscard]] std::string describe() const;
};

// Runs the child in its own process group; on timeout, output cap or a stop request the group
// gets SIGKILL, so a grandchild (docker's plugins, an exec'd shell) cannot outlive the deadline.
// The child starts with default signal dispositions and an empty mask whatever spacectl inherited.
ProcessOutcome run_process(const ProcessRequest& request);
// --timings: each run_process prints one line on stderr ("timing:   41.2 ms  docker network create
// … gk-…-network") after its child ends.
void set_process_timings(bool on);

}  // namespace controller
