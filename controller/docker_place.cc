#include "controller/docker_place.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <future>
#include <map>
#include <sstream>

#include "controller/gatekeeper_channel.h"
#include "controller/host_guard.h"
#include "controller/image_ensure.h"
#include "controller/inspect_json.h"
#include "controller/inspect_summary.h"
#include "controller/podman_inspect.h"
#include "controller/text.h"
#include "policy/address.h"
#include "policy/ranges.h"

namespace controller {

using nlohmann::json;

Result<std::string> read_small_file(const std::string& path, std::size_t cap) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Code::kImageMissing, "read " + path + ": cannot open");
  std::string text(cap + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(cap + 1));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > cap) return fail(Code::kInvalidArgument, "read " + path + ": larger than " + std::to_string(cap) + " bytes");
  return text;
}

Result<EnvFile> EnvFile::write(const std::vector<std::string>& lines) {
  // An owned folder (controller/temp_dir.h): a spacectl killed before removing it leaves it to sweep.
  Result<OwnedTempDir> dir = OwnedTempDir::make("env");
  if (!dir) return dir.error();
  EnvFile f;
  f.dir_.emplace(std::move(*dir));
  const std::string path = f.dir_->path() + "/env";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(Code::kInternal, "open " + path + ": " + std::strerror(errno));
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok) return fail(Code::kInternal, "write " + path + ": short write");
  return f;
}

EnvFile::~EnvFile() = default;

namespace {

std::string now_iso() {
  char buffer[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string label(const json& labels, std::string_view key) {
  if (!labels.is_object()) return {};
  auto it = labels.find(std::string(key));
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string state_of(const json& container) {
  if (!container.is_object()) return "missing";
  const json& status = inspect::member(inspect::member(container, "State"), "Status");
  return status.is_string() ? status.get<std::string>() : "unknown";
}

std::string window_url_of(const json& container) {
  const json& env = inspect::member(inspect::member(container, "Config"), "Env");
  if (!env.is_array()) return {};
  const std::string prefix = std::string(kWindowEnv) + "=";
  for (const json& e : env) {
    if (e.is_string() && e.get<std::string>().rfind(prefix, 0) == 0) return e.get<std::string>().substr(prefix.size());
  }
  return {};
}

}  // namespace

std::vector<std::string> output_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

bool docker_no_such_object(const std::string& err) {
  return err.find("No such") != std::string::npos || err.find("not found") != std::string::npos ||
         err.find("removal of container") != std::string::npos;
}

DockerPlace::DockerPlace(PlaceOptions options)
    : options_(std::move(options)),
      cli_(options_.engine),
      probe_(host_has_ipv4_on),
      loop_probe_(read_loop_state),
      io_probe_(host_io_weight_supported) {}

Result<int> DockerPlace::engine_major() {
  // Podman has no server half when it runs locally: the client is the engine.
  const auto started = std::chrono::steady_clock::now();
  Result<std::string> v =
      cli_.run({"version", "--format", podman() ? "{{.Client.Version}}" : "{{.Server.Version}}"},
               "", kProbeTimeout);
  // A remote engine: this call's round trip sets every later deadline (engine.h scaled_timeout).
  if (v && !engine_is_local(options_.engine) && cli_.engine().round_trip.count() == 0)
    cli_.set_round_trip(std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started));
  if (!v) {
    if (v.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, v.error().message);
    return v.error();
  }
  return std::atoi(v->c_str());
}

Result<std::int64_t> DockerPlace::host_cpus() {
  Result<std::string> v =
      cli_.run({"info", "--format", podman() ? "{{.Host.CPUs}}" : "{{.NCPU}}"}, "", kProbeTimeout);
  if (!v) {
    if (v.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, v.error().message);
    return v.error();
  }
  std::string text = *v;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::int64_t n = 0;
  bool ok = !text.empty() && text.size() <= 5;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + (c - '0');
  }
  if (!ok || n < 1) return fail(Code::kCommandFailed, "docker info NCPU: '" + text.substr(0, 40) + "' is not a CPU count");
  return n;
}

Result<std::string> DockerPlace::read_pin(const std::string& file) const {
  Result<std::string> text = read_small_file(file, 256);
  if (!text) return fail(Code::kImageMissing, "image ID file " + file + ": missing; build it with `cmake --build <build> --target images`");
  std::string pin = *text;
  while (!pin.empty() && (pin.back() == '\n' || pin.back() == ' ')) pin.pop_back();
  bool ok = pin.size() == 71 && pin.rfind("sha256:", 0) == 0;
  for (std::size_t i = 7; ok && i < pin.size(); ++i) ok = (pin[i] >= '0' && pin[i] <= '9') || (pin[i] >= 'a' && pin[i] <= 'f');
  if (!ok) return fail(Code::kImageMissing, "image ID file " + file + ": not sha256:<64 hex>");
  return pin;
}

Result<std::string> DockerPlace::pinned_image(const std::string& file) {
  // Present, pulled by its recorded digest, or loaded from the archive next to the pin
  // (image_ensure.h); the ID must equal the pin either way.
  Result<EnsuredImage> ensured = ensure_pinned_image(cli_, file, pull_flags_for(file));
  if (!ensured) return ensured.error();
  return ensured->id;
}

std::vector<std::string> DockerPlace::pull_flags_for(const std::string& file) const {
  Result<std::string> record = read_digest_record(file);
  if (!record || record->empty()) return {};
  return engine_pull_flags(options_.engine.kind, *record);
}

Result<std::string> DockerPlace::image_id(const std::string& image) {
  Result<std::string> r = cli_.run({"image", "inspect", "--format", "{{.Id}}", "--", image}, image);
  if (!r) return r.error();
  std::string id = *r;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (id.size() == 64 && id.find(':') == std::string::npos) id = "sha256:" + id;
  if (!is_image_id(id))
    return fail(Code::kImageMissing,
                cli_.program() + " image inspect " + image + ": no sha256 image ID");
  return id;
}

std::vector<std::string> public_ranges_of(const std::vector<std::string>& addresses) {
  std::vector<std::string> out;
  for (const std::string& text : addresses) {
    if (out.size() >= policy::kMaxOperatorRanges) break;
    const std::optional<policy::Address> address = policy::parse_answer(text);
    if (!address || policy::classify(*address).blocked) continue;  // the table refuses it already
    const std::string range = address->to_string() + (address->is_v4() ? "/32" : "/128");
    if (std::find(out.begin(), out.end(), range) == out.end()) out.push_back(range);
  }
  return out;
}

std::vector<std::string> ipv6_addresses_from_if_inet6(std::string_view text) {
  // "fd000000000000000000000000000002 04 40 00 82     eth0": 32 hex digits, then the rest.
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size() && out.size() < 64) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.size() < 33 || line[32] != ' ') continue;
    std::string address;
    bool ok = true;
    for (std::size_t i = 0; i < 32 && ok; ++i) {
      const char c = line[i];
      ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      address.push_back(c);
      if (i % 4 == 3 && i != 31) address.push_back(':');
    }
    if (ok) out.push_back(address);
  }
  return out;
}

Result<std::vector<std::string>> DockerPlace::remote_host_public_ranges(const std::string& image) {
  // A throwaway probe on the engine's host network, as unprivileged as a space: the two files
  // that list the host's own addresses.
  std::vector<std::string> args = {
      "run",
      "--rm",
      "--network",
      "host",
      "--user",
      std::string(kSpaceUser),
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--read-only",
      "--pids-limit",
      "16",
      "--memory",
      "32m",
      "--label",
      std::string(kLabelMarker) + "=true",
      "--label",
      std::string(kLabelOwner) + "=" + options_.owner,
      "--label",
      std::string(kLabelRole) + "=" + std::string(role_word(Role::kProbe))};
  const std::vector<std::string> limits = engine_run_flags(options_.engine.kind);
  args.insert(args.end(), limits.begin(), limits.end());
  args.insert(args.end(), {"--", image, "cat", "/proc/net/fib_trie", "/proc/net/if_inet6"});
  Result<ProcessOutcome> o = cli_.run_raw(args, "(the engine's host addresses)", kChangeTimeout);
  if (!o) return o.error();
  // if_inet6 is missing on a host without IPv6: cat exits 1 having printed fib_trie.
  if (!o->exited || o->out.empty())
    return fail(Code::kCommandFailed,
                cli_.program() + " run (the engine's host addresses): " + o->describe());
  std::vector<std::string> addresses = local_addresses_from_fib_trie(o->out);
  for (std::string& a : ipv6_addresses_from_if_inet6(o->out)) addresses.push_back(std::move(a));
  return public_ranges_of(addresses);
}

Result<json> DockerPlace::inspect_network(const std::string& name) {
  Result<json> doc = inspect({"network", "inspect", "--", name}, name);
  if (!doc || !podman() || doc->empty()) return doc;
  json out = json::array();
  for (const json& n : *doc) out.push_back(podman_network_as_docker(n));
  // Podman's network inspect names no containers; who is attached comes from ps.
  Result<std::string> ids = cli_.run(
      {"ps", "--all", "--no-trunc", "--filter", "network=" + name, "--format", "{{.ID}}"}, name);
  if (!ids) return ids.error();
  for (const std::string& cid : output_lines(*ids))
    out[0]["Containers"][cid] = json{{"Name", cid.substr(0, 12)}};
  return out;
}

Result<json> DockerPlace::inspect_containers(const std::vector<std::string>& names_or_ids,
                                             const std::string& what) {
  std::vector<std::string> args = {"container", "inspect", "--"};
  args.insert(args.end(), names_or_ids.begin(), names_or_ids.end());
  Result<json> doc = inspect(args, what);
  if (!doc || !podman()) return doc;
  json out = json::array();
  for (const json& c : *doc) {
    PodmanInspectContext context;
    const json labels = c.is_object() && c.contains("Config") && c["Config"].is_object()
                            ? c["Config"].value("Labels", json::object())
                            : json::object();
    const std::string id = label(labels, kLabelId);
    context.primary_network = is_space_id(id) ? names_for(id).inner : std::string();
    for (const std::string* path : {&options_.seccomp_space, &options_.seccomp_gatekeeper})
      if (Result<std::string> text = read_small_file(*path); text)
        context.seccomp_profiles[*path] = *text;
    out.push_back(podman_container_as_docker(c, context));
  }
  return out;
}

Result<json> DockerPlace::inspect(const std::vector<std::string>& args, const std::string& what) {
  // A vanished object makes docker exit 1 while still printing what it found.
  Result<ProcessOutcome> o = cli_.run_raw(args, what, kQueryTimeout);
  if (!o) return o.error();
  json doc = json::parse(o->out, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    if (o->exited && o->exit_code != 0 && docker_no_such_object(o->err)) return json::array();
    return fail(Code::kCommandFailed, "docker " + args[0] + " " + what + ": " + o->describe());
  }
  return doc;
}

Result<json> DockerPlace::owned_container(const std::string& id, Role role) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  const Names n = names_for(id);
  const std::string& name = role == Role::kGatekeeper ? n.gatekeeper : n.space;
  Result<json> doc = inspect_containers({name}, name);
  if (!doc) return doc.error();
  if (doc->empty()) return fail(Code::kSpaceNotFound, "space " + id + ": container " + name + " does not exist");
  json c = (*doc)[0];
  if (!c.is_object())
    return fail(Code::kCommandFailed,
                "docker container inspect " + name + ": the answer is not an object");
  const json& labels = inspect::member(inspect::member(c, "Config"), "Labels");
  if (label(labels, kLabelMarker) != "true" || label(labels, kLabelOwner) != options_.owner ||
      label(labels, kLabelId) != id || label(labels, kLabelRole) != role_word(role))
    return fail(Code::kSpaceNotFound, "space " + id + ": container " + name + " is not ours (labels differ)");
  return c;
}

Result<std::set<std::string>> DockerPlace::image_env_names(const std::string& image) {
  Result<std::string> out = cli_.run({"image", "inspect", "--format", "{{json .Config.Env}}", "--", image}, image);
  if (!out) return fail(Code::kImageMissing, out.error().message);
  std::set<std::string> names;
  const json env = json::parse(*out, nullptr, false);
  if (env.is_array())
    for (const json& e : env)
      if (e.is_string()) names.insert(e.get<std::string>().substr(0, e.get<std::string>().find('=')));
  return names;
}

Result<void> DockerPlace::start_gatekeeper_and_key(const std::string& id, const std::string& gatekeeper_container_id,
                                                   const std::string& window_key) {
  const Names n = names_for(id);
  if (gatekeeper_container_id.empty()) return fail(Code::kVerifyFailed, "start " + n.gatekeeper + ": verify found no gatekeeper ID");
  Result<std::string> s = cli_.run({"start", "--", gatekeeper_container_id}, n.gatekeeper, kChangeTimeout);
  if (!s) return s.error();
  if (Result<void> ready = wait_gatekeeper_ready(*this, id); !ready) return ready;
  return deliver_window_key(*this, id, window_key);
}

Result<SpaceSummary> DockerPlace::create(const CreateRequest& request) {
  SpaceSpec spec;
  if (!request.id.empty() && !is_space_id(request.id))
    return fail(Code::kInvalidArgument, "space create: an id is 12 lowercase hex digits");
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
  if (spec.memory_bytes < kMinSpaceMemory) return fail(Code::kInvalidArgument, "space create: memory below 64 MiB");
  spec.disk_bytes = request.disk_bytes > 0 ? request.disk_bytes : kDefaultDiskBytes;
  if (spec.disk_bytes < kMinDiskBytes || spec.disk_bytes > kMaxDiskBytes)
    return fail(Code::kInvalidArgument, "space create: --disk is outside 64 MiB to 16 TiB");
  if (!is_display_name(spec.name))
    return fail(Code::kInvalidArgument, "space create: a name is 1 to 100 bytes of UTF-8 without control characters");
  if (!request.space_image.empty() && !is_image_reference(request.space_image))
    return fail(Code::kInvalidArgument, "space create: --image " + terminal_safe(request.space_image) +
                                            " is not an image reference (name[:tag][@digest] or sha256:<64 hex>)");
  // Independent engine queries at once: the engine's version, its cores, both pinned images.
  auto major_query = std::async(std::launch::async, [this] { return engine_major(); });
  // A remote engine's first answer sets the round trip that scales every later deadline
  // (engine_major): the other queries wait for it there.
  if (!engine_is_local(options_.engine)) major_query.wait();
  auto cpus_query = std::async(std::launch::async, [this] { return host_cpus(); });
  auto gk_query = std::async(std::launch::async,
                             [this] { return pinned_image(options_.gatekeeper_image_file); });
  auto space_query = std::async(std::launch::async, [this, wanted = request.space_image.empty()] {
    return wanted ? pinned_image(options_.space_image_file) : Result<std::string>(std::string());
  });
  Result<int> major = major_query.get();
  if (!major) return major.error();
  spec.engine_major = *major;
  spec.engine = options_.engine.kind;
  if (podman()) {
    Result<std::string> rootless =
        cli_.run({"info", "--format", "{{.Host.Security.Rootless}}"}, "", kProbeTimeout);
    if (!rootless) return rootless.error();
    if (rootless->rfind("false", 0) != 0)
      return fail(Code::kPlaceUnusable, "space create: " + rootless_podman_refusal());
  }
  Result<std::int64_t> cpus = cpus_query.get();
  if (!cpus) return cpus.error();
  spec.nano_cpus = request.nano_cpus > 0 ? request.nano_cpus : default_space_nano_cpus(*cpus);
  if (spec.nano_cpus < kMinSpaceNanoCpus || spec.nano_cpus > *cpus * kNanoCpusPerCpu)
    return fail(Code::kInvalidArgument, "space create: --cpus " + cpus_text(spec.nano_cpus) + " is outside 0.1 to the place's " +
                                            std::to_string(*cpus) + " CPUs");
  Result<std::string> gk_image = gk_query.get();
  if (!gk_image) return gk_image.error();
  spec.gatekeeper_image = *gk_image;
  if (request.space_image.empty()) {
    Result<std::string> pin = space_query.get();
    if (!pin) return pin.error();
    spec.space_image = *pin;
  } else {
    spec.space_image = request.space_image;
  }
  spec.command = request.command;
  if (spec.command.empty() && request.space_image.empty()) spec.command = {"sleep", "2147483647"};
  for (const std::string* profile : {&spec.seccomp_space, &spec.seccomp_gatekeeper}) {
    if (Result<std::string> p = read_small_file(*profile); !p)
      return fail(Code::kPlaceUnusable, "seccomp profile " + *profile + ": missing");
  }
  // Each image is resolved to its ID before anything is created, and the ID is what is used: a
  // tag moved meanwhile cannot change what the space runs.
  for (std::string* image : {&spec.gatekeeper_image, &spec.space_image}) {
    // A pin came back from ensure_pinned_image as the ID the engine holds: nothing to resolve.
    if (image == &spec.gatekeeper_image || request.space_image.empty()) continue;
    Result<std::string> r = image_id(*image);
    if (!r) return fail(r.error().code == Code::kCommandFailed ? Code::kImageMissing : r.error().code, r.error().message);
    *image = *r;
  }

  const Names n = names_for(spec.id);
  auto rollback = [&](Failure failure) -> Failure {
    if (Result<void> r = remove_everything(spec.id, true); !r) failure.message += "; rollback: " + r.error().message;
    return failure;
  };
  auto step = [&](const std::vector<std::string>& args, const std::string& what) -> Result<std::string> {
    return cli_.run(args, what, kChangeTimeout);
  };
  progress("creating_networks");
  spec.inner_subnet = request.inner_subnet;
  spec.outer_subnet = request.outer_subnet;
  // The two networks and the volumes depend on nothing of each other: made at once. Every call
  // has ended before a rollback starts (the futures are waited for first).
  const SpaceSpec network_spec = spec;  // the volume half writes the loop numbers into spec
  auto inner_made = std::async(std::launch::async,
                               [&] { return step(inner_network_argv(network_spec), n.inner); });
  auto outer_made = std::async(std::launch::async,
                               [&] { return step(outer_network_argv(network_spec), n.outer); });
  progress("creating_volumes");
  const Result<void> volumes = [&]() -> Result<void> {
    if (Result<void> r = make_disks(spec); !r) return r;
    auto home_made = std::async(std::launch::async,
                                [&] { return step(volume_argv(spec, Role::kHomeVolume), n.home); });
    Result<std::string> work = step(volume_argv(spec, Role::kWorkVolume), n.work);
    Result<std::string> home = home_made.get();
    if (!home) return home.error();
    if (!work) return work.error();
    // The work volume takes the owner of the image's /spaces (spec.h work_volume_owner_argv).
    if (Result<std::string> r = step(work_volume_owner_argv(spec), n.space + "-volume-owner"); !r)
      return r.error();
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
        !r)
      return r.error();
    return {};
  }();
  const Result<std::string> inner_network = inner_made.get();
  const Result<std::string> outer_network = outer_made.get();
  if (!inner_network) return rollback(inner_network.error());
  if (!outer_network) return rollback(outer_network.error());
  if (!volumes) return rollback(volumes.error());
  // An allocated subnet is known; only one the engine picked is read back (verify compares the
  // gatekeeper's command with the network as inspected either way). Podman's network is read
  // regardless: its gateway and its bridge's name (the host guard) come from there.
  std::string subnet = spec.inner_subnet, gateway;
  json inner_doc = json::array();
  if (subnet.empty() || podman()) {
    Result<json> inner = inspect_network(n.inner);
    if (!inner) return rollback(inner.error());
    inner_doc = std::move(*inner);
    const json& ipam = inner_doc.empty()
                           ? json()
                           : inspect::member(inspect::member(inner_doc[0], "IPAM"), "Config");
    if (ipam.is_array() && !ipam.empty()) {
      if (subnet.empty()) subnet = inspect::str(inspect::member(ipam[0], "Subnet"));
      gateway = inspect::str(inspect::member(ipam[0], "Gateway"));
    }
  }
  if (subnet.empty() || subnet.find(':') != std::string::npos)
    return rollback(fail(Code::kCommandFailed,
                         cli_.program() + " network inspect " + n.inner + ": no IPv4 subnet"));
  if (podman()) {
    // The gatekeeper's fixed address, and the host guard on the bridge before anything runs there
    // (the volume owner above ran without a network).
    spec.gatekeeper_inner_ip = podman_gatekeeper_ip(subnet);
    if (spec.gatekeeper_inner_ip.empty() || spec.gatekeeper_inner_ip == gateway)
      return rollback(fail(Code::kCommandFailed, "podman network inspect " + n.inner + ": subnet " +
                                                     subnet +
                                                     " has no address for the gatekeeper"));
    const json network = inner_doc.empty() ? json() : inner_doc[0];
    const std::string bridge = inspect::str(
        inspect::member(inspect::member(network, "Options"), "com.docker.network.bridge.name"));
    if (Result<void> g = guard_add(bridge, spec.id); !g) return rollback(g.error());
  }
  // The gatekeeper first, so it holds the first address on the inner subnet
  // (docs/reference-behaviour.md#networks).
  progress("creating_gatekeeper");
  if (Result<std::string> r = step(gatekeeper_create_argv(spec, subnet), n.gatekeeper); !r) return rollback(r.error());
  if (Result<std::string> r = step({"network", "connect", "--", n.outer, n.gatekeeper}, n.gatekeeper); !r)
    return rollback(r.error());
  {
    // The window key reaches the space through an env file (0600, in a 0700 directory, removed
    // right after), never through an argv that every host process can read.
    progress("creating_space");
    Result<EnvFile> env = EnvFile::write({std::string(kWindowEnv) + "=" + std::string(kWindowBase) + spec.window_key});
    if (!env) return rollback(env.error());
    spec.env_file = env->path();
    Result<std::string> r = step(space_create_argv(spec), n.space);
    if (!r) return rollback(r.error());
  }

  progress("verifying");
  Result<Verified> verified = verify_ids(spec.id);
  if (!verified) return rollback(verified.error());
  if (!verified->differences.empty()) {
    std::string message = "space create " + spec.id + ": verify found " + std::to_string(verified->differences.size()) + " difference(s):";
    for (const Difference& d : verified->differences) message += " [" + d.check + "] " + d.message + ";";
    return rollback(fail(Code::kVerifyFailed, message));
  }
  // By the IDs verify inspected: no name-based gap between the check and the use.
  progress("starting");
  if (Result<void> r = start_gatekeeper_and_key(spec.id, verified->gatekeeper_id, spec.window_key); !r) return rollback(r.error());
  if (Result<std::string> r = step({"start", "--", verified->space_id}, n.space); !r) return rollback(r.error());

  SpaceSummary summary;
  summary.id = spec.id;
  summary.name = spec.name;
  summary.created = spec.created;
  summary.space_state = "running";
  summary.gatekeeper_state = "running";
  summary.window_url = std::string(kWindowBase) + spec.window_key;
  return summary;
}

Result<std::vector<SpaceSummary>> DockerPlace::list() {
  const std::vector<std::string> filter = {"--filter", "label=" + std::string(kLabelMarker) + "=true", "--filter",
                                           "label=" + std::string(kLabelOwner) + "=" + options_.owner};
  std::vector<std::string> ps = {"ps", "--all", "--no-trunc", "--format", "{{.ID}}"};
  ps.insert(ps.end(), filter.begin(), filter.end());
  Result<std::string> ids = cli_.run(ps, "(label filter)");
  if (!ids) {
    if (ids.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, ids.error().message);
    return ids.error();
  }
  std::vector<std::string> nl = {"network", "ls", "--format", "{{.Name}}"};
  nl.insert(nl.end(), filter.begin(), filter.end());
  Result<std::string> networks = cli_.run(nl, "(label filter)");
  if (!networks) return networks.error();

  json containers = json::array();
  std::vector<std::string> container_ids = output_lines(*ids);
  if (!container_ids.empty() && podman()) {
    // Podman's answer is reshaped into Docker's (podman_inspect.h): the whole inspect is read.
    Result<json> doc = inspect_containers(container_ids, "(labelled containers)");
    if (!doc) return doc.error();
    containers = std::move(*doc);
  } else if (!container_ids.empty()) {
    // One call for every container, and only the members summarise_spaces reads: the whole
    // inspect of 400 containers is about 4 MiB, past the output cap, and slow to print and parse.
    std::vector<std::string> args = {
        "container", "inspect", "--format",
        "{\"Config\":{\"Labels\":{{json .Config.Labels}},\"Env\":{{json .Config.Env}}},"
        "\"State\":{{json .State}},\"Image\":{{json .Image}}}",
        "--"};
    args.insert(args.end(), container_ids.begin(), container_ids.end());
    Result<ProcessOutcome> o = cli_.run_raw(args, "(labelled containers)", kQueryTimeout);
    if (!o) return o.error();
    // A container removed between ps and inspect makes docker exit 1 while printing the others.
    if (!o->succeeded() && !docker_no_such_object(o->err))
      return fail(Code::kCommandFailed,
                  cli_.program() + " container inspect (labelled containers): " + o->describe());
    for (const std::string& line : output_lines(o->out)) {
      json c = json::parse(line, nullptr, false);
      if (c.is_discarded())
        return fail(Code::kCommandFailed, cli_.program() +
                                              " container inspect (labelled containers): a line "
                                              "is not JSON");
      // An engine that ignored --format answers one array: its members are the containers.
      // summarise_spaces skips what it cannot read.
      if (c.is_array()) {
        for (json& e : c) containers.push_back(std::move(e));
      } else {
        containers.push_back(std::move(c));
      }
    }
  }
  return summarise_spaces(containers, output_lines(*networks), options_.owner);
}

Result<ExecOutput> DockerPlace::exec(const std::string& id, ExecTarget target, const std::vector<std::string>& argv,
                                     const std::string& stdin_bytes, std::chrono::milliseconds timeout) {
  const Role role = target == ExecTarget::kGatekeeper ? Role::kGatekeeper : Role::kSpace;
  return exec_as(id, role, role == Role::kGatekeeper ? kGatekeeperUser : kSpaceUser, argv, stdin_bytes, timeout);
}

Result<ExecOutput> DockerPlace::exec_as_root(const std::string& id, const std::vector<std::string>& argv,
                                             const std::string& stdin_bytes, std::chrono::milliseconds timeout) {
  return exec_as(id, Role::kSpace, "0:0", argv, stdin_bytes, timeout);
}

Result<ExecOutput> DockerPlace::exec_as(const std::string& id, Role role, std::string_view user,
                                        const std::vector<std::string>& argv, const std::string& stdin_bytes,
                                        std::chrono::milliseconds timeout) {
  Result<json> c = owned_container(id, role);
  if (!c) return c.error();
  const Names n = names_for(id);
  const std::string& name = role == Role::kGatekeeper ? n.gatekeeper : n.space;
  if (state_of(*c) != "running") return fail(Code::kSpaceNotRunning, "docker exec " + name + ": the container is " + state_of(*c));
  // A tag in the exec'd process's environment: when the deadline or a stop signal kills the
  // docker CLI, what it started inside is found from the host by the tag and killed too.
  const std::string tag = random_hex(8);
  std::vector<std::string> args = {"exec", "--interactive", "--user", std::string(user),
                                   "--env", std::string(kExecTagEnv) + "=" + tag, "--", name};
  args.insert(args.end(), argv.begin(), argv.end());
  // The output is the command's (the space's words): it never decides a place error code.
  Result<ProcessOutcome> o = cli_.run_raw(args, name, timeout, stdin_bytes, kDefaultOutputCap, /*output_from_space=*/true);
  if (!o) {
    Failure f = o.error();
    if (f.code == Code::kCommandTimeout || f.code == Code::kInterrupted || f.code == Code::kOutputTooLarge)
      f.message += end_exec_inside(name, tag);
    return f;
  }
  if (!o->exited) return fail(Code::kCommandFailed, "docker exec " + name + ": " + o->describe());
  if (o->exit_code != 0 && daemon_unreachable_text(o->err)) {
    // Words like "dial unix" may be the command's own: only the daemon's answer to us decides.
    if (Result<int> v = engine_major(); !v && v.error().code == Code::kPlaceUnreachable) return v.error();
  }
  return ExecOutput{o->exit_code, std::move(o->out), std::move(o->err)};
}

Result<ExecOutput> DockerPlace::exec_watched(
    const std::string& id, const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
    std::size_t cap, const std::function<void(std::string_view)>& on_stderr) {
  Result<json> c = owned_container(id, Role::kSpace);
  if (!c) return c.error();
  const std::string name = names_for(id).space;
  if (state_of(*c) != "running") {
    return fail(Code::kSpaceNotRunning,
                "docker exec " + name + ": the container is " + state_of(*c));
  }
  const std::string tag = random_hex(8);
  std::vector<std::string> args = {"exec",   "--interactive",
                                   "--user", std::string(kSpaceUser),
                                   "--env",  std::string(kExecTagEnv) + "=" + tag,
                                   "--",     name};
  args.insert(args.end(), argv.begin(), argv.end());
  std::string out, err;
  bool too_large = false;
  Result<ProcessOutcome> o =
      cli_.run_stream_from_space(args, name, timeout, [&](bool is_stderr, std::string_view bytes) {
        if (is_stderr) {
          err.append(bytes);
          if (err.size() > kStderrKept) err.erase(0, err.size() - kStderrKept);
          if (on_stderr) on_stderr(bytes);
          return;
        }
        if (out.size() + bytes.size() > cap) {
          too_large = true;
        } else {
          out.append(bytes);
        }
      });
  if (!o) {
    Failure f = o.error();
    if (f.code == Code::kCommandTimeout || f.code == Code::kInterrupted) {
      f.message += end_exec_inside(name, tag);
    }
    return f;
  }
  if (!o->exited) return fail(Code::kCommandFailed, "docker exec " + name + ": " + o->describe());
  if (too_large) {
    return fail(Code::kOutputTooLarge,
                "docker exec " + name + ": more than " + std::to_string(cap) + " bytes of output");
  }
  return ExecOutput{o->exit_code, std::move(out), std::move(err)};
}

std::string DockerPlace::end_exec_inside(const std::string& container, const std::string& tag) {
  // Docker's top takes ps options; Podman's takes its own descriptors (hpid: the host's pid).
  Result<std::string> top = podman() ? cli_.run({"top", "--", container, "hpid"}, container)
                                     : cli_.run({"top", "--", container, "-eo", "pid"}, container);
  if (!top) return "; what it started inside may still run (" + top.error().message + ")";
  const std::string needle = std::string(kExecTagEnv) + "=" + tag;
  int killed = 0, visible = 0;
  for (const std::string& line : output_lines(*top)) {
    const std::size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos || line.find_first_not_of("0123456789 ") != std::string::npos) continue;  // the header
    const std::string pid = line.substr(b, line.find(' ', b) - b);
    // Host pids (docker top runs ps on the daemon's host): visible here for a local engine only.
    if (!engine_is_local(options_.engine)) break;
    std::ifstream in("/proc/" + pid + "/environ", std::ios::binary);
    if (!in) continue;
    ++visible;
    std::string env(64u << 10, '\0');
    in.read(env.data(), static_cast<std::streamsize>(env.size()));
    env.resize(static_cast<std::size_t>(in.gcount()));
    const std::string padded = std::string(1, '\0') + env;
    if (padded.find(std::string(1, '\0') + needle + std::string(1, '\0')) != std::string::npos ||
        (padded.size() >= needle.size() + 1 && padded.compare(padded.size() - needle.size(), needle.size(), needle) == 0)) {
      if (::kill(static_cast<pid_t>(std::atol(pid.c_str())), SIGKILL) == 0) ++killed;
    }
  }
  if (visible == 0) return "; what it started inside is not visible from this host and may still run";
  return "; killed " + std::to_string(killed) + " process(es) it had started inside";
}

Result<std::vector<std::string>> DockerPlace::exec_argv(const std::string& id) {
  Result<json> c = owned_container(id, Role::kSpace);
  if (!c) return c.error();
  const std::string name = names_for(id).space;
  if (state_of(*c) != "running") return fail(Code::kSpaceNotRunning, "exec argv " + name + ": the container is " + state_of(*c));
  std::vector<std::string> argv = cli_.prefix();
  argv.insert(argv.end(), {"exec", "--interactive", "--user", std::string(kSpaceUser), "--", name});
  return argv;
}


Result<void> DockerPlace::stop(const std::string& id) {
  // The space first, so it never runs without its gatekeeper
  // (docs/reference-behaviour.md#create-start-and-stop-order).
  for (Role role : {Role::kSpace, Role::kGatekeeper}) {
    Result<json> c = owned_container(id, role);
    if (!c) {
      if (c.error().code == Code::kSpaceNotFound && role == Role::kGatekeeper) continue;
      return c.error();
    }
    const std::string name = role == Role::kGatekeeper ? names_for(id).gatekeeper : names_for(id).space;
    if (Result<std::string> r = cli_.run({"stop", "--time", "10", "--", name}, name, kChangeTimeout); !r) return r.error();
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
    if (!inner->empty())
      if (Result<void> g =
              guard_add((*inner)[0]["Options"].value("com.docker.network.bridge.name", ""), id);
          !g)
        return g;
  }
  // A space that fails verify is never started (docs/decisions.md#create-verify-start); what is
  // started is what verify inspected (by ID).
  Result<Verified> verified = verify_ids(id);
  if (!verified) return verified.error();
  if (!verified->differences.empty()) {
    std::string message = "space start " + id + ": verify found differences:";
    for (const Difference& d : verified->differences) message += " [" + d.check + "] " + d.message + ";";
    return fail(Code::kVerifyFailed, message);
  }
  const std::string url = window_url_of(*space);
  const std::string key = url.size() > kWindowBase.size() ? url.substr(kWindowBase.size()) : std::string();
  if (Result<void> r = start_gatekeeper_and_key(id, verified->gatekeeper_id, key); !r) return r;
  const std::string name = names_for(id).space;
  if (Result<std::string> r = cli_.run({"start", "--", verified->space_id}, name, kChangeTimeout); !r) return r.error();
  return {};
}

}  // namespace controller
