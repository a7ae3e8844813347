#include "controller/docker_place.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <ctime>
#include <fstream>
#include <future>
#include <map>
#include <sstream>

#include "controller/gatekeeper_channel.h"
#include "controller/image_ensure.h"
#include "controller/text.h"

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

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

bool is_image_id(std::string_view text) {
  if (text.size() != 71 || text.substr(0, 7) != "sha256:") return false;
  for (const char c : text.substr(7))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool is_image_reference(std::string_view text) {
  // Docker's reference grammar, loosely: never a flag, only its alphabet, bounded.
  if (text.empty() || text.size() > 512 || text.front() == '-' || text.front() == '.' || text.front() == ':') return false;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == '-' || c == '/' || c == ':' || c == '@';
    if (!ok) return false;
  }
  return true;
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
  const json& state = container.contains("State") ? container["State"] : json();
  return state.is_object() && state.contains("Status") && state["Status"].is_string() ? state["Status"].get<std::string>() : "unknown";
}

std::string window_url_of(const json& container) {
  if (!container.is_object() || !container.contains("Config")) return {};
  const json& env = container["Config"].contains("Env") ? container["Config"]["Env"] : json();
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

DockerPlace::DockerPlace(PlaceOptions options, DockerCli cli)
    : options_(std::move(options)), cli_(std::move(cli)), probe_(host_has_ipv4_on), loop_probe_(read_loop_state),
      io_probe_(host_io_weight_supported) {}

Result<int> DockerPlace::engine_major() {
  Result<std::string> v = cli_.run({"version", "--format", "{{.Server.Version}}"}, "", kProbeTimeout);
  if (!v) {
    if (v.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, v.error().message);
    return v.error();
  }
  return std::atoi(v->c_str());
}

Result<std::int64_t> DockerPlace::host_cpus() {
  Result<std::string> v = cli_.run({"info", "--format", "{{.NCPU}}"}, "", kProbeTimeout);
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
  Result<EnsuredImage> ensured = ensure_pinned_image(cli_, file);
  if (!ensured) return ensured.error();
  return ensured->id;
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
  Result<json> doc = inspect({"container", "inspect", "--", name}, name);
  if (!doc) return doc.error();
  if (doc->empty()) return fail(Code::kSpaceNotFound, "space " + id + ": container " + name + " does not exist");
  json c = (*doc)[0];
  const json& labels = c["Config"].is_object() ? c["Config"]["Labels"] : json();
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
  // The local engine's host is this machine: its public addresses are blocked for the corridor.
  spec.blocked_ranges = host_public_ranges();
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
  auto cpus_query = std::async(std::launch::async, [this] { return host_cpus(); });
  auto gk_query = std::async(std::launch::async,
                             [this] { return pinned_image(options_.gatekeeper_image_file); });
  auto space_query = std::async(std::launch::async, [this, wanted = request.space_image.empty()] {
    return wanted ? pinned_image(options_.space_image_file) : Result<std::string>(std::string());
  });
  Result<int> major = major_query.get();
  if (!major) return major.error();
  spec.engine_major = *major;
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
    Result<std::string> r = cli_.run({"image", "inspect", "--format", "{{.Id}}", "--", *image}, *image);
    if (!r) return fail(r.error().code == Code::kCommandFailed ? Code::kImageMissing : r.error().code, r.error().message);
    std::string resolved = *r;
    while (!resolved.empty() && (resolved.back() == '\n' || resolved.back() == ' ')) resolved.pop_back();
    if (!is_image_id(resolved)) return fail(Code::kImageMissing, "docker image inspect " + *image + ": no sha256 image ID");
    *image = resolved;
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
  // gatekeeper's command with the network as inspected either way).
  std::string subnet = spec.inner_subnet;
  if (subnet.empty()) {
    Result<json> inner = inspect({"network", "inspect", "--", n.inner}, n.inner);
    if (!inner) return rollback(inner.error());
    if (!inner->empty() && (*inner)[0].contains("IPAM") &&
        (*inner)[0]["IPAM"]["Config"].is_array() && !(*inner)[0]["IPAM"]["Config"].empty())
      subnet = (*inner)[0]["IPAM"]["Config"][0].value("Subnet", "");
  }
  if (subnet.empty() || subnet.find(':') != std::string::npos)
    return rollback(
        fail(Code::kCommandFailed, "docker network inspect " + n.inner + ": no IPv4 subnet"));
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

  std::map<std::string, SpaceSummary> spaces;
  auto entry = [&](const std::string& id) -> SpaceSummary& {
    SpaceSummary& s = spaces[id];
    if (s.id.empty()) {
      s.id = id;
      s.space_state = "missing";
      s.gatekeeper_state = "missing";
    }
    return s;
  };
  std::vector<std::string> container_ids = output_lines(*ids);
  if (!container_ids.empty()) {
    // One call for every container, and only the members list reads: the whole inspect of 400
    // containers is about 4 MiB, past the output cap, and slow to print and parse.
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
                  "docker container inspect (labelled containers): " + o->describe());
    json doc = json::array();
    for (const std::string& line : output_lines(o->out)) {
      json c = json::parse(line, nullptr, false);
      if (!c.is_object())
        return fail(Code::kCommandFailed,
                    "docker container inspect (labelled containers): a line is not JSON");
      doc.push_back(std::move(c));
    }
    for (const json& c : doc) {
      const json& labels = c["Config"].is_object() ? c["Config"]["Labels"] : json();
      // The filter is re-checked on inspect: labels from the ps column prove nothing.
      if (label(labels, kLabelOwner) != options_.owner || !is_space_id(label(labels, kLabelId))) continue;
      // `place check` probes carry our labels with role probe; they are not spaces.
      const std::string role = label(labels, kLabelRole);
      if (role != role_word(Role::kSpace) && role != role_word(Role::kGatekeeper)) continue;
      SpaceSummary& s = entry(label(labels, kLabelId));
      s.name = label(labels, kLabelName);
      s.created = label(labels, kLabelCreated);
      if (role == role_word(Role::kSpace)) {
        s.space_state = state_of(c);
        s.window_url = window_url_of(c);
        if (c.contains("State") && c["State"].is_object() && c["State"].contains("ExitCode") && c["State"]["ExitCode"].is_number_integer())
          s.space_exit_code = c["State"]["ExitCode"].get<int>();
      } else if (role == role_word(Role::kGatekeeper)) {
        s.gatekeeper_state = state_of(c);
        // A container's labels include its image's: the OCI version and revision it was built from.
        s.gatekeeper_image = c.contains("Image") && c["Image"].is_string() ? c["Image"].get<std::string>() : std::string();
        s.gatekeeper_version = label(labels, "org.opencontainers.image.version");
        s.gatekeeper_revision = label(labels, "org.opencontainers.image.revision");
      }
    }
  }
  std::set<std::string> network_names;
  for (const std::string& name : output_lines(*networks)) network_names.insert(name);
  for (const std::string& name : network_names) {
    // gk-<12 hex>-network / -outer-network
    if (name.size() > 16 && name.rfind("gk-", 0) == 0 && is_space_id(name.substr(3, 12))) entry(name.substr(3, 12));
  }
  std::vector<SpaceSummary> out;
  for (auto& [id, s] : spaces) {
    const Names n = names_for(id);
    if (s.space_state == "missing") s.missing.push_back(n.space);
    if (s.gatekeeper_state == "missing") s.missing.push_back(n.gatekeeper);
    if (network_names.count(n.inner) == 0) s.missing.push_back(n.inner);
    if (network_names.count(n.outer) == 0) s.missing.push_back(n.outer);
    out.push_back(std::move(s));
  }
  return out;
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

std::string DockerPlace::end_exec_inside(const std::string& container, const std::string& tag) {
  Result<std::string> top = cli_.run({"top", "--", container, "-eo", "pid"}, container);
  if (!top) return "; what it started inside may still run (" + top.error().message + ")";
  const std::string needle = std::string(kExecTagEnv) + "=" + tag;
  int killed = 0, visible = 0;
  for (const std::string& line : output_lines(*top)) {
    const std::size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos || line.find_first_not_of("0123456789 ") != std::string::npos) continue;  // the header
    const std::string pid = line.substr(b, line.find(' ', b) - b);
    // Host pids (docker top runs ps on the daemon's host): visible here for a local engine only.
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
  return std::vector<std::string>{cli_.program(), "exec", "--interactive", "--user", std::string(kSpaceUser), "--", name};
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
