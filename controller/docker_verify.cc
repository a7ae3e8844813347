// DockerPlace::verify: re-inspect both containers and both networks of a space and compare each
// with the spec rebuilt from their labels and today's pins (docs/reference-behaviour.md#verify).
#include "controller/docker_place.h"

namespace controller {

using nlohmann::json;

Result<std::vector<Difference>> DockerPlace::verify(const std::string& id) {
  Result<json> space = owned_container(id, Role::kSpace);
  if (!space) return space.error();
  std::vector<Difference> out;
  const json& labels = (*space)["Config"]["Labels"];
  SpaceSpec spec;
  spec.id = id;
  spec.owner = options_.owner;
  spec.name = labels.value(std::string(kLabelName), "");
  spec.created = labels.value(std::string(kLabelCreated), "");
  {
    std::string window;
    const json& env = (*space)["Config"]["Env"];
    const std::string prefix = std::string(kWindowEnv) + "=" + std::string(kWindowBase);
    if (env.is_array())
      for (const json& e : env)
        if (e.is_string() && e.get<std::string>().rfind(prefix, 0) == 0) window = e.get<std::string>().substr(prefix.size());
    spec.window_key = window;
    if (window.size() != 64) out.push_back({"window_key", "Space: " + std::string(kWindowEnv) + " carries no 64-hex window key"});
  }
  Result<std::string> gk_pin = read_pin(options_.gatekeeper_image_file);
  if (!gk_pin) return gk_pin.error();
  spec.gatekeeper_image = *gk_pin;
  Result<std::string> space_profile = read_small_file(options_.seccomp_space);
  Result<std::string> gk_profile = read_small_file(options_.seccomp_gatekeeper);
  if (!space_profile || !gk_profile)
    return fail(Code::kPlaceUnusable, "verify " + id + ": seccomp profile " +
                                          (!space_profile ? options_.seccomp_space : options_.seccomp_gatekeeper) + " missing");
  Result<std::set<std::string>> image_env = image_env_names(space->value("Image", std::string()));
  if (!image_env) return image_env.error();
  for (Difference& d : verify_container(*space, expect_space(spec, *space_profile, *image_env))) out.push_back(std::move(d));

  Result<json> gatekeeper = owned_container(id, Role::kGatekeeper);
  if (!gatekeeper) {
    if (gatekeeper.error().code != Code::kSpaceNotFound) return gatekeeper.error();
    out.push_back({"gatekeeper_missing", "Gatekeeper: " + gatekeeper.error().message});
  } else {
    for (Difference& d : verify_container(*gatekeeper, expect_gatekeeper(spec, *gk_profile))) out.push_back(std::move(d));
  }
  const Names n = names_for(id);
  for (const auto& [name, role] : {std::pair{n.inner, Role::kInnerNetwork}, std::pair{n.outer, Role::kOuterNetwork}}) {
    Result<json> net = inspect({"network", "inspect", name}, name);
    if (!net) return net.error();
    const std::string check = role == Role::kInnerNetwork ? "network_missing" : "outer_network_missing";
    if (net->empty()) {
      out.push_back({check, "network " + name + " does not exist"});
      continue;
    }
    NetworkExpectation want;
    want.name = name;
    want.role = role;
    want.internal = role == Role::kInnerNetwork;
    want.host_isolated = role == Role::kInnerNetwork;
    want.owner = options_.owner;
    want.id = id;
    for (Difference& d : verify_network((*net)[0], want, probe_)) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace controller
