#include "controller/registry.h"

#include "controller/docker_place.h"

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
  return r;
}

}  // namespace controller
