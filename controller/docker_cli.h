// Runs the `docker` CLI for the Docker place: argv only, a deadline per kind of call, an output
// cap, and errors that name the operation and the object. DOCKER_HOST and DOCKER_CONTEXT reach the
// CLI through the inherited environment.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"
#include "controller/process.h"

namespace controller {

// docs/reference-behaviour.md#docker-place: change steps 120 s, queries 30 s; version/info 10 s.
inline constexpr std::chrono::milliseconds kChangeTimeout{120000};
inline constexpr std::chrono::milliseconds kQueryTimeout{30000};
inline constexpr std::chrono::milliseconds kProbeTimeout{10000};

class DockerCli {
 public:
  explicit DockerCli(std::string program = "docker") : program_(std::move(program)) {}
  // `what` names the object for messages: "docker <args[0]> <what>: exit 125: …".
  Result<std::string> run(const std::vector<std::string>& args, const std::string& what,
                          std::chrono::milliseconds timeout = kQueryTimeout,
                          const std::string& stdin_bytes = {}, std::size_t cap = kDefaultOutputCap) const;
  // Same, but a non-zero exit is returned as an outcome, not a failure (docker exec's own status).
  // output_from_space: stdout/stderr are a command's inside a space (docker exec), so their text
  // never turns into kPlaceUnreachable (the caller asks the daemon itself).
  Result<ProcessOutcome> run_raw(const std::vector<std::string>& args, const std::string& what,
                                 std::chrono::milliseconds timeout, const std::string& stdin_bytes = {},
                                 std::size_t cap = kDefaultOutputCap, bool output_from_space = false) const;
  // Output handed to on_output as it arrives (ProcessRequest::on_output), read to its end.
  Result<ProcessOutcome> run_stream(const std::vector<std::string>& args, const std::string& what,
                                    std::chrono::milliseconds timeout,
                                    std::function<void(bool is_stderr, std::string_view bytes)> on_output) const;
  // run_stream for a command inside a space (docker exec): its output never turns into
  // kPlaceUnreachable, and a non-zero exit is the command's own.
  Result<ProcessOutcome> run_stream_from_space(
      const std::vector<std::string>& args, const std::string& what,
      std::chrono::milliseconds timeout,
      std::function<void(bool is_stderr, std::string_view bytes)> on_output) const;
  [[nodiscard]] const std::string& program() const { return program_; }

 private:
  Result<ProcessOutcome> run_request(const std::vector<std::string>& args, const std::string& what,
                                     std::chrono::milliseconds timeout, const std::string& stdin_bytes, std::size_t cap,
                                     bool output_from_space, std::function<void(bool, std::string_view)> on_output) const;
  std::string program_;
};

// True when stderr says the daemon cannot be reached (socket missing, refused, context broken).
bool daemon_unreachable_text(const std::string& err);

}  // namespace controller
