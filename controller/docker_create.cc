// DockerPlace create, start and stop: create → verify → start, gatekeeper first
// (docs/reference-behaviour.md#create-start-and-stop-order).
#include <chrono>
#include <ctime>
#include <future>

#include "controller/docker_place.h"
#include "controller/gatekeeper_channel.h"
#include "controller/host_guard.h"
#include "controller/inspect_json.h"
#include "controller/podman_inspect.h"
#include "controller/signals.h"
#include "controller/text.h"

namespace controller {

using nlohmann::json;

namespace {

std::string now_iso() {
  char buffer[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string window_url_of(const json& container) {
  const json& env = inspect::member(inspect::member(container, "Config"), "Env");
  if (!env.is_array()) return {};
  const std::string prefix = std::string(kWindowEnv) + "=";
  for (const json& e : env) {
    if (e.is_string() && e.get<std::string>().rfind(prefix, 0) == 0) {
      return e.get<std::string>().substr(prefix.size());
    }
  }
  return {};
}

}  // namespace

Result<void> DockerPlace::start_verified(const std::string& id, const Verified& verified,
                                         const std::string& window_key,
                                         const std::function<void()>& space_running) {
  const Names n = names_for(id);
  if (verified.gatekeeper_id.empty()) {
    return fail(Code::kVerifyFailed, "start " + n.gatekeeper + ": verify found no gatekeeper ID");
  }
  if (verified.space_id.empty()) {
    return fail(Code::kVerifyFailed, "start " + n.space + ": verify found no space ID");
  }
  Result<std::string> s =
      cli_.run({"start", "--", verified.gatekeeper_id}, n.gatekeeper, kChangeTimeout);
  if (!s) return s.error();
  // Both IDs were just proved ours by verify: the execs below need no inspect of their own.
  remember_container(id, Role::kGatekeeper, verified.gatekeeper_id);
  remember_container(id, Role::kSpace, verified.space_id);
  // The gatekeeper runs, so the space may start (it never runs without its gatekeeper). Until the
  // gatekeeper answers /health and holds the window key, it refuses what the space asks (its
  // allowlist starts empty, its window without a key refuses): the space's start need not wait
  // for those two execs. Both calls have ended before this returns.
  auto space_started = std::async(std::launch::async, [&] {
    Result<std::string> started =
        cli_.run({"start", "--", verified.space_id}, n.space, kChangeTimeout);
    if (started && space_running) space_running();
    return started;
  });
  Result<void> ready = wait_gatekeeper_ready(*this, id);
  if (ready) ready = deliver_window_key(*this, id, window_key);
  const Result<std::string> space = space_started.get();
  if (!ready) return ready;
  if (!space) return space.error();
  return {};
}

Result<SpaceSummary> DockerPlace::create(const CreateRequest& request) {
  SpaceSpec spec;
  if (!request.id.empty() && !is_space_id(request.id)) {
    return fail(Code::kInvalidArgument, "space create: an id is 12 lowercase hex digits");
  }
  spec.id = request.id.empty() ? random_hex(6) : request.id;
  auto progress = [&](std::string_view step) {
    if (request.progress) request.progress(step);
  };
  progress("resolving_images");
  spec.owner = options_.owner;
  spec.name = request.name;
  spec.created = now_iso();
  spec.window_key = random_hex(32);
  // The engine's host's own public addresses are blocked for the corridor: this machine's for a
  // local engine; a remote engine's host tells its own (remote_host_public_ranges).
  if (engine_is_local(options_.engine)) {
    spec.blocked_ranges = host_public_ranges();
  } else {
    Result<std::string> probe_image = pinned_image(options_.space_image_file);
    if (!probe_image) return probe_image.error();
    Result<std::vector<std::string>> ranges = remote_host_public_ranges(*probe_image);
    if (!ranges) return ranges.error();
    spec.blocked_ranges = *ranges;
  }
  spec.unsafe_test_dns_server = options_.unsafe_test_dns_server;
  spec.blocked_ranges.insert(spec.blocked_ranges.end(), options_.unsafe_test_blocked_ranges.begin(),
                             options_.unsafe_test_blocked_ranges.end());
  spec.seccomp_space = options_.seccomp_space;
  spec.seccomp_gatekeeper = options_.seccomp_gatekeeper;
  spec.memory_bytes = request.memory_bytes > 0 ? request.memory_bytes : kDefaultSpaceMemory;
  if (spec.memory_bytes < kMinSpaceMemory) {
    return fail(Code::kInvalidArgument, "space create: memory below 64 MiB");
  }
  spec.disk_bytes = request.disk_bytes > 0 ? request.disk_bytes : kDefaultDiskBytes;
  if (spec.disk_bytes < kMinDiskBytes || spec.disk_bytes > kMaxDiskBytes) {
    return fail(Code::kInvalidArgument, "space create: --disk is outside 64 MiB to 16 TiB");
  }
  if (!is_display_name(spec.name)) {
    return fail(Code::kInvalidArgument,
                "space create: a name is 1 to 100 bytes of UTF-8 without control characters");
  }
  if (!request.space_image.empty() && !is_image_reference(request.space_image)) {
    return fail(Code::kInvalidArgument,
                "space create: --image " + terminal_safe(request.space_image) +
                    " is not an image reference (name[:tag][@digest] or sha256:<64 hex>)");
  }
  // Independent engine queries at once: the engine's version and cores, both pinned images, and
  // the subnet allocation's reads of the engine's networks.
  auto facts_query = std::async(std::launch::async, [this] { return engine_facts(); });
  // A remote engine's first answer sets the round trip that scales every later deadline
  // (engine_facts): the other queries wait for it there.
  if (!engine_is_local(options_.engine)) facts_query.wait();
  auto gk_query = std::async(std::launch::async,
                             [this] { return pinned_image(options_.gatekeeper_image_file); });
  // The pinned space image's inspect also reads its environment's names, which verify needs.
  auto space_query = std::async(std::launch::async, [this, wanted = request.space_image.empty()] {
    return wanted ? ensured_image(options_.space_image_file) : Result<EnsuredImage>(EnsuredImage{});
  });
  // It writes the space's record (under the pool lock); nothing else here does until the networks
  // are made, which wait for it. A future's destructor waits, so no early return leaves it running.
  std::future<Result<SpaceSubnets>> allocation;
  if (request.allocate_subnets) {
    allocation = std::async(std::launch::async, [&request] { return request.allocate_subnets(); });
  }
  Result<EngineFacts> facts = facts_query.get();
  if (!facts) return facts.error();
  spec.engine_major = facts->major;
  spec.engine = options_.engine.kind;
  if (podman()) {
    Result<std::string> rootless =
        cli_.run({"info", "--format", "{{.Host.Security.Rootless}}"}, "", kProbeTimeout);
    if (!rootless) return rootless.error();
    if (rootless->rfind("false", 0) != 0) {
      return fail(Code::kPlaceUnusable, "space create: " + rootless_podman_refusal());
    }
  }
  const std::int64_t cpus = facts->cpus;
  spec.nano_cpus = request.nano_cpus > 0 ? request.nano_cpus : default_space_nano_cpus(cpus);
  if (spec.nano_cpus < kMinSpaceNanoCpus || spec.nano_cpus > cpus * kNanoCpusPerCpu) {
    return fail(Code::kInvalidArgument, "space create: --cpus " + cpus_text(spec.nano_cpus) +
                                            " is outside 0.1 to the place's " +
                                            std::to_string(cpus) + " CPUs");
  }
  Result<std::string> gk_image = gk_query.get();
  if (!gk_image) return gk_image.error();
  spec.gatekeeper_image = *gk_image;
  std::optional<std::set<std::string>> space_image_env;
  if (request.space_image.empty()) {
    Result<EnsuredImage> pin = space_query.get();
    if (!pin) return pin.error();
    spec.space_image = pin->id;
    space_image_env = pin->env_names;
  } else {
    spec.space_image = request.space_image;
  }
  spec.command = request.command;
  if (spec.command.empty() && request.space_image.empty()) spec.command = {"sleep", "2147483647"};
  for (const std::string* profile : {&spec.seccomp_space, &spec.seccomp_gatekeeper}) {
    if (Result<std::string> p = read_small_file(*profile); !p) {
      return fail(Code::kPlaceUnusable, "seccomp profile " + *profile + ": missing");
    }
  }
  // Each image is resolved to its ID before anything is created, and the ID is what is used: a
  // tag moved meanwhile cannot change what the space runs.
  for (std::string* image : {&spec.gatekeeper_image, &spec.space_image}) {
    // A pin came back from ensure_pinned_image as the ID the engine holds: nothing to resolve.
    if (image == &spec.gatekeeper_image || request.space_image.empty()) continue;
    Result<std::string> r = image_id(*image);
    if (!r) {
      return fail(r.error().code == Code::kCommandFailed ? Code::kImageMissing : r.error().code,
                  r.error().message);
    }
    *image = *r;
  }

  const Names n = names_for(spec.id);
  auto rollback = [&](Failure failure) -> Failure {
    if (Result<void> r = remove_everything(spec.id, true); !r) {
      failure.message += "; rollback: " + r.error().message;
    }
    return failure;
  };
  auto step = [&](const std::vector<std::string>& args,
                  const std::string& what) -> Result<std::string> {
    // The volumes' half and the gatekeeper's run at once: after a stop signal, the half that was
    // not in a call when it came starts nothing new (the other's call was killed by it).
    if (stop_requests() > 0) {
      return fail(Code::kInterrupted, cli_.program() + " " + args[0] + " " + what +
                                          ": stopped by a signal to spacectl");
    }
    return cli_.run(args, what, kChangeTimeout);
  };
  spec.inner_subnet = request.inner_subnet;
  spec.outer_subnet = request.outer_subnet;
  if (allocation.valid()) {
    Result<SpaceSubnets> subnets = allocation.get();
    if (!subnets) return subnets.error();
    spec.inner_subnet = subnets->inner;
    spec.outer_subnet = subnets->outer;
  }
  progress("creating_networks");
  // The two networks and the volumes depend on nothing of each other: made at once. Every call
  // has ended before a rollback starts (the futures are waited for first).
  const SpaceSpec network_spec = spec;  // the volume half writes the loop numbers into spec
  auto inner_made = std::async(std::launch::async,
                               [&] { return step(inner_network_argv(network_spec), n.inner); });
  auto outer_made = std::async(std::launch::async,
                               [&] { return step(outer_network_argv(network_spec), n.outer); });
  progress("creating_volumes");
  // The volumes' half (disk images, volumes, the work volume's owner) runs on its own thread and
  // writes only `spec`'s disk fields; the gatekeeper needs no volume, so it is made (on this
  // thread, from its own copy of the spec) as soon as the networks exist. Both halves have ended
  // before a rollback starts.
  auto volumes_made = std::async(std::launch::async, [&]() -> Result<void> {
    if (Result<void> r = make_disks(spec); !r) return r;
    auto home_made = std::async(std::launch::async,
                                [&] { return step(volume_argv(spec, Role::kHomeVolume), n.home); });
    Result<std::string> work = step(volume_argv(spec, Role::kWorkVolume), n.work);
    Result<std::string> home = home_made.get();
    if (!home) return home.error();
    if (!work) return work.error();
    // The work volume takes the owner of the image's /spaces (spec.h work_volume_owner_argv).
    if (Result<std::string> r = step(work_volume_owner_argv(spec), n.space + "-volume-owner"); !r) {
      return r.error();
    }
    // Podman copies the image's directory onto an empty volume when it mounts it (init), not at
    // create.
    if (podman()) {
      if (Result<std::string> r =
              step({"init", "--", n.space + "-volume-owner"}, n.space + "-volume-owner");
          !r) {
        return r.error();
      }
    }
    if (Result<std::string> r =
            step({"rm", "--", n.space + "-volume-owner"}, n.space + "-volume-owner");
        !r) {
      return r.error();
    }
    return {};
  });
  SpaceSpec gatekeeper_spec = network_spec;
  const Result<void> gatekeeper_made = [&]() -> Result<void> {
    const Result<std::string> inner_network = inner_made.get();
    const Result<std::string> outer_network = outer_made.get();
    if (!inner_network) return inner_network.error();
    if (!outer_network) return outer_network.error();
    // An allocated subnet is known; only one the engine picked is read back (verify compares the
    // gatekeeper's command with the network as inspected either way). Podman's network is read
    // regardless: its gateway and its bridge's name (the host guard) come from there.
    std::string subnet = gatekeeper_spec.inner_subnet, gateway;
    json inner_doc = json::array();
    if (subnet.empty() || podman()) {
      Result<json> inner = inspect_network(n.inner);
      if (!inner) return inner.error();
      inner_doc = std::move(*inner);
      const json& ipam = inner_doc.empty()
                             ? json()
                             : inspect::member(inspect::member(inner_doc[0], "IPAM"), "Config");
      if (ipam.is_array() && !ipam.empty()) {
        if (subnet.empty()) subnet = inspect::str(inspect::member(ipam[0], "Subnet"));
        gateway = inspect::str(inspect::member(ipam[0], "Gateway"));
      }
    }
    if (subnet.empty() || subnet.find(':') != std::string::npos) {
      return fail(Code::kCommandFailed,
                  cli_.program() + " network inspect " + n.inner + ": no IPv4 subnet");
    }
    if (podman()) {
      // The gatekeeper's fixed address, and the host guard on the bridge before anything runs
      // there (the volume owner runs without a network).
      gatekeeper_spec.gatekeeper_inner_ip = podman_gatekeeper_ip(subnet);
      if (gatekeeper_spec.gatekeeper_inner_ip.empty() ||
          gatekeeper_spec.gatekeeper_inner_ip == gateway) {
        return fail(Code::kCommandFailed, "podman network inspect " + n.inner + ": subnet " +
                                              subnet + " has no address for the gatekeeper");
      }
      const json network = inner_doc.empty() ? json() : inner_doc[0];
      const std::string bridge = inspect::str(
          inspect::member(inspect::member(network, "Options"), "com.docker.network.bridge.name"));
      if (Result<void> g = guard_add(bridge, spec.id); !g) return g;
    }
    // The gatekeeper first, so it holds the first address on the inner subnet
    // (docs/reference-behaviour.md#networks).
    progress("creating_gatekeeper");
    if (Result<std::string> r = step(gatekeeper_create_argv(gatekeeper_spec, subnet), n.gatekeeper);
        !r) {
      return r.error();
    }
    if (Result<std::string> r =
            step({"network", "connect", "--", n.outer, n.gatekeeper}, n.gatekeeper);
        !r) {
      return r.error();
    }
    return {};
  }();
  const Result<void> volumes = volumes_made.get();
  if (!gatekeeper_made) return rollback(gatekeeper_made.error());
  if (!volumes) return rollback(volumes.error());
  spec.gatekeeper_inner_ip = gatekeeper_spec.gatekeeper_inner_ip;  // Podman: the space's /etc/hosts
  {
    // The window key reaches the space through an env file (0600, in a 0700 directory, removed
    // right after), never through an argv that every host process can read.
    progress("creating_space");
    Result<EnvFile> env = EnvFile::write(
        {std::string(kWindowEnv) + "=" + std::string(kWindowBase) + spec.window_key});
    if (!env) return rollback(env.error());
    spec.env_file = env->path();
    if (Result<std::string> r = step(space_create_argv(spec), n.space); !r) {
      return rollback(r.error());
    }
  }

  progress("verifying");
  Result<Verified> verified = verify_ids(spec.id, spec.space_image, space_image_env);
  if (!verified) return rollback(verified.error());
  if (!verified->differences.empty()) {
    std::string message = "space create " + spec.id + ": verify found " +
                          std::to_string(verified->differences.size()) + " difference(s):";
    for (const Difference& d : verified->differences) {
      message += " [" + d.check + "] " + d.message + ";";
    }
    return rollback(fail(Code::kVerifyFailed, message));
  }
  // By the IDs verify inspected: no name-based gap between the check and the use.
  progress("starting");
  if (Result<void> r = start_verified(spec.id, *verified, spec.window_key, request.space_running);
      !r) {
    return rollback(r.error());
  }

  SpaceSummary summary;
  summary.id = spec.id;
  summary.name = spec.name;
  summary.created = spec.created;
  summary.space_state = "running";
  summary.gatekeeper_state = "running";
  summary.window_url = std::string(kWindowBase) + spec.window_key;
  return summary;
}

Result<void> DockerPlace::stop(const std::string& id) {
  forget_containers(id);
  // The space first, so it never runs without its gatekeeper
  // (docs/reference-behaviour.md#create-start-and-stop-order).
  for (Role role : {Role::kSpace, Role::kGatekeeper}) {
    Result<json> c = owned_container(id, role);
    if (!c) {
      if (c.error().code == Code::kSpaceNotFound && role == Role::kGatekeeper) continue;
      return c.error();
    }
    const std::string name =
        role == Role::kGatekeeper ? names_for(id).gatekeeper : names_for(id).space;
    if (Result<std::string> r =
            cli_.run({"stop", "--time", "10", "--", name}, name, kChangeTimeout);
        !r) {
      return r.error();
    }
  }
  return {};
}

Result<void> DockerPlace::start(const std::string& id) {
  Result<json> space = owned_container(id, Role::kSpace);
  if (!space) return space.error();
  // After a reboot the loop devices are gone: attach each image again at its recorded number.
  if (Result<void> r = attach_disks(id); !r) return r;
  if (podman()) {
    // Only start repairs: the host guard is lost when the host's rules are flushed (a reboot).
    Result<json> inner = inspect_network(names_for(id).inner);
    if (!inner) return inner.error();
    if (!inner->empty()) {
      if (Result<void> g =
              guard_add((*inner)[0]["Options"].value("com.docker.network.bridge.name", ""), id);
          !g) {
        return g;
      }
    }
  }
  // A space that fails verify is never started (docs/decisions.md#create-verify-start); what is
  // started is what verify inspected (by ID).
  Result<Verified> verified = verify_ids(id);
  if (!verified) return verified.error();
  if (!verified->differences.empty()) {
    std::string message = "space start " + id + ": verify found differences:";
    for (const Difference& d : verified->differences) {
      message += " [" + d.check + "] " + d.message + ";";
    }
    return fail(Code::kVerifyFailed, message);
  }
  const std::string url = window_url_of(*space);
  const std::string key =
      url.size() > kWindowBase.size() ? url.substr(kWindowBase.size()) : std::string();
  return start_verified(id, *verified, key);
}

}  // namespace controller
