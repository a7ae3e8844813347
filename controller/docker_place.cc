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
#include "policy/number.h"
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

std::string label(const json& labels, std::string_view key) {
  if (!labels.is_object()) return {};
  auto it = labels.find(std::string(key));
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
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
  if (v && !engine_is_local(options_.engine) && cli_.engine().round_trip.count() == 0) {
    cli_.set_round_trip(std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started));
  }
  if (!v) {
    if (v.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, v.error().message);
    return v.error();
  }
  return engine_major_of(*v, podman() ? "podman version" : "docker version");
}

Result<int> engine_major_of(std::string_view version, std::string_view command) {
  // "20.10.24\n" or "4.3.1": the digits before the first dot are the major version.
  std::string_view text = version;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::optional<int> major = policy::parse_number<int>(text.substr(0, text.find('.')));
  if (!major || *major < 1 || text.find('.') == std::string_view::npos) {
    return fail(Code::kPlaceUnusable, std::string(command) + ": '" +
                                          std::string(text.substr(0, 40)) +
                                          "' is not an engine version (major.minor...)");
  }
  return *major;
}

Result<std::int64_t> DockerPlace::host_cpus() {
  Result<std::string> v =
      cli_.run({"info", "--format", podman() ? "{{.Host.CPUs}}" : "{{.NCPU}}"}, "", kProbeTimeout);
  if (!v) {
    if (v.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, v.error().message);
    return v.error();
  }
  return cpu_count_of(*v, podman() ? "podman info Host.CPUs" : "docker info NCPU");
}

Result<std::int64_t> cpu_count_of(std::string_view text, std::string_view command) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::optional<std::int64_t> n = policy::parse_number<std::int64_t>(text);
  if (!n || *n < 1 || *n > 99999) {
    return fail(Code::kCommandFailed, std::string(command) + ": '" +
                                          std::string(text.substr(0, 40)) + "' is not a CPU count");
  }
  return *n;
}

Result<EngineFacts> engine_facts_of(std::string_view text, std::string_view command) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t space = text.find(' ');
  const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (!printable || space == std::string_view::npos ||
      text.find(' ', space + 1) != std::string_view::npos) {
    std::string shown(text.substr(0, 40));
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    return fail(Code::kPlaceUnusable,
                std::string(command) + ": '" + shown + "' is not '<version> <CPU count>'");
  }
  Result<int> major = engine_major_of(text.substr(0, space), command);
  if (!major) return major.error();
  Result<std::int64_t> cpus = cpu_count_of(text.substr(space + 1), command);
  if (!cpus) return cpus.error();
  return EngineFacts{*major, *cpus};
}

Result<EngineFacts> DockerPlace::engine_facts() {
  if (podman()) {
    auto cpus_query = std::async(std::launch::async, [this] { return host_cpus(); });
    Result<int> major = engine_major();
    Result<std::int64_t> cpus = cpus_query.get();
    if (!major) return major.error();
    if (!cpus) return cpus.error();
    return EngineFacts{*major, *cpus};
  }
  // `docker version` would be a second engine call for what info says too (the daemon's
  // version, as Server.Version).
  const auto started = std::chrono::steady_clock::now();
  Result<std::string> v =
      cli_.run({"info", "--format", "{{.ServerVersion}} {{.NCPU}}"}, "", kProbeTimeout);
  // A remote engine: this call's round trip sets every later deadline (engine.h scaled_timeout).
  if (v && !engine_is_local(options_.engine) && cli_.engine().round_trip.count() == 0) {
    cli_.set_round_trip(std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started));
  }
  if (!v) {
    if (v.error().code == Code::kCommandFailed) {
      return fail(Code::kPlaceUnreachable, v.error().message);
    }
    return v.error();
  }
  return engine_facts_of(*v, "docker info (version and CPUs)");
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
  Result<EnsuredImage> ensured = ensured_image(file);
  if (!ensured) return ensured.error();
  return ensured->id;
}

Result<EnsuredImage> DockerPlace::ensured_image(const std::string& file) {
  // Present, pulled by its recorded digest, or loaded from the archive next to the pin
  // (image_ensure.h); the ID must equal the pin either way.
  return ensure_pinned_image(cli_, file, pull_flags_for(file));
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
  if (!is_image_id(id)) {
    return fail(Code::kImageMissing,
                cli_.program() + " image inspect " + image + ": no sha256 image ID");
  }
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
  if (!o->exited || o->out.empty()) {
    return fail(Code::kCommandFailed,
                cli_.program() + " run (the engine's host addresses): " + o->describe());
  }
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
  for (const std::string& cid : output_lines(*ids)) {
    out[0]["Containers"][cid] = json{{"Name", cid.substr(0, 12)}};
  }
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
    for (const std::string* path : {&options_.seccomp_space, &options_.seccomp_gatekeeper}) {
      if (Result<std::string> text = read_small_file(*path); text) {
        context.seccomp_profiles[*path] = *text;
      }
    }
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
  if (!c.is_object()) {
    return fail(Code::kCommandFailed,
                "docker container inspect " + name + ": the answer is not an object");
  }
  const json& labels = inspect::member(inspect::member(c, "Config"), "Labels");
  if (label(labels, kLabelMarker) != "true" || label(labels, kLabelOwner) != options_.owner ||
      label(labels, kLabelId) != id || label(labels, kLabelRole) != role_word(role)) {
    return fail(Code::kSpaceNotFound, "space " + id + ": container " + name + " is not ours (labels differ)");
  }
  return c;
}

Result<std::set<std::string>> DockerPlace::image_env_names(const std::string& image) {
  Result<std::string> out = cli_.run({"image", "inspect", "--format", "{{json .Config.Env}}", "--", image}, image);
  if (!out) return fail(Code::kImageMissing, out.error().message);
  return image_env_names_of(*out);
}

std::string container_state(const json& container) {
  if (!container.is_object()) return "missing";
  const json& status = inspect::member(inspect::member(container, "State"), "Status");
  return status.is_string() ? status.get<std::string>() : "unknown";
}

}  // namespace controller
