// DockerPlace::verify: re-inspect both containers, both networks and both volumes of a space and
// compare each with the spec rebuilt from their labels and today's pins
// (docs/reference-behaviour.md#verify). Everything is tied together by ID: the containers'
// networks must be the inspected networks, the networks may hold no container but these two, and
// start starts these IDs.
#include "controller/docker_place.h"
#include "controller/host_guard.h"
#include "controller/inspect_json.h"

#include <future>

namespace controller {

using nlohmann::json;

Result<std::vector<Difference>> DockerPlace::verify(const std::string& id) {
  Result<Verified> v = verify_ids(id);
  if (!v) return v.error();
  return std::move(v->differences);
}

std::optional<bool> DockerPlace::host_isolation_by_probe() {
  if (remote_isolation_.has_value()) return remote_isolation_;
  Result<std::string> image = pinned_image(options_.space_image_file);
  if (!image) return std::nullopt;
  Result<CheckReport> r = probe_isolation(CheckReport{}, *image);
  if (!r) return std::nullopt;
  remote_isolation_ = r->isolation_proved && r->positive_control;
  return remote_isolation_;
}

Result<DockerPlace::Verified> DockerPlace::verify_ids(
    const std::string& id, const std::string& space_image_hint,
    const std::optional<std::set<std::string>>& space_image_env) {
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
  auto network_query = [this](const std::string& name) {
    return std::async(std::launch::async, [this, name] { return inspect_network(name); });
  };
  std::future<Result<json>> inner_inspect = network_query(n.inner);
  std::future<Result<json>> outer_inspect = network_query(n.outer);
  std::future<Result<json>> home_inspect = query({"volume", "inspect", "--", n.home}, n.home);
  std::future<Result<json>> work_inspect = query({"volume", "inspect", "--", n.work}, n.work);
  std::future<Result<std::set<std::string>>> hinted_env;
  if (!space_image_hint.empty() && !space_image_env.has_value()) {
    hinted_env = std::async(std::launch::async, [this, &space_image_hint] {
      return image_env_names(space_image_hint);
    });
  }
  Result<json> space = space_inspect.get();
  if (!space) return space.error();
  Verified verified;
  std::vector<Difference>& out = verified.differences;
  verified.space_id = inspect::str(inspect::member(*space, "Id"));
  const json& labels = inspect::member(inspect::member(*space, "Config"), "Labels");
  SpaceSpec spec;
  spec.id = id;
  spec.owner = options_.owner;
  spec.name = inspect::str(inspect::member(labels, kLabelName));
  spec.created = inspect::str(inspect::member(labels, kLabelCreated));
  {
    std::string window;
    const json& env = inspect::member(inspect::member(*space, "Config"), "Env");
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
    return fail(Code::kPlaceUnusable, "verify " + id + ": seccomp profile " +
                                          (!space_profile ? options_.seccomp_space : options_.seccomp_gatekeeper) + " missing");
  }
  const std::string space_image = inspect::str(inspect::member(*space, "Image"));
  // The hint's answer counts only for the image the space really runs (inspected above).
  const bool hinted = !space_image_hint.empty() && space_image == space_image_hint;
  Result<std::set<std::string>> image_env =
      hinted && space_image_env.has_value() ? Result<std::set<std::string>>(*space_image_env)
      : hinted && hinted_env.valid()        ? hinted_env.get()
                                            : image_env_names(space_image);
  if (!image_env) return image_env.error();

  Result<json> gatekeeper = gatekeeper_inspect.get();
  if (!gatekeeper) {
    if (gatekeeper.error().code != Code::kSpaceNotFound) return gatekeeper.error();
    out.push_back({"gatekeeper_missing", "Gatekeeper: " + gatekeeper.error().message});
  } else {
    verified.gatekeeper_id = inspect::str(inspect::member(*gatekeeper, "Id"));
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
    network_ids[name] = inspect::str(inspect::member(doc, "Id"));
    const json& ipam = inspect::member(inspect::member(doc, "IPAM"), "Config");
    if (inner && ipam.is_array() && !ipam.empty()) {
      inner_subnet = inspect::str(inspect::member(ipam[0], "Subnet"));
    }
    NetworkExpectation want;
    want.name = name;
    want.role = role;
    want.internal = inner;
    want.host_isolated = inner;
    want.owner = options_.owner;
    want.id = id;
    want.engine = options_.engine.kind;
    // Podman: the host holds the gateway address; it is unreachable there only behind the guard.
    const HostAddressProbe guarded = [&id](const std::string& ifname) -> std::optional<bool> {
      Result<bool> present = guard_present(ifname, id);
      if (!present) return std::nullopt;
      return !*present;
    };
    // A remote engine: the bridge is on its host; the probe on that engine says whether its host
    // can be reached from an isolated network ("reachable" unless proved otherwise).
    const HostAddressProbe remote = [this](const std::string&) -> std::optional<bool> {
      const std::optional<bool> proved = host_isolation_by_probe();
      if (!proved.has_value()) return std::nullopt;
      return !*proved;
    };
    const bool local = engine_is_local(options_.engine);
    for (Difference& d : verify_network(doc, want, podman() ? guarded : local ? probe_ : remote)) {
      out.push_back(std::move(d));
    }
    std::set<std::string> members = {verified.gatekeeper_id};
    if (inner) members.insert(verified.space_id);
    for (Difference& d : verify_network_members(doc, name, inner, members)) {
      out.push_back(std::move(d));
    }
  }
  std::vector<std::pair<std::string, json>> volumes;
  for (const std::string& volume : {n.home, n.work}) {
    Result<json> doc = (volume == n.home ? home_inspect : work_inspect).get();
    if (!doc) return doc.error();
    volumes.emplace_back(volume, doc->empty() ? json() : (*doc)[0]);
  }
  // A remote engine's host: its loop devices (and IO weighting) read there, in one helper run.
  std::optional<RemoteDiskView> remote_view;
  LoopProbe loops = loop_probe_;
  if (disks_remote()) {
    std::vector<int> indices;
    for (const auto& [volume, doc] : volumes) {
      const json* device = doc.is_object() && doc.contains("Options") &&
                                   doc["Options"].is_object() && doc["Options"].contains("device")
                               ? &doc["Options"]["device"]
                               : nullptr;
      if (device != nullptr && device->is_string()) {
        if (const std::optional<int> index = loop_index_of_device(device->get<std::string>());
            index && *index >= kLoopIndexFirst) {
          indices.push_back(*index);
        }
      }
    }
    remote_view = indices.empty() ? RemoteDiskView{} : remote_disk_view(indices);
    loops = [view = *remote_view](int index) -> std::optional<LoopState> {
      const auto it = view.loops.find(index);
      if (it == view.loops.end()) return std::nullopt;
      return it->second;
    };
  }
  for (const auto& [volume, doc] : volumes) {
    const VolumeExpectation want{volume, options_.owner, id, disk_image_path(disk_dir(), options_.owner + "-" + volume)};
    for (Difference& d : verify_volume(doc, want, loops)) out.push_back(std::move(d));
  }

  ContainerExpectation space_want = expect_space(spec, *space_profile, *image_env);
  space_want.network_ids = network_ids;
  // Podman (spec.h): the space finds its gatekeeper by /etc/hosts, at the inner subnet's second
  // address; Podman adds TERM, container=podman and (once started) HOSTNAME to every container's
  // environment.
  const std::set<std::string> podman_env = {"TERM", "container", "HOSTNAME"};
  if (podman()) {
    space_want.extra_hosts = {std::string(kGatekeeperAlias) + ":" +
                              podman_gatekeeper_ip(inner_subnet)};
    space_want.env_allowed.insert(podman_env.begin(), podman_env.end());
  }
  // This machine's IO controller says nothing about a remote engine's host.
  space_want.io_weight_supported = remote_view                         ? remote_view->io_weight
                                   : !engine_is_local(options_.engine) ? std::nullopt
                                   : io_probe_                         ? io_probe_()
                                                                       : std::nullopt;
  for (Difference& d : verify_container(*space, space_want)) out.push_back(std::move(d));
  if (gatekeeper) {
    ContainerExpectation gk_want = expect_gatekeeper(spec, *gk_profile);
    gk_want.network_ids = network_ids;
    gk_want.path = std::string(kGatekeeperBinary);
    gk_want.command = gatekeeper_command(inner_subnet, options_.unsafe_test_dns_server);
    if (podman()) {
      gk_want.alias = false;  // no DNS on a Podman inner network: the space's /etc/hosts names it
      gk_want.env_allowed.insert(podman_env.begin(), podman_env.end());
    }
    for (Difference& d : verify_container(*gatekeeper, gk_want)) out.push_back(std::move(d));
  }
  return verified;
}

}  // namespace controller
