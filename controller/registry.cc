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
  r.add("docker", [](const PlaceOptions& o) -> std::unique_ptr<Place> { return std::make_unique<DockerPlace>(o); });
  return r;
}

}  // namespace controller
