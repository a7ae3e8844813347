// Runs the `docker` CLI for the Docker place: argv only, a deadline per kind of call, an output
// cap, and errors that name the operation and the object. DOCKER_HOST and DOCKER_CONTEXT reach the
// CLI through the inherited environment.
#pragma once

#include <chrono>
#include <string>
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
  Result<ProcessOutcome> run_raw(const std::vector<std::string>& args, const std::string& what,
                                 std::chrono::milliseconds timeout, const std::string& stdin_bytes = {},
                                 std::size_t cap = kDefaultOutputCap) const;
  [[nodiscard]] const std::string& program() const { return program_; }

 private:
  std::string program_;
};

// True when stderr says the daemon cannot be reached (socket missing, refused, context broken).
bool daemon_unreachable_text(const std::string& err);

}  // namespace controller
