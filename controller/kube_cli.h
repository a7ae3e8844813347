// Runs `kubectl` for the Kubernetes place: argv only, `--context` and `--namespace` first on every
// call (the kubeconfig's current context and namespace are never used), JSON output, a deadline
// and an output cap per call, and errors that name the operation and the object.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/errors.h"
#include "controller/process.h"

namespace controller::kube {

inline constexpr std::chrono::milliseconds kKubeQueryTimeout{30000};
inline constexpr std::chrono::milliseconds kKubeChangeTimeout{120000};
inline constexpr std::chrono::milliseconds kNamespaceGoneTimeout{
    300000};  // finalizers may take minutes
inline constexpr std::size_t kMaxKubeAnswer = 8u << 20;

class KubeCli {
 public:
  KubeCli(std::string program, std::string context)
      : program_(std::move(program)), context_(std::move(context)) {}
  // kubectl --context C --namespace NS <args...>
  [[nodiscard]] std::vector<std::string> argv(const std::string& ns,
                                              const std::vector<std::string>& args) const;
  // A non-zero exit is a failure naming `what`: kPlaceUnreachable when kubectl is missing or the
  // API server does not answer, kPlaceUnusable when it refuses us (Forbidden), else kCommandFailed.
  Result<std::string> run(const std::string& ns, const std::vector<std::string>& args,
                          const std::string& what,
                          std::chrono::milliseconds timeout = kKubeQueryTimeout,
                          const std::string& stdin_bytes = {}) const;
  // run() and the output parsed as JSON (kInternal when it is not).
  Result<nlohmann::json> json(const std::string& ns, const std::vector<std::string>& args,
                              const std::string& what,
                              std::chrono::milliseconds timeout = kKubeQueryTimeout,
                              const std::string& stdin_bytes = {}) const;
  // The process outcome whatever its exit (kubectl exec passes the command's status on); only a
  // kubectl that did not run or was killed is a failure.
  Result<ProcessOutcome> run_raw(const std::string& ns, const std::vector<std::string>& args,
                                 const std::string& what, std::chrono::milliseconds timeout,
                                 const std::string& stdin_bytes) const;
  [[nodiscard]] const std::string& program() const { return program_; }
  [[nodiscard]] const std::string& context() const { return context_; }

 private:
  std::string program_, context_;
};

// kubectl's stderr says the API server cannot be reached (refused, no route, bad context).
bool unreachable_text(const std::string& err);
// The exit status of the command kubectl exec ran: kubectl exits with it and, when it is not 0,
// writes "command terminated with exit code N" on stderr (that line is removed from `err`).
// nullopt: the failure is kubectl's own (no such pod, connection upgrade refused).
std::optional<int> exec_status(const ProcessOutcome& o, std::string& err);

}  // namespace controller::kube
