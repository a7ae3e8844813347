#include "controller/docker_cli.h"

#include <string.h>

#include <cerrno>

namespace controller {

bool daemon_unreachable_text(const std::string& err) {
  for (const char* marker : {"Cannot connect to the Docker daemon", "error during connect",
                             "Is the docker daemon running", "dial unix", "connection refused",
                             "context not found", "no such host"}) {
    if (err.find(marker) != std::string::npos) return true;
  }
  return false;
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
  request.argv.push_back(program_);
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.stdin_bytes = stdin_bytes;
  request.timeout = timeout;
  request.output_cap = cap;
  ProcessOutcome o = run_process(request);
  // stdin may have held a secret (grant add): this copy is wiped like the caller's.
  explicit_bzero(request.stdin_bytes.data(), request.stdin_bytes.size());
  const std::string op = "docker " + (args.empty() ? std::string() : args[0]) +
                         (args.size() > 1 && (args[0] == "network" || args[0] == "volume" || args[0] == "image")
                              ? " " + args[1] : std::string()) +
                         (what.empty() ? std::string() : " " + what);
  if (o.spawn_failed) {
    return fail(o.spawn_errno == ENOENT ? Code::kPlaceUnreachable : Code::kInternal,
                op + ": the docker CLI " + (o.spawn_errno == ENOENT ? "is not installed (not in PATH)" : o.describe()));
  }
  if (o.interrupted) return fail(Code::kInterrupted, op + ": " + o.describe());
  if (o.wait_errno != 0) return fail(Code::kInternal, op + ": " + o.describe());
  if (o.timed_out) return fail(Code::kCommandTimeout, op + ": " + o.describe());
  if (o.output_too_large) return fail(Code::kOutputTooLarge, op + ": " + o.describe());
  if (!output_from_space && o.exited && o.exit_code != 0 && daemon_unreachable_text(o.err))
    return fail(Code::kPlaceUnreachable, op + ": the Docker daemon does not answer: " + o.describe());
  return o;
}

Result<std::string> DockerCli::run(const std::vector<std::string>& args, const std::string& what,
                                   std::chrono::milliseconds timeout, const std::string& stdin_bytes,
                                   std::size_t cap) const {
  Result<ProcessOutcome> o = run_raw(args, what, timeout, stdin_bytes, cap);
  if (!o) return o.error();
  if (!o->succeeded()) {
    const std::string op = "docker " + (args.empty() ? std::string() : args[0]) +
                           (args.size() > 1 && (args[0] == "network" || args[0] == "volume" || args[0] == "image")
                                ? " " + args[1] : std::string()) +
                           (what.empty() ? std::string() : " " + what);
    return fail(Code::kCommandFailed, op + ": " + o->describe());
  }
  return std::move(o->out);
}

}  // namespace controller
