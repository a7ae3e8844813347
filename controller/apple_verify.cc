// verify on the Apple container place: each container's `container inspect` entry against what
// we created, and the inner network's mode.
#include <algorithm>
#include <set>

#include "controller/apple_place.h"
#include "policy/number.h"

namespace controller::apple {

using detail::add_labels;
using detail::address_only;
using detail::label_spec;
using detail::member;
using nlohmann::json;

std::vector<Difference> verify_container(const json& entry, const AppleSpec& spec, Role role) {
  std::vector<Difference> out;
  const std::string p = role == Role::kSpace ? "" : "gatekeeper_";
  auto add = [&](const std::string& check, const std::string& message) {
    out.push_back(Difference{p + check, message});
  };
  const json& c = member(entry, "configuration");
  if (!c.is_object()) {
    add("inspect", "container inspect gave no configuration");
    return out;
  }
  const Names n = names_for(spec.id);
  const json labels = member(c, "labels");
  for (const auto& [k, v] : labels_for(label_spec(spec), role)) {
    if (k != std::string(kLabelName) && k != std::string(kLabelCreated) &&
        labels.value(k, std::string("\x01")) != v) {
      add("labels", "label " + k + " is not " + v);
    }
  }
  if (member(c, "readOnly") != json(true)) add("read_only", "root filesystem is writable");
  const json& drop = member(c, "capDrop");
  if (!drop.is_array() || (std::find(drop.begin(), drop.end(), json("ALL")) == drop.end() &&
                           std::find(drop.begin(), drop.end(), json("CAP_ALL")) == drop.end())) {
    add("cap_drop", "capabilities are not all dropped: " + drop.dump());
  }
  if (member(c, "capAdd").is_array() && !member(c, "capAdd").empty()) {
    add("cap_add", "capabilities added: " + member(c, "capAdd").dump());
  }
  const json& user = member(member(c, "initProcess"), "user");
  const std::string want_user(role == Role::kSpace ? kSpaceUser : kGatekeeperUser);
  // kSpaceUser and kGatekeeperUser are "uid:gid" with uid == gid (spec.h).
  const std::optional<std::int64_t> uid = policy::parse_number<std::int64_t>(
      std::string_view(want_user).substr(0, want_user.find(':')));
  const bool user_ok = (uid && member(member(user, "id"), "uid") == json(*uid) &&
                        member(member(user, "id"), "gid") == json(*uid)) ||
                       member(member(user, "raw"), "userString") == json(want_user);
  if (!user_ok) add("user", "user is " + user.dump() + ", not " + want_user);
  const std::int64_t memory = role == Role::kSpace ? spec.memory_bytes : kGatekeeperMemory;
  if (member(member(c, "resources"), "memoryInBytes") != json(memory)) {
    add("memory", "memory is " + member(member(c, "resources"), "memoryInBytes").dump() + ", not " +
                      std::to_string(memory));
  }
  if (member(member(c, "resources"), "cpus") != json(role == Role::kSpace ? spec.cpus : 1)) {
    add("cpus", "cpus is " + member(member(c, "resources"), "cpus").dump());
  }
  std::set<std::string> networks;
  for (const json& a : member(c, "networks")) {
    networks.insert(member(a, "network").is_string() ? member(a, "network").get<std::string>()
                                                     : "?");
  }
  const std::set<std::string> want_networks = role == Role::kSpace
                                                  ? std::set<std::string>{n.inner}
                                                  : std::set<std::string>{n.inner, n.outer};
  if (networks != want_networks) {
    add("networks", "networks differ from " +
                        std::string(role == Role::kSpace ? n.inner : n.inner + " and " + n.outer));
  }
  // Mounts: the space's two volumes and its /tmp tmpfs; nothing for the gatekeeper. A virtiofs
  // share is a directory of the Mac inside the VM: never.
  std::set<std::string> mounts;
  for (const json& m : member(c, "mounts")) {
    const json& type = member(m, "type");
    const std::string dst =
        member(m, "destination").is_string() ? member(m, "destination").get<std::string>() : "";
    if (type.contains("volume")) {
      mounts.insert("volume " + member(member(type, "volume"), "name").get<std::string>() + " " +
                    dst);
    } else if (type.contains("tmpfs")) {
      mounts.insert("tmpfs " + dst);
    } else {
      add("host_share", "mount " + m.dump().substr(0, 200) +
                            " is not one of ours (virtiofs/block shares a host path)");
    }
  }
  const std::set<std::string> want_mounts =
      role == Role::kSpace
          ? std::set<std::string>{"volume " + n.home + " " + std::string(kHomePath),
                                  "volume " + n.work + " " + work_path(spec.id), "tmpfs /tmp"}
          : std::set<std::string>{};
  if (mounts != want_mounts) add("mounts", "mounts differ from the spec");
  for (const char* empty : {"publishedPorts", "publishedSockets"}) {
    if (member(c, empty).is_array() && !member(c, empty).empty()) {
      add("published", std::string(empty) + " is not empty");
    }
  }
  for (const char* off : {"ssh", "virtualization", "rosetta"}) {
    if (member(c, off) != json(false)) add(off, std::string(off) + " is on");
  }
  if (member(c, "sysctls").is_object() && !member(c, "sysctls").empty()) {
    add("sysctls", "sysctls are set");
  }
  if (member(c, "runtimeHandler") != json("container-runtime-linux")) {
    add("runtime", "runtime is " + member(c, "runtimeHandler").dump());
  }
  bool core0 = false;
  for (const json& r : member(member(c, "initProcess"), "rlimits")) {
    core0 = core0 || (member(r, "limit") == json("RLIMIT_CORE") && member(r, "soft") == json(0) &&
                      member(r, "hard") == json(0));
  }
  if (!core0) add("core_limit", "core dumps are not off");
  const std::string image = role == Role::kSpace ? spec.space_image : spec.gatekeeper_image;
  if (member(member(c, "image"), "reference") != json(image)) {
    add("image", "image is " + member(member(c, "image"), "reference").dump() + ", not " + image);
  }
  if (role == Role::kSpace) {
    if (member(c, "useInit") != json(true)) add("init", "no init process");
    std::vector<std::string> env;
    for (const json& e : member(member(c, "initProcess"), "environment")) {
      if (e.is_string()) env.push_back(e);
    }
    for (const std::string& want : space_environment(spec)) {
      if (std::find(env.begin(), env.end(), want) == env.end()) {
        add("env", "environment lacks " + want.substr(0, want.find('=')));
      }
    }
    for (const std::string& e : env) {
      const std::string name = e.substr(0, e.find('='));
      bool ours = name == "PATH";  // the image's own
      for (const std::string& want : space_environment(spec)) ours = ours || want == e;
      if (!ours) add("env", "environment holds " + name + ", which no place sets");
    }
  } else {
    const json& args = member(member(c, "initProcess"), "arguments");
    const std::vector<std::string> want = gatekeeper_command(spec.inner_subnet);
    if (!args.is_array() || args.size() < want.size() ||
        !std::equal(want.begin(), want.end(), args.begin())) {
      add("command", "the gatekeeper's arguments are " + args.dump().substr(0, 200));
    }
  }
  return out;
}

Result<std::vector<Difference>> AppleContainerPlace::verify(const std::string& id) {
  Result<json> space = container(id, Role::kSpace);
  if (!space) return space.error();
  Result<AppleSpec> spec = spec_of(id, *space);
  if (!spec) return spec.error();
  std::vector<Difference> out = verify_container(*space, *spec, Role::kSpace);
  Result<json> gk = container(id, Role::kGatekeeper);
  if (!gk) {
    if (gk.error().code != Code::kSpaceNotFound) return gk.error();
    out.push_back(Difference{"gatekeeper_missing", "the gatekeeper container is missing"});
  } else {
    for (Difference& d : verify_container(*gk, *spec, Role::kGatekeeper)) {
      out.push_back(std::move(d));
    }
  }
  Result<json> net =
      run_json({"network", "inspect", names_for(id).inner}, "network " + names_for(id).inner);
  if (!net) return net.error();
  if (net->empty() || member(member((*net)[0], "configuration"), "mode") != json("hostOnly")) {
    out.push_back(Difference{"inner_network",
                             "network " + names_for(id).inner + " is not host-only (--internal)"});
  }
  return out;
}

}  // namespace controller::apple
