#include "controller/docker_cli.h"

#include <string.h>

#include <cerrno>

namespace controller {

bool daemon_unreachable_text(const std::string& err) {
  for (const char* marker :
       {"Cannot connect to the Docker daemon", "error during connect",
        "Is the docker daemon running", "dial unix", "connection refused", "context not found",
        "no such host", "Cannot connect to Podman",
        // docker -H ssh://: the ssh client's own words
        "ssh: connect to host", "Connection refused", "Host key verification failed",
        "Permission denied (publickey", "kex_exchange_identification"}) {
    if (err.find(marker) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> with_tty(std::vector<std::string> exec_argv) {
  for (std::size_t i = 0; i < exec_argv.size(); ++i) {
    if (exec_argv[i] == "exec") {
      exec_argv.insert(exec_argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, "--tty");
      break;
    }
  }
  return exec_argv;
}

std::vector<std::string> DockerCli::prefix() const {
  std::vector<std::string> out = {engine_program(engine_)};
  const std::vector<std::string> global = engine_global_args(engine_);
  out.insert(out.end(), global.begin(), global.end());
  return out;
}

Result<ProcessOutcome> DockerCli::run_stream(const std::vector<std::string>& args, const std::string& what,
                                             std::chrono::milliseconds timeout,
                                             std::function<void(bool is_stderr, std::string_view bytes)> on_output) const {
  return run_request(args, what, timeout, {}, kDefaultOutputCap, false, std::move(on_output));
}

Result<ProcessOutcome> DockerCli::run_stream_from_space(
    const std::vector<std::string>& args, const std::string& what,
    std::chrono::milliseconds timeout,
    std::function<void(bool is_stderr, std::string_view bytes)> on_output) const {
  return run_request(args, what, timeout, {}, kDefaultOutputCap, true, std::move(on_output));
}

Result<ProcessOutcome> DockerCli::run_raw(const std::vector<std::string>& args, const std::string& what,
                                          std::chrono::milliseconds timeout, const std::string& stdin_bytes,
                                          std::size_t cap, bool output_from_space) const {
  return run_request(args, what, timeout, stdin_bytes, cap, output_from_space, nullptr);
}

Result<ProcessOutcome> DockerCli::run_request(const std::vector<std::string>& args, const std::string& what,
                                              std::chrono::milliseconds timeout, const std::string& stdin_bytes,
                                              std::size_t cap, bool output_from_space,
                                              std::function<void(bool, std::string_view)> on_output) const {
  ProcessRequest request;
  request.on_output = std::move(on_output);
  request.argv = prefix();
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.stdin_bytes = stdin_bytes;
  request.timeout = scaled_timeout(timeout, engine_.round_trip);
  request.output_cap = cap;
  ProcessOutcome o = run_process(request);
  // stdin may have held a secret (grant add): this copy is wiped like the caller's.
  explicit_bzero(request.stdin_bytes.data(), request.stdin_bytes.size());
  const std::string op =
      program() + " " + (args.empty() ? std::string() : args[0]) +
      (args.size() > 1 && (args[0] == "network" || args[0] == "volume" || args[0] == "image")
           ? " " + args[1]
           : std::string()) +
      (what.empty() ? std::string() : " " + what);
  if (o.spawn_failed) {
    return fail(o.spawn_errno == ENOENT ? Code::kPlaceUnreachable : Code::kInternal,
                op + ": the " + program() + " CLI " +
                    (o.spawn_errno == ENOENT ? "is not installed (not in PATH)" : o.describe()));
  }
  if (o.interrupted) return fail(Code::kInterrupted, op + ": " + o.describe());
  if (o.wait_errno != 0) return fail(Code::kInternal, op + ": " + o.describe());
  if (o.timed_out) return fail(Code::kCommandTimeout, op + ": " + o.describe());
  if (o.output_too_large) return fail(Code::kOutputTooLarge, op + ": " + o.describe());
  if (!output_from_space && o.exited && o.exit_code != 0 && daemon_unreachable_text(o.err))
    return fail(Code::kPlaceUnreachable, op + ": the engine does not answer: " + o.describe());
  return o;
}

Result<std::string> DockerCli::run(const std::vector<std::string>& args, const std::string& what,
                                   std::chrono::milliseconds timeout, const std::string& stdin_bytes,
                                   std::size_t cap) const {
  Result<ProcessOutcome> o = run_raw(args, what, timeout, stdin_bytes, cap);
  if (!o) return o.error();
  if (!o->succeeded()) {
    const std::string op =
        program() + " " + (args.empty() ? std::string() : args[0]) +
        (args.size() > 1 && (args[0] == "network" || args[0] == "volume" || args[0] == "image")
             ? " " + args[1]
             : std::string()) +
        (what.empty() ? std::string() : " " + what);
    return fail(Code::kCommandFailed, op + ": " + o->describe());
  }
  return std::move(o->out);
}

}  // namespace controller
