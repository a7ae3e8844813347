// Runs the engine's CLI (`docker`, `docker --host ssh://…`, `podman --runtime runc`: engine.h) for
// a CLI-driven place: argv only, a deadline per kind of call (grown with the engine's measured
// round trip), an output cap, and errors that name the operation and the object. For the local
// Docker place DOCKER_HOST and DOCKER_CONTEXT reach the CLI through the inherited environment.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/engine.h"
#include "controller/errors.h"
#include "controller/process.h"

namespace controller {

// docs/reference-behaviour.md#docker-place: change steps 120 s, queries 30 s; version/info 10 s.
inline constexpr std::chrono::milliseconds kChangeTimeout{120000};
inline constexpr std::chrono::milliseconds kQueryTimeout{30000};
inline constexpr std::chrono::milliseconds kProbeTimeout{10000};

class DockerCli {
 public:
  DockerCli() = default;
  explicit DockerCli(Engine engine) : engine_(std::move(engine)) {}
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
  // The program and its global arguments: what every call starts with (exec_argv hands it out).
  [[nodiscard]] std::vector<std::string> prefix() const;
  [[nodiscard]] std::string program() const { return engine_program(engine_); }
  [[nodiscard]] const Engine& engine() const { return engine_; }
  // Deadlines of later calls grow with this round trip (scaled_timeout).
  void set_round_trip(std::chrono::milliseconds rt) { engine_.round_trip = rt; }
  // run_stream for a command inside a space (docker exec): its output never turns into
  // kPlaceUnreachable, and a non-zero exit is the command's own.
  Result<ProcessOutcome> run_stream_from_space(
      const std::vector<std::string>& args, const std::string& what,
      std::chrono::milliseconds timeout,
      std::function<void(bool is_stderr, std::string_view bytes)> on_output) const;

 private:
  Result<ProcessOutcome> run_request(const std::vector<std::string>& args, const std::string& what,
                                     std::chrono::milliseconds timeout, const std::string& stdin_bytes, std::size_t cap,
                                     bool output_from_space, std::function<void(bool, std::string_view)> on_output) const;
  Engine engine_;
};

// An exec argv (DockerCli::prefix() + exec …) with --tty right after `exec`, behind the engine's
// global arguments (`--host ssh://…`, `--runtime runc`) where a flag of exec belongs.
std::vector<std::string> with_tty(std::vector<std::string> exec_argv);

// True when stderr says the daemon cannot be reached (socket missing, refused, context broken).
bool daemon_unreachable_text(const std::string& err);

}  // namespace controller
