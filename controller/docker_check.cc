// DockerPlace::check: is this place usable, proved by trying
// (docs/architecture.md#the-place-contract). Beyond the reference's check (which only read the
// engine version, docs/reference-behaviour.md#docker-place): a probe on a
// throwaway isolated internal network must fail to reach a listener this process opens on the
// host at every host address, while a probe on the outer side (a normal bridge built like a
// space's outer network, where the gatekeeper sits) reaches the same listener: the positive control
// that makes the negative meaningful. Every probe is an argv (`nc -w 2 ADDR PORT`), never a shell.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "controller/docker_place.h"
#include "controller/host_guard.h"
#include "policy/number.h"

namespace controller {

using nlohmann::json;

namespace {

// A TCP listener on 0.0.0.0:<ephemeral> that accepts, counts and closes every connection.
class HostListener {
 public:
  HostListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 64) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
          const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) {
            ++accepted_;
            close(c);
          }
        }
      }
    });
  }
  ~HostListener() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  HostListener(const HostListener&) = delete;
  HostListener& operator=(const HostListener&) = delete;
  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// Host addresses tried from the isolated network; one docker exec each, so a bound on the time.
constexpr std::size_t kMaxProbeAddresses = 32;

std::vector<std::string> host_ipv4_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    if (std::string(text).rfind("127.", 0) != 0) out.emplace_back(text);
  }
  freeifaddrs(list);
  return out;
}

std::string gateway_of(const json& networks) {
  if (!networks.is_array() || networks.empty()) return {};
  const json& config = networks[0]["IPAM"]["Config"];
  if (!config.is_array() || config.empty()) return {};
  return config[0].value("Gateway", "");
}

}  // namespace

std::vector<std::string> local_addresses_from_fib_trie(std::string_view text) {
  // "|-- 10.0.2.15" followed by "/32 host LOCAL": an address the kernel delivers to itself.
  std::vector<std::string> out;
  std::string last;
  std::size_t start = 0;
  while (start < text.size() && out.size() < kMaxProbeAddresses) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t b = line.find_first_not_of(" |+-");
    if (b == std::string_view::npos) continue;
    line = line.substr(b);
    if (line.rfind("/32 host LOCAL", 0) == 0) {
      in_addr a{};
      if (!last.empty() && inet_pton(AF_INET, last.c_str(), &a) == 1 &&
          last.rfind("127.", 0) != 0 && std::find(out.begin(), out.end(), last) == out.end()) {
        out.push_back(last);
      }
      continue;
    }
    const std::size_t sp = line.find(' ');
    last = std::string(line.substr(0, sp));
  }
  return out;
}

std::string rootless_podman_refusal() {
  // controller/README.md "Rootless Podman": what differs, and why this place does not run it yet.
  return "rootless Podman is not supported by this place: its networks live in the user's own "
         "network namespace "
         "(slirp4netns), where the host guard (a host INPUT rule, root only) cannot act and the "
         "isolation probe's "
         "listener is not the host's; and on a cgroup v1 host it ignores every resource limit "
         "(\"Resource limits are "
         "not supported and ignored on cgroups V1 rootless systems\")";
}

Result<CheckReport> DockerPlace::check() {
  CheckReport report;
  report.place = std::string(engine_word(options_.engine.kind));
  const auto started = std::chrono::steady_clock::now();
  Result<std::string> version = cli_.run({"version", "--format", "{{json .}}"}, "", kProbeTimeout);
  if (!version) {
    if (version.error().code == Code::kCommandFailed ||
        version.error().code == Code::kCommandTimeout) {
      return fail(Code::kPlaceUnreachable, version.error().message);
    }
    return version.error();
  }
  // One round trip, measured: later deadlines grow with it (engine.h scaled_timeout).
  const auto rt = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  if (!engine_is_local(options_.engine)) {
    cli_.set_round_trip(rt);
    report.findings.push_back("one " + cli_.program() + " call to " + options_.engine.host +
                              " took " + std::to_string(rt.count()) +
                              " ms; deadlines grow by three such round trips");
  }
  const json v = json::parse(*version, nullptr, false);
  // Podman on this machine has no server half: its client is the engine.
  const char* half = podman() ? "Client" : "Server";
  if (v.is_discarded() || !v.contains(half) || !v[half].is_object()) {
    return fail(Code::kPlaceUnreachable,
                cli_.program() + " version: the engine gave no " + std::string(half) + " section");
  }
  report.engine_version = v[half].value("Version", "");
  report.os_arch = podman() ? v[half].value("OsArch", "")
                            : v[half].value("Os", "") + "/" + v[half].value("Arch", "");
  report.findings.push_back("the " + cli_.program() + " CLI answers and the engine is " +
                            report.engine_version + " (" + report.os_arch + ")");
  Result<std::string> info =
      podman() ? cli_.run({"info", "--format",
                           "{{.Host.Security.SECCOMPEnabled}}|{{.Host.Security.Rootless}}"},
                          "", kProbeTimeout)
               : cli_.run({"info", "--format", "{{json .SecurityOptions}}"}, "", kProbeTimeout);
  if (!info) return info.error();
  report.seccomp =
      podman() ? info->rfind("true|", 0) == 0 : info->find("name=seccomp") != std::string::npos;
  report.rootless = podman() && info->find("|true") != std::string::npos;
  if (podman()) {
    report.findings.push_back(
        report.rootless ? "Podman runs rootless: containers live in a user namespace of this user"
                        : "Podman runs rootful");
    if (report.rootless) {
      report.unsupported = rootless_podman_refusal();
      report.findings.push_back(report.unsupported);
      return report;
    }
  }
  report.findings.push_back(report.seccomp ? "the engine applies seccomp profiles"
                                           : "the engine lists no seccomp support: spaces cannot be confined");
  // The gatekeeper's pin is loaded now too, so that `space create` finds it (an installed package
  // ships both images as archives next to their pins).
  if (Result<std::string> gk = pinned_image(options_.gatekeeper_image_file); gk) {
    report.findings.push_back("the pinned gatekeeper image " + *gk + " is in the engine");
  } else {
    report.findings.push_back("the pinned gatekeeper image is not usable: " + gk.error().message);
  }
  Result<std::string> image = pinned_image(options_.space_image_file);
  if (!image) {
    report.findings.push_back("host isolation not tried: " + image.error().message);
    return report;
  }
  return probe_isolation(std::move(report), *image);
}

Result<CheckReport> DockerPlace::probe_isolation(CheckReport report, const std::string& image) {
  Result<int> major = engine_major();
  if (!major) return major.error();
  // A local engine's host is this machine: the listener is ours, and it counts what reached it. A
  // remote engine's host gets a listener container on its host network instead; then the probes'
  // own exit statuses are the only count.
  const bool local = engine_is_local(options_.engine);
  std::optional<HostListener> own;
  if (local) {
    own.emplace();
    if (!own->ok()) {
      return fail(Code::kInternal, "place check: cannot open a host listener on 0.0.0.0");
    }
  }
  const std::string probe_id = random_hex(6);
  SpaceSpec spec;
  spec.id = probe_id;
  spec.owner = options_.owner;
  spec.name = "place check probe";
  spec.engine_major = *major;
  spec.engine = options_.engine.kind;
  const std::string isolated = "gk-probe-" + probe_id + "-isolated", bridge = "gk-probe-" + probe_id + "-bridge";
  // A remote listener's port: 20017 to 58267 in steps of 150 (random_hex(2) is four hex digits,
  // 0 to 65535: unreduced it named ports up to 9830267, which nc refused, and isolation was never
  // proved).
  const std::string port = std::to_string(
      local ? own->port()
            : 20000 + (policy::parse_number<unsigned>(random_hex(2), 16).value_or(0) % 256) * 150 +
                  17);
  auto accepted = [&]() { return local ? own->accepted() : 0; };
  // Both networks are built by the same argv as a space's inner and outer network, so the probe
  // tests exactly what a space gets.
  std::vector<std::string> isolated_argv = inner_network_argv(spec);
  isolated_argv.back() = isolated;
  std::vector<std::string> bridge_argv = outer_network_argv(spec);
  bridge_argv.back() = bridge;
  // A probe container: the space image's busybox nc, as unprivileged as a space (argv only).
  auto probe_run = [&](const std::string& network, const std::string& name) {
    std::vector<std::string> a{"run",
                               "--name",
                               name,
                               "--network",
                               network,
                               "--user",
                               std::string(kSpaceUser),
                               "--cap-drop",
                               "ALL",
                               "--security-opt",
                               "no-new-privileges",
                               "--read-only",
                               "--pids-limit",
                               "64",
                               "--memory",
                               "64m",
                               "--label",
                               std::string(kLabelMarker) + "=true",
                               "--label",
                               std::string(kLabelOwner) + "=" + options_.owner,
                               "--label",
                               std::string(kLabelRole) + "=" + std::string(role_word(Role::kProbe)),
                               "--label",
                               std::string(kLabelId) + "=" + probe_id};
    const std::vector<std::string> limits = engine_run_flags(options_.engine.kind);
    a.insert(a.end(), limits.begin(), limits.end());
    return a;
  };
  const std::string inside = "gk-probe-" + probe_id + "-inside", outside = "gk-probe-" + probe_id + "-outside";
  const std::string remote_listener = "gk-probe-" + probe_id + "-listener";
  auto cleanup = [&] {
    for (const std::string& name : {inside, outside, remote_listener}) {
      (void)cli_.run_raw({"rm", "--force", "--", name}, name, kChangeTimeout);
    }
    for (const std::string& name : {isolated, bridge}) {
      (void)cli_.run_raw({"network", "rm", "--", name}, name, kChangeTimeout);
    }
    if (podman()) (void)guard_remove("probe-" + probe_id);
  };
  auto failed = [&](Failure f) -> Failure {
    cleanup();
    return f;
  };
  if (Result<std::string> r = cli_.run(isolated_argv, isolated, kChangeTimeout); !r) return failed(r.error());
  if (Result<std::string> r = cli_.run(bridge_argv, bridge, kChangeTimeout); !r) return failed(r.error());
  Result<json> isolated_doc = inspect_network(isolated);
  if (!isolated_doc) return failed(isolated_doc.error());
  Result<json> bridge_doc = inspect_network(bridge);
  if (!bridge_doc) return failed(bridge_doc.error());
  if (podman()) {
    // The same guard a space's inner network gets (host_guard.h): the probe proves its effect.
    const std::string iface = isolated_doc->empty() ? std::string()
                                                    : (*isolated_doc)[0]["Options"].value(
                                                          "com.docker.network.bridge.name", "");
    if (Result<void> g = guard_add(iface, "probe-" + probe_id); !g) return failed(g.error());
    report.findings.push_back(
        "Podman keeps a host address on an internal network's bridge (" + iface +
        "); a DROP guard for it was added to the host's INPUT chain, as for every space");
  }
  std::vector<std::string> candidates;
  if (local) {
    candidates = host_ipv4_addresses();
  } else {
    // The remote host's listener: busybox nc on its host network (-ll: keep listening; Debian's
    // busybox 1.35 has no -k), as unprivileged as a probe; it also tells the host's own addresses
    // (its kernel's local routes).
    std::vector<std::string> listen = probe_run("host", remote_listener);
    listen.insert(listen.begin() + 1, "--detach");
    listen.insert(listen.end(), {"--", image, "nc", "-ll", "-p", port, "-e", "/bin/true"});
    if (Result<std::string> r = cli_.run(listen, remote_listener, kChangeTimeout); !r) {
      return failed(r.error());
    }
    Result<std::string> fib =
        cli_.run({"exec", "--", remote_listener, "cat", "/proc/net/fib_trie"}, remote_listener);
    if (!fib) return failed(fib.error());
    candidates = local_addresses_from_fib_trie(*fib);
    report.findings.push_back("the engine's host is " + options_.engine.host +
                              ": a listener container on its host network holds port " + port +
                              "; the probes' exit statuses count what reached it");
  }
  for (const std::string& g : {gateway_of(*isolated_doc), gateway_of(*bridge_doc)}) {
    if (!g.empty() && std::find(candidates.begin(), candidates.end(), g) == candidates.end()) candidates.push_back(g);
  }
  if (candidates.size() > kMaxProbeAddresses) candidates.resize(kMaxProbeAddresses);
  const std::string bridge_gateway = gateway_of(*bridge_doc);

  // Negative: one long-lived probe on the isolated network; one `nc` per host address.
  std::vector<std::string> start_inside = probe_run(isolated, inside);
  start_inside.insert(start_inside.begin() + 1, "--detach");
  start_inside.insert(start_inside.end(), {"--", image, "sleep", "300"});
  if (Result<std::string> r = cli_.run(start_inside, inside, kChangeTimeout); !r) return failed(r.error());
  std::string reached, not_run;
  for (const std::string& address : candidates) {
    Result<ProcessOutcome> o =
        cli_.run_raw({"exec", "--", inside, "nc", "-w", "2", address, port}, inside + " nc " + address, kQueryTimeout);
    if (!o) return failed(o.error());
    // busybox nc: 0 connected, 1 refused/unreachable/timed out; anything else (126/127 from docker
    // exec) means the probe itself did not run, which proves nothing.
    if (o->exited && o->exit_code == 0) {
      reached += " " + address;
    } else if (!o->exited || o->exit_code != 1) {
      not_run += " " + address + " (" + o->describe() + ")";
    }
  }
  const int after_negative = accepted();

  // Positive control: from the outer side, where the gatekeeper sits, the same listener answers.
  std::vector<std::string> run_outside = probe_run(bridge, outside);
  run_outside.insert(run_outside.begin() + 1, "--rm");
  run_outside.insert(run_outside.end(), {"--", image, "nc", "-w", "2", bridge_gateway, port});
  Result<ProcessOutcome> positive = cli_.run_raw(run_outside, outside, kChangeTimeout);
  const int after_positive = accepted();
  cleanup();
  if (!positive) return positive.error();
  const bool positive_connected = positive->exited && positive->exit_code == 0;

  std::string addresses;
  for (const std::string& c : candidates) addresses += (addresses.empty() ? "" : ", ") + c;
  report.isolation_proved = after_negative == 0 && reached.empty() && not_run.empty() && !candidates.empty();
  report.positive_control =
      !bridge_gateway.empty() && positive_connected && (!local || after_positive > after_negative);
  if (report.isolation_proved) {
    report.findings.push_back("a container on an isolated internal network could not reach a host listener on port " + port +
                              " at any of " + addresses);
  } else if (after_negative > 0 || !reached.empty()) {
    report.findings.push_back("a container on an isolated internal network reached the host listener (at" + reached +
                              "): host isolation does NOT hold");
  } else {
    report.findings.push_back("host isolation is not proved: the isolated probe did not run for" + not_run);
  }
  report.findings.push_back(report.positive_control
                                ? "a container on the outer side (a normal bridge, where the gatekeeper sits) reached the same listener at " +
                                      bridge_gateway + " (positive control)"
                                : "a container on the outer side could not reach the listener at " + bridge_gateway +
                                      " either, so the negative result proves nothing (a host firewall?): " + positive->describe());
  return report;
}

}  // namespace controller
