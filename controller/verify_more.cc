// verify, second half: the fields that could weaken a container without being part of the
// hardening flags themselves (added hosts, DNS, links, cgroup parent, OOM-kill, log compression,
// AppArmor, the gatekeeper's own command), who else sits on a space's networks, and the volumes'
// driver options (a `local` volume with type=none,o=bind,device=… is a bind mount of a host path).
// Pure like verify.cc: inspect documents in, named differences out.
#include "controller/verify.h"
#include "controller/inspect_json.h"

#include <algorithm>

namespace controller {
namespace {

using nlohmann::json;

using inspect::empty_or_null;
using inspect::member;
using inspect::str;

std::vector<std::string> strings(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const json& x : j) out.push_back(str(x));
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s.substr(0, 200);
}

}  // namespace

std::vector<Difference> verify_container_weakening(const json& inspect, const ContainerExpectation& want) {
  std::vector<Difference> out;
  const bool gk = want.role == Role::kGatekeeper;
  const std::string prefix = gk ? "gatekeeper_" : "";
  const std::string who = gk ? "Gatekeeper: " : "Space: ";
  auto add = [&](const std::string& check, const std::string& message) { out.push_back({prefix + check, who + message}); };
  const json& host = member(inspect, "HostConfig");
  const json& config = member(inspect, "Config");
  if (!host.is_object() || !config.is_object()) return out;  // verify_container names that
  // Name resolution and links: each is a way to point the space's names elsewhere.
  {
    std::vector<std::string> hosts = strings(member(host, "ExtraHosts"));
    if (hosts != want.extra_hosts)
      add("extra_hosts",
          want.extra_hosts.empty()
              ? "has extra hosts (--add-host)"
              : "extra hosts are '" + joined(hosts) + "', not '" + joined(want.extra_hosts) + "'");
  }
  if (!empty_or_null(member(host, "Dns"))) add("dns", "has its own DNS servers (--dns)");
  if (!empty_or_null(member(host, "DnsOptions"))) add("dns", "has DNS options (--dns-option)");
  if (!empty_or_null(member(host, "DnsSearch"))) add("dns", "has DNS search domains (--dns-search)");
  if (!empty_or_null(member(host, "Links"))) add("links", "is linked to other containers (--link)");
  if (!empty_or_null(member(host, "CgroupParent"))) add("cgroup_parent", "has cgroup parent '" + str(member(host, "CgroupParent")) + "'");
  if (member(host, "OomKillDisable").is_boolean() && member(host, "OomKillDisable").get<bool>())
    add("oom_kill_disable", "OOM kill is disabled (--oom-kill-disable): the memory limit no longer ends it");
  if (str(member(member(member(host, "LogConfig"), "Config"), "compress")) != kLogCompress)
    add("log_limit", "log compression is not " + std::string(kLogCompress) + " (the local driver's cap counts compressed files)");
  {
    // Docker reports the profile it applied: docker-default, or "" where the host has no AppArmor.
    const std::string apparmor = str(member(inspect, "AppArmorProfile"));
    if (!(apparmor.empty() || apparmor == "docker-default")) add("apparmor", "AppArmor profile is '" + apparmor + "', not docker-default");
  }
  // Namespaces: IPC and cgroup are asked for by name (spec.cc), so empty is not enough; PID, UTS
  // and user namespace have no name for "own", so anything but empty shares one.
  for (const char* ns : {"IpcMode", "CgroupnsMode"})
    if (str(member(host, ns)) != "private") add("namespace", std::string(ns) + " is '" + str(member(host, ns)) + "', not private");
  for (const char* ns : {"PidMode", "UTSMode", "UsernsMode"})
    if (!str(member(host, ns)).empty()) add("namespace", std::string(ns) + " is '" + str(member(host, ns)) + "', not its own");
  if (!want.path.empty()) {
    // The gatekeeper's command decides its subnet, DNS server and deadlines: exactly the spec's,
    // both as configured (Entrypoint + Cmd) and as run (Path + Args).
    std::vector<std::string> expected = {want.path};
    expected.insert(expected.end(), want.command.begin(), want.command.end());
    std::vector<std::string> configured = strings(member(config, "Entrypoint"));
    const std::vector<std::string> cmd = strings(member(config, "Cmd"));
    configured.insert(configured.end(), cmd.begin(), cmd.end());
    std::vector<std::string> run = {str(member(inspect, "Path"))};
    const std::vector<std::string> args = strings(member(inspect, "Args"));
    run.insert(run.end(), args.begin(), args.end());
    // After the exact prefix only `--block RANGE` pairs may follow (they only refuse more).
    auto matches = [&](const std::vector<std::string>& got) {
      if (got.size() < expected.size() || !std::equal(expected.begin(), expected.end(), got.begin())) return false;
      if ((got.size() - expected.size()) % 2 != 0) return false;
      for (std::size_t i = expected.size(); i < got.size(); i += 2)
        if (got[i] != "--block" || got[i + 1].empty() || got[i + 1][0] == '-') return false;
      return true;
    };
    if (!matches(configured) || !matches(run) || configured != run)
      add("command", "command is '" + joined(run) + "', not '" + joined(expected) + "' with --block pairs only");
  }
  if (!want.network_ids.empty()) {
    // By network ID: a network re-created under the same name is another network.
    const json& nets = member(member(inspect, "NetworkSettings"), "Networks");
    if (nets.is_object())
      for (auto it = nets.begin(); it != nets.end(); ++it) {
        const std::string got = str(member(*it, "NetworkID"));
        auto expected = want.network_ids.find(it.key());
        if (!got.empty() && expected != want.network_ids.end() && got != expected->second)
          add("networks", "is attached to a network named " + it.key() + " whose ID is not the verified one");
      }
  }
  return out;
}

std::vector<Difference> verify_network_members(const json& inspect, const std::string& name, bool inner,
                                               const std::set<std::string>& allowed_container_ids) {
  std::vector<Difference> out;
  const json& containers = member(inspect, "Containers");
  if (!containers.is_object()) return out;
  for (auto it = containers.begin(); it != containers.end(); ++it) {
    if (allowed_container_ids.count(it.key()) > 0) continue;
    // A container of anyone else on the inner network is a way out around the gatekeeper.
    out.push_back({inner ? "network_foreign_container" : "outer_network_foreign_container",
                   (inner ? "Inner network " : "Outer network ") + name + ": container " + str(member(*it, "Name")) + " (" +
                       it.key().substr(0, 12) + ") is attached and is not this space's"});
  }
  return out;
}

std::vector<Difference> verify_volume(const json& inspect, const VolumeExpectation& want, const LoopProbe& probe) {
  std::vector<Difference> out;
  auto add = [&](const std::string& check, const std::string& message) { out.push_back({check, "Volume " + want.name + ": " + message}); };
  if (!inspect.is_object()) {
    add("volume_missing", "does not exist");
    return out;
  }
  if (str(member(inspect, "Driver")) != "local") add("volume_driver", "driver is '" + str(member(inspect, "Driver")) + "', not local");
  const json& labels = member(inspect, "Labels");
  if (str(member(labels, kLabelOwner)) != want.owner || str(member(labels, kLabelId)) != want.id || str(member(labels, kLabelMarker)) != "true")
    add("volume_labels", "labels do not name this owner and space id");
  // `local` with options mounts whatever they say (type=none,o=bind,device=/ binds the host's /):
  // exactly our three, naming a loop device of the reserved range, and nothing else.
  const json& options = member(inspect, "Options");
  std::optional<int> loop;
  if (options.is_object() && options.size() == 3 && str(member(options, "type")) == kDiskFsType &&
      str(member(options, "o")) == kVolumeMountOptions)
    loop = loop_index_of_device(str(member(options, "device")));
  if (!loop || *loop < kLoopIndexFirst || *loop >= kLoopIndexFirst + kLoopIndexCount) {
    add("volume_options", "options are not exactly type=" + std::string(kDiskFsType) + ", o=" + std::string(kVolumeMountOptions) +
                              " and a device /dev/loopN of spacectl's range (a local volume can mount any host path)");
    return out;
  }
  const std::string disk = str(member(labels, kLabelDisk));
  std::int64_t bytes = 0;
  bool number = !disk.empty() && disk.size() <= 18;
  for (char c : disk) {
    number = number && c >= '0' && c <= '9';
    if (number) bytes = bytes * 10 + (c - '0');
  }
  if (!number || bytes < kMinDiskBytes || bytes > kMaxDiskBytes) {
    add("volume_disk_label", "label " + std::string(kLabelDisk) + " is not a size from 64 MiB to 16 TiB");
    return out;
  }
  // The limit itself, from the kernel: the device holds this space's image and is that large.
  const std::string device = loop_device(*loop);
  const std::optional<LoopState> state = probe ? probe(*loop) : std::nullopt;
  if (!state) {
    add("volume_disk_unseen", device + " cannot be seen from here (/sys/block); the size limit cannot be proved");
  } else if (!state->attached) {
    add("volume_disk_detached", device + " holds no disk image (start attaches it again)");
  } else if (state->backing_file != want.image_path) {
    add("volume_disk_image", device + " holds " + state->backing_file + ", not " + want.image_path);
  } else if (state->bytes != bytes) {
    add("volume_disk_size", device + " is " + std::to_string(state->bytes) + " bytes, not the " + std::to_string(bytes) + " its label says");
  }
  return out;
}

}  // namespace controller
