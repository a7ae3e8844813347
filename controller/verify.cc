#include "controller/verify.h"
#include "controller/inspect_json.h"
#include "controller/io_weight.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <unistd.h>

#include <cstring>
#include <fstream>

namespace controller {
namespace {

using nlohmann::json;

using inspect::empty_or_null;
using inspect::member;
using inspect::str;
std::int64_t num(const json& j) { return j.is_number_integer() ? j.get<std::int64_t>() : 0; }
bool truthy(const json& j) { return j.is_boolean() && j.get<bool>(); }

class Report {
 public:
  Report(std::vector<Difference>& out, std::string prefix, std::string who)
      : out_(out), prefix_(std::move(prefix)), who_(std::move(who)) {}
  void add(std::string_view check, const std::string& message) {
    out_.push_back(Difference{prefix_ + std::string(check), who_ + ": " + message});
  }

 private:
  std::vector<Difference>& out_;
  std::string prefix_, who_;
};

void check_labels(const json& labels, Role role, const std::string& owner, const std::string& id,
                  Report& r, std::string_view check) {
  const bool ok = str(member(labels, kLabelMarker)) == "true" && str(member(labels, kLabelOwner)) == owner &&
                  str(member(labels, kLabelId)) == id && str(member(labels, kLabelRole)) == role_word(role);
  if (!ok) r.add(check, "labels do not name this owner, space id and role " + std::string(role_word(role)));
}

// Core dumps off (soft and hard 0, the only ulimit we set) and the CPU weight and quota.
void check_core_and_cpu(const json& host, const ContainerExpectation& want, Report& r) {
  bool core_zero = false;
  const json& ulimits = member(host, "Ulimits");
  if (ulimits.is_array()) {
    for (const json& u : ulimits) {
      if (str(member(u, "Name")) != "core") continue;
      core_zero = member(u, "Soft").is_number_integer() && member(u, "Hard").is_number_integer() &&
                  num(member(u, "Soft")) == 0 && num(member(u, "Hard")) == 0;
    }
  }
  if (!core_zero) r.add("core_limit", "core dumps are not off (--ulimit core=0:0: soft and hard 0)");
  if (num(member(host, "CpuShares")) != want.cpu_shares)
    r.add("cpu_shares", "CPU weight is " + std::to_string(num(member(host, "CpuShares"))) + ", not " +
                            std::to_string(want.cpu_shares));
  // IO weight: what we asked, or 0 where the engine discarded it because the kernel cannot weight
  // IO (only when the host probe says so; a 0 anywhere else is a space created without it).
  const std::int64_t blkio = num(member(host, "BlkioWeight"));
  if (blkio != want.blkio_weight && !(blkio == 0 && want.io_weight_supported == std::optional<bool>(false)))
    r.add("blkio_weight", "IO weight is " + std::to_string(blkio) + ", not " + std::to_string(want.blkio_weight) +
                              (want.io_weight_supported ? "" : " (this host's IO weighting cannot be seen from here)"));
  if (want.cpu_quota) {
    const std::int64_t nano = num(member(host, "NanoCpus"));
    if (nano < kMinSpaceNanoCpus)
      r.add("cpu_quota", "no CPU quota (--cpus); NanoCpus is " + std::to_string(nano));
  } else if (num(member(host, "NanoCpus")) != 0 || num(member(host, "CpuQuota")) > 0) {
    r.add("cpu_quota", "has a CPU quota; the gatekeeper runs on its weight alone");
  }
}

}  // namespace

std::optional<bool> host_io_weight_supported() { return io_weight_supported_in("/sys/fs/cgroup"); }

std::optional<bool> io_weight_supported_in(const std::string& cgroup_root) {
  auto exists = [&](const char* path) { return ::access((cgroup_root + path).c_str(), F_OK) == 0; };
  // cgroup v1: CFQ's blkio.weight, the one file Docker 20.10 and Podman 4.3 look for ("Your
  // kernel does not support cgroup blkio weight", then the weight is discarded: inspect says 0).
  // BFQ's blkio.bfq.weight (present whenever the bfq module is loaded) does not count: those
  // engines discard the weight beside it, and an engine that honours it keeps the 10.
  if (exists("/blkio")) return exists("/blkio/blkio.weight");
  // cgroup v2: the io controller is available to children.
  std::ifstream in(cgroup_root + "/cgroup.controllers");
  if (!in) return std::nullopt;
  std::string word;
  while (in >> word)
    if (word == "io") return true;
  return false;
}

std::optional<bool> host_has_ipv4_on(const std::string& ifname) {
  if (if_nametoindex(ifname.c_str()) == 0) return std::nullopt;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  bool found = false;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET && ifname == a->ifa_name) found = true;
  }
  freeifaddrs(list);
  return found;
}

ContainerExpectation expect_gatekeeper(const SpaceSpec& spec, std::string seccomp_profile) {
  const Names n = names_for(spec.id);
  ContainerExpectation e;
  e.role = Role::kGatekeeper;
  e.user = std::string(kGatekeeperUser);
  e.image_id = spec.gatekeeper_image;
  e.seccomp_profile = std::move(seccomp_profile);
  e.memory = kGatekeeperMemory;
  e.memory_exact = true;
  e.cpu_shares = kGatekeeperCpuShares;
  e.inner_network = n.inner;
  e.networks = {n.inner, n.outer};
  e.alias = true;
  // The gatekeeper image is FROM scratch: no environment of ours; whatever the image sets is allowed.
  e.env_allowed = {"PATH", "HOME", "SSL_CERT_FILE"};
  e.owner = spec.owner;
  e.id = spec.id;
  return e;
}

ContainerExpectation expect_space(const SpaceSpec& spec, std::string seccomp_profile,
                                  const std::set<std::string>& image_env_names) {
  const Names n = names_for(spec.id);
  ContainerExpectation e;
  e.role = Role::kSpace;
  e.user = std::string(kSpaceUser);
  e.seccomp_profile = std::move(seccomp_profile);
  e.memory = kMinSpaceMemory;
  e.cpu_shares = kSpaceCpuShares;
  e.blkio_weight = kSpaceBlkioWeight;
  e.cpu_quota = true;
  e.inner_network = n.inner;
  e.networks = {n.inner};
  e.tmpfs_tmp = true;
  e.volumes = {{n.home, std::string(kHomePath)}, {n.work, work_path(spec.id)}};
  e.env_exact = space_environment(spec);
  e.env_allowed = image_env_names;
  e.owner = spec.owner;
  e.id = spec.id;
  return e;
}

std::vector<Difference> verify_container(const json& inspect, const ContainerExpectation& want) {
  std::vector<Difference> out;
  const bool gk = want.role == Role::kGatekeeper;
  Report r(out, gk ? "gatekeeper_" : "", gk ? "Gatekeeper" : "Space");
  const json& host = member(inspect, "HostConfig");
  const json& config = member(inspect, "Config");
  if (!host.is_object() || !config.is_object()) {
    r.add("inspect", "docker inspect gave no HostConfig/Config");
    return out;
  }
  check_labels(member(config, "Labels"), want.role, want.owner, want.id, r, "labels");
  if (!want.image_id.empty() && str(member(inspect, "Image")) != want.image_id)
    r.add("image", "image is " + str(member(inspect, "Image")) + ", not the pinned " + want.image_id);
  if (str(member(config, "User")) != want.user)
    r.add("user", "user is '" + str(member(config, "User")) + "', not " + want.user);
  if (!truthy(member(host, "ReadonlyRootfs"))) r.add("read_only", "root filesystem is writable");
  if (truthy(member(host, "Privileged"))) r.add("privileged", "runs privileged");
  {
    const json& drop = member(host, "CapDrop");
    bool all = false;
    if (drop.is_array())
      for (const json& c : drop) all = all || str(c) == "ALL" || str(c) == "all";
    if (!all) r.add("cap_drop", "capabilities are not all dropped (--cap-drop ALL missing)");
  }
  if (!empty_or_null(member(host, "CapAdd"))) r.add("cap_add", "capabilities are added back");
  {
    bool nnp = false, seccomp_ok = false, seccomp_seen = false;
    const json& opts = member(host, "SecurityOpt");
    if (opts.is_array()) {
      for (const json& o : opts) {
        const std::string s = str(o);
        if (s == "no-new-privileges" || s == "no-new-privileges:true" || s == "no-new-privileges=true") {
          nnp = true;
        } else if (s.rfind("seccomp=", 0) == 0 || s.rfind("seccomp:", 0) == 0) {
          seccomp_seen = true;
          const json got = json::parse(s.substr(8), nullptr, false);
          const json expected = json::parse(want.seccomp_profile, nullptr, false);
          seccomp_ok = !got.is_discarded() && !expected.is_discarded() && got == expected;
        } else {
          r.add("security_options", "unexpected security option '" + s.substr(0, 60) + "'");
        }
      }
    }
    if (!nnp) r.add("no_new_privileges", "no-new-privileges is not set");
    if (!seccomp_seen) r.add("seccomp", "no seccomp profile of ours is set (the engine default is not enough)");
    else if (!seccomp_ok) r.add("seccomp", "the seccomp profile differs from seccomp-profiles/");
  }
  if (gk) {
    if (truthy(member(host, "Init")))
      r.add("init", "the gatekeeper has an init process; it must run alone (its profile kills fork)");
  } else if (!truthy(member(host, "Init"))) {
    r.add("init", "no init process (--init)");
  }
  if (num(member(host, "PidsLimit")) != kPidsLimit)
    r.add("pids_limit", "pids limit is " + std::to_string(num(member(host, "PidsLimit"))) + ", not " + std::to_string(kPidsLimit));
  const std::int64_t memory = num(member(host, "Memory"));
  if (want.memory_exact ? memory != want.memory : memory < want.memory)
    r.add(gk ? "memory_limit" : "memory", "memory limit is " + std::to_string(memory) + " bytes");
  if (num(member(host, "MemorySwap")) != memory || memory == 0)
    r.add("memory_swap", "swap is allowed on top of memory (--memory-swap must equal --memory)");
  check_core_and_cpu(host, want, r);
  if (num(member(host, "ShmSize")) != kShmSize) r.add("shm_size", "/dev/shm is not 64 MiB");
  {
    const json& log = member(host, "LogConfig");
    const json& lc = member(log, "Config");
    if (str(member(log, "Type")) != kLogDriver || str(member(lc, "max-size")) != kLogMaxSize ||
        str(member(lc, "max-file")) != kLogMaxFile)
      r.add("log_limit", "logs are not the capped local driver (10m, one file)");
  }
  {
    const json& tmpfs = member(host, "Tmpfs");
    if (want.tmpfs_tmp) {
      const bool ok = tmpfs.is_object() && tmpfs.size() == 1 && str(member(tmpfs, "/tmp")) == kSpaceTmpfs;
      if (!ok) r.add("tmpfs", "tmpfs is not exactly /tmp with " + std::string(kSpaceTmpfs));
    } else if (!empty_or_null(tmpfs)) {
      r.add("tmpfs", "has a tmpfs; it must have none");
    }
  }
  if (!empty_or_null(member(host, "Binds"))) r.add("binds", "has a bind mount of a host path");
  if (!empty_or_null(member(host, "VolumesFrom"))) r.add("volumes_from", "shares another container's volumes");
  {
    std::vector<std::pair<std::string, std::string>> seen;
    bool bad = false;
    for (const json* list : {&member(inspect, "Mounts"), &member(host, "Mounts")}) {
      if (!list->is_array()) continue;
      for (const json& m : *list) {
        const std::string source = str(member(m, "Source")), name = str(member(m, "Name"));
        const std::string dest = str(member(m, "Destination")).empty() ? str(member(m, "Target")) : str(member(m, "Destination"));
        if (source.find("docker.sock") != std::string::npos || dest.find("docker.sock") != std::string::npos ||
            source.find("containerd.sock") != std::string::npos || source.find("podman.sock") != std::string::npos)
          r.add("runtime_socket", "mounts a container runtime socket");
        if (str(member(m, "Type")) != "volume") {
          bad = true;
          r.add("mounts", "has a " + str(member(m, "Type")) + " mount at " + dest);
          continue;
        }
        if (list == &member(host, "Mounts")) seen.emplace_back(source, dest);
      }
    }
    if (!bad) {
      std::set<std::pair<std::string, std::string>> got(seen.begin(), seen.end());
      std::set<std::pair<std::string, std::string>> expected(want.volumes.begin(), want.volumes.end());
      if (got != expected)
        r.add("mounts", gk ? std::string("must have no mounts") : std::string("volumes are not exactly this space's home and work volumes"));
    }
  }
  if (str(member(host, "NetworkMode")) != want.inner_network)
    r.add("network_mode", "network mode is '" + str(member(host, "NetworkMode")) + "', not " + want.inner_network);
  {
    const json& nets = member(member(inspect, "NetworkSettings"), "Networks");
    std::set<std::string> got;
    if (nets.is_object())
      for (auto it = nets.begin(); it != nets.end(); ++it) got.insert(it.key());
    if (got != want.networks) r.add("networks", "is not attached to exactly its own networks");
    if (want.alias) {
      bool alias = false;
      for (const char* field : {"Aliases", "DNSNames"}) {
        const json& names = member(member(nets, want.inner_network), field);
        if (names.is_array())
          for (const json& a : names) alias = alias || str(a) == kGatekeeperAlias;
      }
      if (!alias) r.add("alias", "has no alias 'gatekeeper' on the inner network");
    }
  }
  if (!empty_or_null(member(host, "Sysctls"))) r.add("sysctls", "sets sysctls");
  {
    const std::string runtime = str(member(host, "Runtime"));
    if (!(runtime.empty() || runtime == "runc")) r.add("runtime", "runtime is '" + runtime + "', not runc");
  }
  if (!empty_or_null(member(host, "Devices")) || !empty_or_null(member(host, "DeviceCgroupRules")) ||
      !empty_or_null(member(host, "DeviceRequests")))
    r.add("devices", "has devices");
  if (!empty_or_null(member(host, "PortBindings")) || truthy(member(host, "PublishAllPorts")))
    r.add("port_bindings", "publishes ports");
  if (!empty_or_null(member(host, "GroupAdd"))) r.add("group_add", "joins extra groups");
  {
    const std::string restart = str(member(member(host, "RestartPolicy"), "Name"));
    if (!(restart.empty() || restart == "no")) r.add("restart_policy", "has restart policy '" + restart + "'");
  }
  // systempaths=unconfined empties both lists; the engine default masks /proc/kcore and others.
  if (empty_or_null(member(host, "MaskedPaths")) || empty_or_null(member(host, "ReadonlyPaths")))
    r.add("masked_paths", "/proc and /sys paths are not masked");
  {
    const json& env = member(config, "Env");
    std::set<std::string> present;
    if (env.is_array()) {
      for (const json& e : env) {
        const std::string s = str(e);
        present.insert(s);
        const std::string var = s.substr(0, s.find('='));
        bool expected = want.env_allowed.count(var) > 0;
        for (const std::string& x : want.env_exact) expected = expected || x.substr(0, x.find('=')) == var;
        if (!expected) r.add("environment", "has unexpected variable " + var);
      }
    }
    for (const std::string& x : want.env_exact)
      if (present.count(x) == 0) r.add("environment", "lacks " + x.substr(0, x.find('=')) + " as the spec sets it");
  }
  for (Difference& d : verify_container_weakening(inspect, want)) out.push_back(std::move(d));
  return out;
}

std::vector<Difference> verify_network(const json& inspect, const NetworkExpectation& want, const HostAddressProbe& probe) {
  std::vector<Difference> out;
  const bool inner = want.role == Role::kInnerNetwork;
  Report r(out, inner ? "network_" : "outer_network_", inner ? "Inner network " + want.name : "Outer network " + want.name);
  check_labels(member(inspect, "Labels"), want.role, want.owner, want.id, r, "labels");
  if (str(member(inspect, "Driver")) != "bridge") r.add("driver", "driver is not bridge");
  if (truthy(member(inspect, "Internal")) != want.internal)
    r.add("internal", want.internal ? "is not internal" : "is internal; the corridor needs a way out");
  if (truthy(member(inspect, "EnableIPv6"))) r.add("ipv6", "has IPv6 enabled");
  if (!want.host_isolated) return out;
  const json& options = member(inspect, "Options");
  if (want.engine == EngineKind::kPodman) {
    // podman_network_as_docker. With DNS on, Podman keeps a host address on the bridge for its DNS
    // server; with it off an internal network gets no gateway. The guard (host_guard.h) is required
    // either way, gateway or not: the probe answers whether it is missing.
    if (str(member(options, "podman.dns_enabled")) != "false")
      r.add("host_isolation", "DNS is enabled on the inner network");
    const std::string iface = str(member(options, "com.docker.network.bridge.name"));
    const std::optional<bool> missing = probe ? probe(iface) : std::nullopt;
    if (!missing.has_value())
      r.add("host_isolation", "the host guard on the bridge '" + iface + "' cannot be checked");
    else if (*missing)
      r.add("host_isolation",
            "the host guard (INPUT DROP for the bridge " + iface + ") is missing");
    return out;
  } else {
    const bool option_set =
        str(member(options, "com.docker.network.bridge.gateway_mode_ipv4")) == "isolated" ||
        str(member(options, "com.docker.network.bridge.inhibit_ipv4")) == "true";
    if (!option_set)
      r.add("host_isolation", "neither gateway_mode_ipv4=isolated nor inhibit_ipv4=true is set");
  }
  bool gateway_listed = false;
  const json& ipam = member(member(inspect, "IPAM"), "Config");
  if (ipam.is_array())
    for (const json& c : ipam) gateway_listed = gateway_listed || !str(member(c, "Gateway")).empty();
  if (!gateway_listed) return out;
  // Engine 20.10 lists a gateway even with inhibit_ipv4; the effect is proved on the bridge itself.
  const std::string bridge = str(member(options, "com.docker.network.bridge.name")).empty()
                                 ? "br-" + str(member(inspect, "Id")).substr(0, 12)
                                 : str(member(options, "com.docker.network.bridge.name"));
  const std::optional<bool> has = probe ? probe(bridge) : std::nullopt;
  if (!has.has_value())
    r.add("host_isolation", "a gateway is listed and the bridge " + bridge + " is not visible from this host, so no host address cannot be proved");
  else if (*has)
    r.add("host_isolation", "the host can be reached at an address on the bridge " + bridge);
  return out;
}

}  // namespace controller
