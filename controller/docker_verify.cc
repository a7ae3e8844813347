// DockerPlace::verify: re-inspect both containers, both networks and both volumes of a space and
// compare each with the spec rebuilt from their labels and today's pins
// (docs/reference-behaviour.md#verify). Everything is tied together by ID: the containers'
// networks must be the inspected networks, the networks may hold no container but these two, and
// start starts these IDs.
#include "controller/docker_place.h"

#include <future>

namespace controller {

using nlohmann::json;

Result<std::vector<Difference>> DockerPlace::verify(const std::string& id) {
  Result<Verified> v = verify_ids(id);
  if (!v) return v.error();
  return std::move(v->differences);
}

Result<DockerPlace::Verified> DockerPlace::verify_ids(const std::string& id) {
  // The six inspects are independent engine calls: made at once (each its own CLI process), they
  // cost one round instead of six. A future's destructor waits, so no early return leaves one
  // running.
  const Names n = names_for(id);
  auto query = [this](std::vector<std::string> args, std::string what) {
    return std::async(std::launch::async, [this, args = std::move(args), what = std::move(what)] {
      return inspect(args, what);
    });
  };
  auto space_inspect =
      std::async(std::launch::async, [this, &id] { return owned_container(id, Role::kSpace); });
  auto gatekeeper_inspect = std::async(
      std::launch::async, [this, &id] { return owned_container(id, Role::kGatekeeper); });
  std::future<Result<json>> inner_inspect = query({"network", "inspect", "--", n.inner}, n.inner);
  std::future<Result<json>> outer_inspect = query({"network", "inspect", "--", n.outer}, n.outer);
  std::future<Result<json>> home_inspect = query({"volume", "inspect", "--", n.home}, n.home);
  std::future<Result<json>> work_inspect = query({"volume", "inspect", "--", n.work}, n.work);
  Result<json> space = space_inspect.get();
  if (!space) return space.error();
  Verified verified;
  std::vector<Difference>& out = verified.differences;
  verified.space_id = space->value("Id", std::string());
  const json& labels = (*space)["Config"]["Labels"];
  SpaceSpec spec;
  spec.id = id;
  spec.owner = options_.owner;
  spec.name = labels.is_object() && labels.contains(std::string(kLabelName)) &&
                      labels[std::string(kLabelName)].is_string()
                  ? labels[std::string(kLabelName)].get<std::string>()
                  : std::string();
  spec.created = labels.is_object() && labels.contains(std::string(kLabelCreated)) &&
                         labels[std::string(kLabelCreated)].is_string()
                     ? labels[std::string(kLabelCreated)].get<std::string>()
                     : std::string();
  {
    std::string window;
    const json& env = (*space)["Config"]["Env"];
    const std::string prefix = std::string(kWindowEnv) + "=" + std::string(kWindowBase);
    if (env.is_array()) {
      for (const json& e : env) {
        if (e.is_string() && e.get<std::string>().rfind(prefix, 0) == 0) {
          window = e.get<std::string>().substr(prefix.size());
        }
      }
    }
    spec.window_key = window;
    if (window.size() != 64) {
      out.push_back(
          {"window_key", "Space: " + std::string(kWindowEnv) + " carries no 64-hex window key"});
    }
  }
  Result<std::string> gk_pin = read_pin(options_.gatekeeper_image_file);
  if (!gk_pin) return gk_pin.error();
  spec.gatekeeper_image = *gk_pin;
  Result<std::string> space_profile = read_small_file(options_.seccomp_space);
  Result<std::string> gk_profile = read_small_file(options_.seccomp_gatekeeper);
  if (!space_profile || !gk_profile) {
    return fail(Code::kPlaceUnusable,
                "verify " + id + ": seccomp profile " +
                    (!space_profile ? options_.seccomp_space : options_.seccomp_gatekeeper) +
                    " missing");
  }
  const std::string space_image = space->contains("Image") && (*space)["Image"].is_string()
                                      ? (*space)["Image"].get<std::string>()
                                      : std::string();
  Result<std::set<std::string>> image_env = image_env_names(space_image);
  if (!image_env) return image_env.error();

  Result<json> gatekeeper = gatekeeper_inspect.get();
  if (!gatekeeper) {
    if (gatekeeper.error().code != Code::kSpaceNotFound) return gatekeeper.error();
    out.push_back({"gatekeeper_missing", "Gatekeeper: " + gatekeeper.error().message});
  } else {
    verified.gatekeeper_id = gatekeeper->value("Id", std::string());
  }

  std::map<std::string, std::string> network_ids;
  std::string inner_subnet;
  for (const auto& [name, role] :
       {std::pair{n.inner, Role::kInnerNetwork}, std::pair{n.outer, Role::kOuterNetwork}}) {
    Result<json> net = (role == Role::kInnerNetwork ? inner_inspect : outer_inspect).get();
    if (!net) return net.error();
    const bool inner = role == Role::kInnerNetwork;
    if (net->empty()) {
      out.push_back({inner ? "network_missing" : "outer_network_missing",
                     "network " + name + " does not exist"});
      continue;
    }
    const json& doc = (*net)[0];
    network_ids[name] = doc.value("Id", std::string());
    if (inner && doc.contains("IPAM") && doc["IPAM"].is_object() &&
        doc["IPAM"].contains("Config") && doc["IPAM"]["Config"].is_array() &&
        !doc["IPAM"]["Config"].empty() && doc["IPAM"]["Config"][0].is_object()) {
      inner_subnet = doc["IPAM"]["Config"][0].value("Subnet", std::string());
    }
    NetworkExpectation want;
    want.name = name;
    want.role = role;
    want.internal = inner;
    want.host_isolated = inner;
    want.owner = options_.owner;
    want.id = id;
    for (Difference& d : verify_network(doc, want, probe_)) out.push_back(std::move(d));
    std::set<std::string> members = {verified.gatekeeper_id};
    if (inner) members.insert(verified.space_id);
    for (Difference& d : verify_network_members(doc, name, inner, members)) {
      out.push_back(std::move(d));
    }
  }
  for (const std::string& volume : {n.home, n.work}) {
    Result<json> doc = (volume == n.home ? home_inspect : work_inspect).get();
    if (!doc) return doc.error();
    const VolumeExpectation want{volume, options_.owner, id,
                                 disk_image_path(disk_dir(), options_.owner + "-" + volume)};
    for (Difference& d : verify_volume(doc->empty() ? json() : (*doc)[0], want, loop_probe_)) {
      out.push_back(std::move(d));
    }
  }

  ContainerExpectation space_want = expect_space(spec, *space_profile, *image_env);
  space_want.network_ids = network_ids;
  space_want.io_weight_supported = io_probe_ ? io_probe_() : std::nullopt;
  for (Difference& d : verify_container(*space, space_want)) out.push_back(std::move(d));
  if (gatekeeper) {
    ContainerExpectation gk_want = expect_gatekeeper(spec, *gk_profile);
    gk_want.network_ids = network_ids;
    gk_want.path = std::string(kGatekeeperBinary);
    gk_want.command = gatekeeper_command(inner_subnet);
    for (Difference& d : verify_container(*gatekeeper, gk_want)) out.push_back(std::move(d));
  }
  return verified;
}

}  // namespace controller
