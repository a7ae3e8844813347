// The hardening spec of a space: names, labels and the exact `docker network create`,
// `docker volume create` and `docker create` argv of every resource
// (docs/reference-behaviour.md#container-hardening). verify.cc checks an inspected resource against
// the same constants.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/engine.h"

namespace controller {

inline constexpr std::string_view kControllerVersion = "0.1.0";

// Labels: the runtime's labels are the only record of what exists
// (docs/reference-behaviour.md#labels).
inline constexpr std::string_view kLabelMarker = "spacectl.space";    // "true"
inline constexpr std::string_view kLabelId = "spacectl.space.id";     // 12 lowercase hex
inline constexpr std::string_view kLabelRole = "spacectl.space.role";
inline constexpr std::string_view kLabelOwner = "spacectl.space.owner";
inline constexpr std::string_view kLabelName = "spacectl.space.name";
inline constexpr std::string_view kLabelCreated = "spacectl.space.created";
inline constexpr std::string_view kLabelVersion = "spacectl.version";
// On each volume: the size in bytes of the filesystem behind it (loop_disk.h).
inline constexpr std::string_view kLabelDisk = "spacectl.space.disk";

enum class Role : std::uint8_t { kSpace, kGatekeeper, kInnerNetwork, kOuterNetwork, kHomeVolume, kWorkVolume, kProbe };
std::string_view role_word(Role role);

// Hardening constants (docs/reference-behaviour.md#container-hardening).
// The space's uid: 70000, which no host account has. Regular accounts start at 1000, systemd's
// dynamic users end at 65519, nobody is 65534, and subordinate uid ranges (rootless containers)
// start at 100000; so the space shares no per-uid kernel limit (inotify instances, pipe pages,
// message queues, RLIMIT_NPROC accounting) with a person on the host. Spaces share it with each
// other. It stays below 2097151, the largest uid a ustar header holds (image/build-image.sh).
inline constexpr std::string_view kSpaceUser = "70000:70000";
inline constexpr std::string_view kGatekeeperUser = "65532:65532"; // the gatekeeper image's user
inline constexpr std::int64_t kPidsLimit = 512;
inline constexpr std::int64_t kShmSize = 64ll << 20;
inline constexpr std::int64_t kGatekeeperMemory = 256ll << 20;  // idle ~24 MiB; ten times headroom
inline constexpr std::int64_t kDefaultSpaceMemory = 4ll << 30;
inline constexpr std::int64_t kMinSpaceMemory = 64ll << 20;
// No core files (CIS Docker 5.19): soft and hard 0, so the space cannot raise it again, and a crash
// never reaches the host's core_pattern helper, which runs as root in the host's namespaces.
inline constexpr std::string_view kCoreUlimit = "core=0:0";
// CPU: the space gets a quota (--cpus, default half the place's cores, at least one) and a weight
// below Docker's default 1024; the gatekeeper gets no quota and four times the space's weight,
// so a space spinning every core it has still leaves the corridor its share.
inline constexpr std::int64_t kSpaceCpuShares = 512;
inline constexpr std::int64_t kGatekeeperCpuShares = 2048;
inline constexpr std::int64_t kNanoCpusPerCpu = 1000000000;
// IO: the space's block IO weight, below every host default: cgroup v1 CFQ 500 and BFQ 100 (range
// 10..1000); on cgroup v2 runc writes it to io.bfq.weight as is, or converts it for io.weight
// (1 + (w - 10) * 9999 / 990: 10 -> 1, default 100). Only the minimum is below 100 in all three.
// A kernel without a weighting IO scheduler makes the engine discard it (verify then says so).
inline constexpr std::int64_t kSpaceBlkioWeight = 10;
inline constexpr std::int64_t kMinSpaceNanoCpus = kNanoCpusPerCpu / 10;  // 0.1 CPU
inline constexpr std::string_view kSpaceTmpfs = "rw,exec,nosuid,size=256m";  // agents run built tools
inline constexpr std::string_view kLogDriver = "local";
inline constexpr std::string_view kLogMaxSize = "10m";
inline constexpr std::string_view kLogMaxFile = "1";
inline constexpr std::string_view kLogCompress = "false";  // `local` refuses max-file=1 while compressing
inline constexpr std::string_view kHomePath = "/home/space";
// The work volume is mounted at /spaces/<id> (docs/reference-behaviour.md#container-hardening: the
// id names the workspace inside the space); the image's /spaces (owned by the space user) is only
// its parent. work_path(id).
inline constexpr std::string_view kWorkParent = "/spaces";
// The gatekeeper image's binary (image/README.md: the entrypoint is this static binary).
inline constexpr std::string_view kGatekeeperBinary = "/gatekeeper";
inline constexpr std::string_view kGatekeeperAlias = "gatekeeper";
inline constexpr std::string_view kCorridorUrl = "http://gatekeeper:3128";
inline constexpr std::string_view kNoProxy = "gatekeeper,localhost,127.0.0.1";
inline constexpr std::string_view kWindowBase = "http://gatekeeper:8080/k/";  // + key
inline constexpr std::string_view kWindowEnv = "GATEKEEPER_WINDOW";
// Engine ≥ 28 knows gateway_mode_ipv4; older engines (20.10 here) only inhibit_ipv4. Either way
// verify checks the effect, because Engine 26 silently accepted the newer option
// (docs/reference-behaviour.md#networks).
inline constexpr std::string_view kOptIsolated = "com.docker.network.bridge.gateway_mode_ipv4=isolated";
inline constexpr std::string_view kOptInhibit = "com.docker.network.bridge.inhibit_ipv4=true";
// Podman (engine.h) differs where Docker's flags have no Podman equivalent:
// - its log drivers have no `local`: k8s-file with a 10 MB size cap (conmon truncates at the cap);
// - rootful Podman sets RLIMIT_NOFILE and RLIMIT_NPROC to 1048576 and 4194304 unless told, which a
//   host whose own hard limits are lower refuses; so both are set, below any such host's;
// - --read-only adds writable tmpfs at /run, /tmp and /var/tmp unless --read-only-tmpfs=false;
// - an internal network keeps the gateway address on the bridge for its DNS server (aardvark-dns),
//   so the inner network has DNS disabled, the gatekeeper a fixed address, the space an /etc/hosts
//   entry for it, and the host a DROP guard on the bridge (host_guard.h) in place of Docker's
//   isolated gateway mode;
// - the space gets no resolv.conf (`--dns none`): Podman would copy the host's resolvers into it,
//   which the space cannot reach and should not learn;
// - netavark leaves IPv6 on (a link-local address on eth0) where Docker turns it off for a network
//   created with --ipv6=false, so the space's sysctls turn it off (all: every interface, lo's ::1
//   too; default: any interface added later).
inline constexpr std::string_view kPodmanSpaceSysctls[] = {"net.ipv6.conf.all.disable_ipv6=1",
                                                           "net.ipv6.conf.default.disable_ipv6=1"};
inline constexpr std::string_view kPodmanLogDriver = "k8s-file";
inline constexpr std::string_view kPodmanLogSize =
    "10MB";  // what podman inspect reports for max-size=10m
inline constexpr std::int64_t kPodmanNofile = 16384;
inline constexpr std::int64_t kPodmanNproc =
    16384;  // per uid; each space is capped at kPidsLimit first

struct Names {
  std::string space, gatekeeper, inner, outer, home, work;
};
Names names_for(std::string_view id);

struct SpaceSpec {
  std::string id;       // 12 lowercase hex
  std::string owner;    // installation id
  std::string name;     // display name
  std::string created;  // ISO 8601 UTC
  std::string space_image;
  std::string gatekeeper_image;   // sha256:<hex>
  std::string seccomp_space;      // profile file paths
  std::string seccomp_gatekeeper;
  std::int64_t memory_bytes = kDefaultSpaceMemory;
  std::int64_t nano_cpus = kNanoCpusPerCpu;  // the space's CPU quota (default_space_nano_cpus)
  // Bounded disk (loop_disk.h): each volume's size and the loop device holding its image.
  std::int64_t disk_bytes = 0;
  int home_loop = -1, work_loop = -1;
  std::string window_key;  // 64 hex; not a secret from the agent
  std::vector<std::string> command;  // empty: the image's own
  int engine_major = 0;
  // Extra ranges the gatekeeper refuses (`serve --block`): by default the place's own host
  // addresses that the gatekeeper's table would call public, so open mode cannot reach the
  // host's own services on 443 by a name that resolves to them.
  std::vector<std::string> blocked_ranges;
  // TEST ONLY (PlaceOptions::unsafe_test_dns_server): the resolver the gatekeeper asks instead of
  // the place's (`serve --dns-server`). Empty in every space the CLI makes.
  std::string unsafe_test_dns_server;
  // A `docker --env-file` holding GATEKEEPER_WINDOW; when set, the key is not in the argv.
  std::string env_file;
  // The networks' subnets (controller/subnets.h); empty: the engine picks from its own pools.
  std::string inner_subnet, outer_subnet;
  EngineKind engine = EngineKind::kDocker;
  // Podman: the gatekeeper's fixed address on the inner network (the space's /etc/hosts entry).
  std::string gatekeeper_inner_ip;
};

// The host's own interface addresses that policy::classify calls public, as "/32" or "/128"
// ranges (at most policy::kMaxOperatorRanges): what a local place's gatekeeper blocks by default.
std::vector<std::string> host_public_ranges();
// Half the place's cores, at least one (a 1-core place gives the space that core; the gatekeeper's
// weight still wins it back under contention).
std::int64_t default_space_nano_cpus(std::int64_t host_cpus);
// "1", "1.5", "0.25": at most three decimals; nullopt for anything else.
std::optional<std::int64_t> parse_cpus(std::string_view text);
std::string cpus_text(std::int64_t nano_cpus);

bool is_space_id(std::string_view id);
bool is_owner(std::string_view owner);

std::vector<std::pair<std::string, std::string>> labels_for(const SpaceSpec& spec, Role role);
std::vector<std::string> space_environment(const SpaceSpec& spec);

// Flags every other container this controller runs on the engine needs (probes, the escape run's
// listeners): Podman's rlimits (see kPodmanNofile); nothing on Docker.
std::vector<std::string> engine_run_flags(EngineKind engine);

std::vector<std::string> inner_network_argv(const SpaceSpec& spec);
std::vector<std::string> outer_network_argv(const SpaceSpec& spec);
std::vector<std::string> volume_argv(const SpaceSpec& spec, Role role);
std::vector<std::string> gatekeeper_create_argv(const SpaceSpec& spec, std::string_view inner_subnet);
// Podman: the second host address of an IPv4 /N subnet (the first is the bridge's gateway), "" when
// the subnet is not IPv4 or too small.
std::string podman_gatekeeper_ip(std::string_view subnet);
// The gatekeeper's command after its image, without its `--block RANGE` pairs (verify compares
// this prefix exactly and allows only `--block` pairs after it). `unsafe_test_dns_server`: see
// SpaceSpec; empty outside the escape runner's twin.
std::vector<std::string> gatekeeper_command(std::string_view inner_subnet,
                                            std::string_view unsafe_test_dns_server = {});
std::vector<std::string> space_create_argv(const SpaceSpec& spec);
std::string work_path(std::string_view id);  // /spaces/<id>
// A fresh volume mounted where the image has no directory (/spaces/<id>) belongs to root, and
// the space user could not write its workspace. `docker create` (never started: no process, no
// capability) with the work volume at the image's /spaces makes the engine copy that directory's
// owner and mode onto the empty volume; the caller removes the container again. An image without
// a /spaces owned by its user leaves the volume root's (fs.writable-workspace then FAILs).
std::vector<std::string> work_volume_owner_argv(const SpaceSpec& spec);

}  // namespace controller
