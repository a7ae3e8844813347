#include "controller/registry.h"

#include "controller/apple_place.h"
#include "controller/docker_place.h"
#include "controller/kube_place.h"

namespace controller {

Result<std::unique_ptr<Place>> Registry::make(const std::string& name, const PlaceOptions& options) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) return fail(Code::kPlaceNotFound, "place " + name + ": no such place");
  return it->second(options);
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : factories_) out.push_back(name);
  return out;
}

Registry builtin_registry() {
  Registry r;
  // One CLI-driven place, three engines (engine.h): only the engine differs.
  for (const EngineKind kind : {EngineKind::kDocker, EngineKind::kDockerSsh, EngineKind::kPodman}) {
    r.add(std::string(engine_word(kind)),
          [kind](const PlaceOptions& o) -> Result<std::unique_ptr<Place>> {
            PlaceOptions with = o;
            with.engine.kind = kind;
            if (kind == EngineKind::kDockerSsh && !is_ssh_host(with.engine.host))
              return fail(
                  Code::kUsage,
                  "place docker-ssh: needs --host ssh://user@host[:port] (or DOCKER_HOST=ssh://…)");
            if (kind != EngineKind::kDockerSsh) with.engine.host.clear();
            return std::unique_ptr<Place>(std::make_unique<DockerPlace>(std::move(with)));
          });
  }
  r.add(
      "kubernetes",
      [](const PlaceOptions& o) -> Result<std::unique_ptr<Place>> {
        // Never the kubeconfig's current context or namespace: a developer's kubeconfig holds real
        // clusters, and a space must land only where the user said.
        if (o.kube_context.empty() || o.kube_context.size() > 253 || o.kube_context.front() == '-')
          return fail(
              Code::kUsage,
              "place kubernetes: needs --context NAME (a context of the kubeconfig; never the "
              "current one by default)");
        if (!kube::is_namespace_base(o.kube_namespace))
          return fail(
              Code::kUsage,
              "place kubernetes: needs --namespace NAME (lowercase letters, digits and '-', at "
              "most 44; each space gets NAME-<id>)");
        if (!kube::is_label_value(o.owner))
          return fail(Code::kUsage,
                      "place kubernetes: the owner id must be a Kubernetes label value (at most 63 "
                      "characters, alphanumeric at both ends)");
        return std::unique_ptr<Place>(std::make_unique<kube::KubernetesPlace>(o));
      },
      std::string(kNotRunLive));
  r.add(
      "apple-container",
      [](const PlaceOptions& o) -> Result<std::unique_ptr<Place>> {
        return std::unique_ptr<Place>(std::make_unique<apple::AppleContainerPlace>(o));
      },
      std::string(kNotRunLive));
  return r;
}

}  // namespace controller
