// The Kubernetes place (docs/places.md#kubernetes): a space is a namespace of its own holding a
// gatekeeper pod, a space pod, the gatekeeper's Service, two claims and the network policies,
// all made and read back through `kubectl` (kube_cli.h). Built against the documented interface of
// kubectl and the Kubernetes API; not yet run against a live cluster.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/kube_cli.h"
#include "controller/kube_objects.h"
#include "controller/place.h"

namespace controller::kube {

inline constexpr std::chrono::milliseconds kPodRunningTimeout{300000};  // a first pull is slow
inline constexpr std::chrono::milliseconds kPodPollInterval{500};

class KubernetesPlace final : public Place {
 public:
  explicit KubernetesPlace(PlaceOptions options);

  Result<CheckReport> check() override;  // kube_check.cc
  Result<SpaceSummary> create(const CreateRequest& request) override;
  Result<std::vector<SpaceSummary>> list() override;
  Result<ExecOutput> exec(const std::string& id, ExecTarget target,
                          const std::vector<std::string>& argv, const std::string& stdin_bytes,
                          std::chrono::milliseconds timeout) override;
  Result<std::vector<std::string>> exec_argv(const std::string& id) override;
  Result<std::vector<std::string>> interactive_exec_argv(const std::string& id,
                                                         bool terminal) override;
  Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) override;
  Result<void> stop(const std::string& id) override;
  Result<void> start(const std::string& id) override;
  Result<void> remove(const std::string& id) override;
  Result<std::vector<Difference>> verify(const std::string& id) override;  // kube_verify.cc

 private:
  // The namespace of this owner's space `id` (labels checked, never the name alone), or
  // kSpaceNotFound; kInvalidArgument for a malformed id, before kubectl is asked.
  Result<nlohmann::json> owned_namespace(const std::string& id);
  Result<KubeSpec> spec_of(const std::string& id, const nlohmann::json& ns);
  Result<nlohmann::json> pod(const std::string& ns, const std::string& name);  // null when absent
  Result<void> wait_running(const std::string& ns, const std::string& name);
  Result<void> lift_gate(const std::string& ns, const std::string& name);
  // Pods made again (gated), read back, then let run in order: gatekeeper, its key, the space.
  Result<void> bring_up(KubeSpec& spec, bool space_too);
  Result<std::string> service_ip(const std::string& ns);
  Result<void> delete_namespace(const std::string& ns);
  Result<std::string> running_pod(const std::string& id, ExecTarget target);  // the namespace
  std::vector<Difference> compare(const KubeSpec& spec, const nlohmann::json& live_namespace,
                                  const nlohmann::json& live);

  PlaceOptions options_;
  KubeCli cli_;
};

// Expected ⊆ live: every field we set must be there with our value; arrays must be as long as ours
// (an element a webhook added is a difference), their elements compared the same way. Each
// difference is appended as "<path>: <what>".
void compare_subset(const nlohmann::json& want, const nlohmann::json& live, const std::string& path,
                    std::vector<std::string>& out);

}  // namespace controller::kube
