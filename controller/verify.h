// verify: compare what the runtime reports (`docker inspect`, `docker network inspect`) with the
// hardening spec, and name every difference (docs/reference-behaviour.md#verify). Pure: the inspect
// JSON and the host-address probe are inputs, so unit tests feed canned documents.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/loop_disk.h"
#include "controller/spec.h"

namespace controller {

struct Difference {
  std::string check;    // stable name, e.g. "cap_drop" or "gatekeeper_read_only"
  std::string message;  // a sentence for a person
};

struct ContainerExpectation {
  Role role = Role::kSpace;
  std::string user;
  std::string image_id;           // empty: not compared (the space image is the user's choice)
  std::string seccomp_profile;    // the profile file's text; compared as parsed JSON
  std::int64_t memory = 0;        // exact when memory_exact, else a minimum
  bool memory_exact = false;
  std::int64_t cpu_shares = 0;     // exactly this CPU weight
  std::int64_t blkio_weight = 0;   // exactly this IO weight (0: none), unless the engine discarded it
  std::optional<bool> io_weight_supported;  // host_io_weight_supported(); false accepts a discarded 0
  bool cpu_quota = false;          // a CPU quota (NanoCpus) must be set
  std::string inner_network;
  std::set<std::string> networks;  // exactly these
  bool alias = false;              // `gatekeeper` on the inner network
  bool tmpfs_tmp = false;          // exactly one tmpfs at /tmp (the space); else none
  std::vector<std::pair<std::string, std::string>> volumes;  // (name, destination), exactly these
  std::vector<std::string> env_exact;   // "K=V" that must be present
  std::set<std::string> env_allowed;    // names allowed besides env_exact (the image's own)
  std::string owner, id;
  // When path is set (the gatekeeper): the program and its arguments, compared exactly with
  // Entrypoint + Cmd and with Path + Args.
  std::string path;
  std::vector<std::string> command;
  std::map<std::string, std::string> network_ids;  // network name -> verified ID
  // --add-host entries, exactly these (Podman: "gatekeeper:<its inner address>"; Docker: none).
  std::vector<std::string> extra_hosts;
};

// A space volume: a `local` ext4 volume on /dev/loopN (nosuid,nodev), whose loop device holds
// image_path and is exactly as large as the volume's disk label says.
struct VolumeExpectation {
  std::string name, owner, id;
  std::string image_path;
};

struct NetworkExpectation {
  std::string name;
  bool internal = false;
  bool host_isolated = false;  // the host must hold no address on this bridge
  Role role = Role::kInnerNetwork;
  std::string owner, id;
  // Docker: isolated gateway mode (or inhibit_ipv4) and no host address on the bridge. Podman:
  // DNS off on the inner network and the host unreachable on its bridge (the place's guard).
  EngineKind engine = EngineKind::kDocker;
};

// Can the host be reached at an address on interface `ifname` (Docker: the host holds an IPv4
// address there; Podman: it does and no guard drops what arrives there)? nullopt: the interface
// is not visible from here (remote daemon, other namespace), so nothing can be proved here.
using HostAddressProbe = std::function<std::optional<bool>(const std::string& ifname)>;
std::optional<bool> host_has_ipv4_on(const std::string& ifname);

// Can the engine's host weight block IO for a cgroup? nullopt: not visible from here. The engine
// discards --blkio-weight (and inspect shows 0) where the kernel cannot; verify accepts that only
// when this probe says so, and the escape report lists it as a residual.
using IoWeightProbe = std::function<std::optional<bool>()>;
std::optional<bool> host_io_weight_supported();

ContainerExpectation expect_gatekeeper(const SpaceSpec& spec, std::string seccomp_profile);
ContainerExpectation expect_space(const SpaceSpec& spec, std::string seccomp_profile,
                                  const std::set<std::string>& image_env_names);

std::vector<Difference> verify_container(const nlohmann::json& inspect, const ContainerExpectation& want);
std::vector<Difference> verify_network(const nlohmann::json& inspect, const NetworkExpectation& want,
                                       const HostAddressProbe& probe);

// verify_more.cc: fields that weaken a container beyond the hardening flags (verify_container
// includes these), containers on a network that are not the space's own (by container ID), and a
// volume's driver and options.
std::vector<Difference> verify_container_weakening(const nlohmann::json& inspect, const ContainerExpectation& want);
std::vector<Difference> verify_network_members(const nlohmann::json& inspect, const std::string& name, bool inner,
                                               const std::set<std::string>& allowed_container_ids);
std::vector<Difference> verify_volume(const nlohmann::json& inspect, const VolumeExpectation& want, const LoopProbe& probe);

}  // namespace controller
