// The only place in controller/ that starts a process (docs/reference-behaviour.md#processes: every
// child is spawned directly with an argv, never a shell, always with a timeout and an output cap).
// The environment is inherited so DOCKER_HOST and DOCKER_CONTEXT reach the docker CLI.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace controller {

inline constexpr std::size_t kDefaultOutputCap = 4u << 20;  // docs/reference-behaviour.md#processes
inline constexpr std::size_t kStderrKept = 16u << 10;       // only the tail goes into messages

struct ProcessRequest {
  std::vector<std::string> argv;          // argv[0] is looked up in PATH (execvp)
  std::string stdin_bytes;                // written to the child's stdin, then closed; secrets go here
  std::chrono::milliseconds timeout{60000};
  std::size_t output_cap = kDefaultOutputCap;  // stdout bytes; past it the child is killed
  bool inherit_stdio = false;             // interactive `space exec`: no capture, no stdin bytes
};

struct ProcessOutcome {
  int exit_code = -1;          // valid when exited
  bool exited = false;         // false: killed by a signal (see signal) or never started
  int signal = 0;
  bool spawn_failed = false;   // fork/exec failed; spawn_errno says why (ENOENT: not installed)
  int spawn_errno = 0;
  bool timed_out = false;      // the whole process group was killed at the deadline
  bool output_too_large = false;
  std::string out;
  std::string err;             // last kStderrKept bytes

  [[nodiscard]] bool succeeded() const { return exited && exit_code == 0 && !timed_out && !output_too_large; }
  // One line for messages: "exit 125: <stderr tail>", "timed out after 30 s", …
  [[nodiscard]] std::string describe() const;
};

// Runs the child in its own process group; on timeout or output cap the group gets SIGKILL, so
// a grandchild (docker's plugins, an exec'd shell) cannot outlive the deadline.
ProcessOutcome run_process(const ProcessRequest& request);

}  // namespace controller
