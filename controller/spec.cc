#include "controller/spec.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <optional>

#include "controller/loop_disk.h"
#include "policy/ranges.h"

namespace controller {

std::string_view role_word(Role role) {
  switch (role) {
    case Role::kSpace: return "space";
    case Role::kGatekeeper: return "gatekeeper";
    case Role::kInnerNetwork: return "network";
    case Role::kOuterNetwork: return "outer-network";
    case Role::kHomeVolume: return "volume-home";
    case Role::kWorkVolume: return "volume-work";
    case Role::kProbe: return "probe";
  }
  return "probe";
}

Names names_for(std::string_view id) {
  const std::string base = "gk-" + std::string(id) + "-";
  return Names{base + "space", base + "gatekeeper", base + "network",
               base + "outer-network", base + "volume-home", base + "volume-work"};
}

std::int64_t default_space_nano_cpus(std::int64_t host_cpus) {
  return std::max<std::int64_t>(1, host_cpus / 2) * kNanoCpusPerCpu;
}

std::optional<std::int64_t> parse_cpus(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  std::int64_t whole = 0, frac = 0, scale = kNanoCpusPerCpu;
  std::size_t i = 0;
  for (; i < text.size() && text[i] != '.'; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  if (i < text.size()) {
    const std::size_t digits = text.size() - i - 1;
    if (digits == 0 || digits > 3) return std::nullopt;
    for (std::size_t j = i + 1; j < text.size(); ++j) {
      if (text[j] < '0' || text[j] > '9') return std::nullopt;
      scale /= 10;
      frac += (text[j] - '0') * scale;
    }
  }
  if (whole > 1024) return std::nullopt;
  return whole * kNanoCpusPerCpu + frac;
}

std::string cpus_text(std::int64_t nano_cpus) {
  std::string out = std::to_string(nano_cpus / kNanoCpusPerCpu);
  std::int64_t frac = (nano_cpus % kNanoCpusPerCpu) / 1000000;  // three decimals
  if (frac != 0) {
    std::string f = std::to_string(1000 + frac).substr(1);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

bool is_space_id(std::string_view id) {
  if (id.size() != 12) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_owner(std::string_view owner) {
  if (owner.empty() || owner.size() > 64) return false;
  for (char c : owner) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> labels_for(const SpaceSpec& spec, Role role) {
  return {{std::string(kLabelMarker), "true"},
          {std::string(kLabelId), spec.id},
          {std::string(kLabelRole), std::string(role_word(role))},
          {std::string(kLabelOwner), spec.owner},
          {std::string(kLabelName), spec.name},
          {std::string(kLabelCreated), spec.created},
          {std::string(kLabelVersion), std::string(kControllerVersion)}};
}

namespace {

void add_labels(std::vector<std::string>& argv, const SpaceSpec& spec, Role role) {
  for (const auto& [k, v] : labels_for(spec, role)) {
    argv.push_back("--label");
    argv.push_back(k + "=" + v);
  }
}

std::string mebibytes(std::int64_t bytes) { return std::to_string(bytes) + "b"; }

// Flags common to both containers (docs/reference-behaviour.md#container-hardening). The security
// options are no-new-privileges and our own seccomp profile; AppArmor's default stays on.
void add_common_hardening(std::vector<std::string>& a, std::string_view user,
                          std::string_view seccomp_file, std::int64_t memory, EngineKind engine) {
  const std::vector<std::string> flags = {
      "--user",
      std::string(user),
      "--read-only",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--security-opt",
      "seccomp=" + std::string(seccomp_file),
      "--pids-limit",
      std::to_string(kPidsLimit),
      "--ulimit",
      std::string(kCoreUlimit),
      "--memory",
      mebibytes(memory),
      "--memory-swap",
      mebibytes(memory),  // equal: no swap on top
      "--shm-size",
      mebibytes(kShmSize),
      // Asked by name so daemons defaulting to host/shareable still give private namespaces.
      "--ipc",
      "private",
      "--cgroupns",
      "private",
      // No restart policy: a rebooted daemon leaves both stopped; start brings them up in order.
      "--restart",
      "no",
  };
  a.insert(a.end(), flags.begin(), flags.end());
  // The engine-specific part (spec.h, kPodman*).
  if (engine == EngineKind::kPodman) {
    a.insert(a.end(), {"--read-only-tmpfs=false", "--log-driver", std::string(kPodmanLogDriver),
                       "--log-opt", "max-size=" + std::string(kLogMaxSize)});
    const std::vector<std::string> limits = engine_run_flags(engine);
    a.insert(a.end(), limits.begin(), limits.end());
  } else {
    a.insert(a.end(), {"--log-driver", std::string(kLogDriver), "--log-opt",
                       "max-size=" + std::string(kLogMaxSize), "--log-opt",
                       "max-file=" + std::string(kLogMaxFile), "--log-opt",
                       "compress=" + std::string(kLogCompress)});
  }
}

}  // namespace

std::vector<std::string> space_environment(const SpaceSpec& spec) {
  const std::string proxy(kCorridorUrl);
  // Lower case is mandatory: curl ignores upper-case HTTP_PROXY (httpoxy);
  // docs/reference-behaviour.md#space-environment. Node 22/24 ignore the proxy variables without
  // NODE_USE_ENV_PROXY=1.
  return {"HOME=" + std::string(kHomePath),
          "HTTPS_PROXY=" + proxy, "https_proxy=" + proxy,
          "HTTP_PROXY=" + proxy, "http_proxy=" + proxy,
          "NO_PROXY=" + std::string(kNoProxy), "no_proxy=" + std::string(kNoProxy),
          "NODE_USE_ENV_PROXY=1",
          std::string(kWindowEnv) + "=" + std::string(kWindowBase) + spec.window_key};
}

std::vector<std::string> engine_run_flags(EngineKind engine) {
  switch (engine) {
    case EngineKind::kDocker:
    case EngineKind::kDockerSsh:
      return {};
    case EngineKind::kPodman:
      return {"--ulimit",
              "nofile=" + std::to_string(kPodmanNofile) + ":" + std::to_string(kPodmanNofile),
              "--ulimit",
              "nproc=" + std::to_string(kPodmanNproc) + ":" + std::to_string(kPodmanNproc)};
  }
  return {};
}

std::vector<std::string> inner_network_argv(const SpaceSpec& spec) {
  std::vector<std::string> a = {"network", "create",     "--driver",
                                "bridge",  "--internal", "--ipv6=false"};
  if (spec.engine == EngineKind::kPodman) {
    a.push_back(
        "--disable-dns");  // no DNS server on the bridge: the host guard drops everything there
  } else {
    a.insert(a.end(), {"--opt", std::string(spec.engine_major >= 28 ? kOptIsolated : kOptInhibit)});
  }
  if (!spec.inner_subnet.empty()) a.insert(a.end(), {"--subnet", spec.inner_subnet});
  add_labels(a, spec, Role::kInnerNetwork);
  a.insert(a.end(), {"--", names_for(spec.id).inner});
  return a;
}

std::vector<std::string> outer_network_argv(const SpaceSpec& spec) {
  // Never --internal: it is the corridor's way out. One per space, so no gatekeeper sees another
  // space's traffic (docs/reference-behaviour.md#networks).
  std::vector<std::string> a = {"network", "create", "--driver", "bridge", "--ipv6=false"};
  if (!spec.outer_subnet.empty()) a.insert(a.end(), {"--subnet", spec.outer_subnet});
  add_labels(a, spec, Role::kOuterNetwork);
  a.insert(a.end(), {"--", names_for(spec.id).outer});
  return a;
}

std::vector<std::string> volume_argv(const SpaceSpec& spec, Role role) {
  // A `local` volume on the space's own ext4 image: the kernel bounds it (loop_disk.h).
  const int loop = role == Role::kHomeVolume ? spec.home_loop : spec.work_loop;
  std::vector<std::string> a = {"volume", "create", "--driver", "local",
                                "--opt", "type=" + std::string(kDiskFsType),
                                "--opt", "device=" + loop_device(loop),
                                "--opt", "o=" + std::string(kVolumeMountOptions)};
  add_labels(a, spec, role);
  a.insert(a.end(), {"--label", std::string(kLabelDisk) + "=" + std::to_string(spec.disk_bytes)});
  const Names n = names_for(spec.id);
  a.insert(a.end(), {"--", role == Role::kHomeVolume ? n.home : n.work});
  return a;
}

std::vector<std::string> gatekeeper_create_argv(const SpaceSpec& spec, std::string_view inner_subnet) {
  const Names n = names_for(spec.id);
  // No --init: the gatekeeper forks nothing, handles SIGTERM itself as pid 1, and its seccomp
  // profile kills fork() (docker-init's fork of the child would be killed).
  std::vector<std::string> a = {"create", "--name", n.gatekeeper};
  add_common_hardening(a, kGatekeeperUser, spec.seccomp_gatekeeper, kGatekeeperMemory, spec.engine);
  a.insert(a.end(), {"--cpu-shares", std::to_string(kGatekeeperCpuShares)});
  // Docker refuses --network-alias with two --network; the outer one is connected afterwards.
  if (spec.engine == EngineKind::kPodman) {
    a.insert(a.end(), {"--network", n.inner + ":ip=" + spec.gatekeeper_inner_ip});
  } else {
    a.insert(a.end(), {"--network", n.inner, "--network-alias", std::string(kGatekeeperAlias)});
  }
  add_labels(a, spec, Role::kGatekeeper);
  a.insert(a.end(), {"--", spec.gatekeeper_image});
  const std::vector<std::string> command =
      gatekeeper_command(inner_subnet, spec.unsafe_test_dns_server);
  a.insert(a.end(), command.begin(), command.end());
  for (const std::string& range : spec.blocked_ranges) a.insert(a.end(), {"--block", range});
  return a;
}

std::string podman_gatekeeper_ip(std::string_view subnet) {
  const std::size_t slash = subnet.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string base(subnet.substr(0, slash));
  in_addr a{};
  if (inet_pton(AF_INET, base.c_str(), &a) != 1) return {};
  int prefix = 0;
  for (const char c : subnet.substr(slash + 1)) {
    if (c < '0' || c > '9' || prefix > 32) return {};
    prefix = prefix * 10 + (c - '0');
  }
  if (prefix < 1 || prefix > 29) return {};  // a /30 has two host addresses: the gateway's and one
  const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  const std::uint32_t address = (ntohl(a.s_addr) & mask) + 2;
  in_addr out{};
  out.s_addr = htonl(address);
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &out, text, sizeof text);
  return text;
}

std::vector<std::string> gatekeeper_command(std::string_view inner_subnet,
                                            std::string_view unsafe_test_dns_server) {
  std::vector<std::string> command = {"serve", "--inner-subnet", std::string(inner_subnet)};
  if (!unsafe_test_dns_server.empty()) {
    command.insert(command.end(), {"--dns-server", std::string(unsafe_test_dns_server)});
  }
  return command;
}

std::string work_path(std::string_view id) { return std::string(kWorkParent) + "/" + std::string(id); }

std::vector<std::string> work_volume_owner_argv(const SpaceSpec& spec) {
  const Names n = names_for(spec.id);
  // Labelled like the space's other objects, so a rollback's label sweep also removes it.
  // Never started, yet hardened like the space: every container this controller creates is.
  std::vector<std::string> a = {"create", "--name", n.space + "-volume-owner"};
  add_common_hardening(a, kSpaceUser, spec.seccomp_space, spec.memory_bytes, spec.engine);
  a.insert(a.end(), {"--network", "none", "--mount", "type=volume,src=" + n.work + ",dst=" + std::string(kWorkParent)});
  add_labels(a, spec, Role::kProbe);
  // A command only so images without CMD can be created; the container is never started.
  a.insert(a.end(), {"--", spec.space_image, "true"});
  return a;
}

std::vector<std::string> space_create_argv(const SpaceSpec& spec) {
  const Names n = names_for(spec.id);
  std::vector<std::string> a = {"create", "--name", n.space, "--init"};
  add_common_hardening(a, kSpaceUser, spec.seccomp_space, spec.memory_bytes, spec.engine);
  if (spec.engine == EngineKind::kPodman) {
    // spec.h (Podman): the gatekeeper by /etc/hosts, no resolv.conf (no DNS server exists for
    // the space, so none is named; the host's own resolvers are not written in), IPv6 off on
    // every interface of the space (Docker turns it off itself on an IPv4-only network).
    a.insert(a.end(), {"--add-host", std::string(kGatekeeperAlias) + ":" + spec.gatekeeper_inner_ip,
                       "--dns", "none"});
    for (const std::string_view sysctl : kPodmanSpaceSysctls) {
      a.insert(a.end(), {"--sysctl", std::string(sysctl)});
    }
  }
  a.insert(a.end(),
           {"--cpus", cpus_text(spec.nano_cpus), "--cpu-shares", std::to_string(kSpaceCpuShares),
            "--blkio-weight", std::to_string(kSpaceBlkioWeight)});
  a.insert(a.end(), {"--tmpfs", "/tmp:" + std::string(kSpaceTmpfs), "--network", n.inner, "--mount",
                     "type=volume,src=" + n.home + ",dst=" + std::string(kHomePath), "--mount",
                     "type=volume,src=" + n.work + ",dst=" + work_path(spec.id)});
  const std::string window_var = std::string(kWindowEnv) + "=";
  for (const std::string& e : space_environment(spec)) {
    if (!spec.env_file.empty() && e.rfind(window_var, 0) == 0) continue;  // in the env file
    a.push_back("--env");
    a.push_back(e);
  }
  if (!spec.env_file.empty()) a.insert(a.end(), {"--env-file", spec.env_file});
  add_labels(a, spec, Role::kSpace);
  a.push_back("--");  // the image is never read as a flag
  a.push_back(spec.space_image);
  a.insert(a.end(), spec.command.begin(), spec.command.end());
  return a;
}

std::vector<std::string> host_public_ranges() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr && out.size() < policy::kMaxOperatorRanges; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    const int family = a->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                                        : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
    if (inet_ntop(family, raw, text, sizeof text) == nullptr) continue;
    const std::optional<policy::Address> address = policy::parse_answer(text);
    if (!address || policy::classify(*address).blocked) continue;  // the table refuses it already
    const std::string range = address->to_string() + (address->is_v4() ? "/32" : "/128");
    if (std::find(out.begin(), out.end(), range) == out.end()) out.push_back(range);
  }
  freeifaddrs(list);
  return out;
}

}  // namespace controller
