#include "controller/kube_cli.h"

#include <string.h>

#include <cerrno>
#include <optional>

namespace controller::kube {

bool unreachable_text(const std::string& err) {
  // kubectl's own words (k8s.io/client-go and kubectl): a server that refuses or is unknown, a
  // context the kubeconfig lacks.
  for (const char* marker :
       {"Unable to connect to the server", "The connection to the server",
        "context was not found for specified context", "no context exists with the name",
        "connection refused", "no such host", "i/o timeout"}) {
    if (err.find(marker) != std::string::npos) return true;
  }
  return false;
}

std::optional<int> exec_status(const ProcessOutcome& o, std::string& err) {
  if (!o.exited) return std::nullopt;
  if (o.exit_code == 0) return 0;
  static constexpr std::string_view kLine = "command terminated with exit code ";
  const std::size_t at = err.rfind(kLine);
  if (at == std::string::npos) return std::nullopt;
  std::size_t end = at + kLine.size();
  int code = 0;
  std::size_t digits = 0;
  while (end < err.size() && err[end] >= '0' && err[end] <= '9' && digits < 4)
    code = code * 10 + (err[end++] - '0'), ++digits;
  if (digits == 0 || code != o.exit_code) return std::nullopt;
  if (end < err.size() && err[end] == '\n') ++end;
  err.erase(at, end - at);
  return code;
}

std::vector<std::string> KubeCli::argv(const std::string& ns,
                                       const std::vector<std::string>& args) const {
  std::vector<std::string> a = {program_, "--context", context_, "--namespace", ns};
  a.insert(a.end(), args.begin(), args.end());
  return a;
}

Result<ProcessOutcome> KubeCli::run_raw(const std::string& ns, const std::vector<std::string>& args,
                                        const std::string& what, std::chrono::milliseconds timeout,
                                        const std::string& stdin_bytes) const {
  ProcessRequest request;
  request.argv = argv(ns, args);
  request.stdin_bytes = stdin_bytes;
  request.timeout = timeout;
  request.output_cap = kMaxKubeAnswer;
  ProcessOutcome o = run_process(request);
  explicit_bzero(request.stdin_bytes.data(), request.stdin_bytes.size());
  const std::string op = "kubectl " + (args.empty() ? std::string() : args[0]) + " " + what;
  if (o.spawn_failed)
    return fail(o.spawn_errno == ENOENT ? Code::kPlaceUnreachable : Code::kInternal,
                op + ": " +
                    (o.spawn_errno == ENOENT ? program_ + " is not installed (not in PATH)"
                                             : o.describe()));
  if (o.interrupted) return fail(Code::kInterrupted, op + ": " + o.describe());
  if (o.wait_errno != 0) return fail(Code::kInternal, op + ": " + o.describe());
  if (o.timed_out) return fail(Code::kCommandTimeout, op + ": " + o.describe());
  if (o.output_too_large) return fail(Code::kOutputTooLarge, op + ": " + o.describe());
  return o;
}

Result<std::string> KubeCli::run(const std::string& ns, const std::vector<std::string>& args,
                                 const std::string& what, std::chrono::milliseconds timeout,
                                 const std::string& stdin_bytes) const {
  Result<ProcessOutcome> o = run_raw(ns, args, what, timeout, stdin_bytes);
  if (!o) return o.error();
  if (o->succeeded()) return std::move(o->out);
  const std::string op = "kubectl " + (args.empty() ? std::string() : args[0]) + " " + what +
                         " (context " + context_ + ")";
  if (unreachable_text(o->err))
    return fail(Code::kPlaceUnreachable, op + ": the API server does not answer: " + o->describe());
  if (o->err.find("Forbidden") != std::string::npos ||
      o->err.find("forbidden") != std::string::npos)
    return fail(Code::kPlaceUnusable, op + ": refused by the cluster's RBAC: " + o->describe());
  return fail(Code::kCommandFailed, op + ": " + o->describe());
}

Result<nlohmann::json> KubeCli::json(const std::string& ns, const std::vector<std::string>& args,
                                     const std::string& what, std::chrono::milliseconds timeout,
                                     const std::string& stdin_bytes) const {
  Result<std::string> out = run(ns, args, what, timeout, stdin_bytes);
  if (!out) return out.error();
  if (out->empty()) return nlohmann::json();  // --ignore-not-found and nothing found
  nlohmann::json doc = nlohmann::json::parse(*out, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return fail(Code::kInternal, "kubectl " + (args.empty() ? std::string() : args[0]) + " " +
                                     what + ": the answer is not a JSON object");
  return doc;
}

}  // namespace controller::kube
