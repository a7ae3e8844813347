#include "controller/docker_place.h"

#include <sys/random.h>

#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "controller/gatekeeper_channel.h"

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

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

bool no_such_object(const std::string& err) {
  return err.find("No such") != std::string::npos || err.find("not found") != std::string::npos ||
         err.find("removal of container") != std::string::npos;
}

}  // namespace

DockerPlace::DockerPlace(PlaceOptions options, DockerCli cli)
    : options_(std::move(options)), cli_(std::move(cli)), probe_(host_has_ipv4_on) {}

Result<int> DockerPlace::engine_major() {
  Result<std::string> v = cli_.run({"version", "--format", "{{.Server.Version}}"}, "", kProbeTimeout);
  if (!v) {
    if (v.error().code == Code::kCommandFailed) return fail(Code::kPlaceUnreachable, v.error().message);
    return v.error();
  }
  return std::atoi(v->c_str());
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

Result<json> DockerPlace::inspect(const std::vector<std::string>& args, const std::string& what) {
  // A vanished object makes docker exit 1 while still printing what it found.
  Result<ProcessOutcome> o = cli_.run_raw(args, what, kQueryTimeout);
  if (!o) return o.error();
  json doc = json::parse(o->out, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    if (o->exited && o->exit_code != 0 && no_such_object(o->err)) return json::array();
    return fail(Code::kCommandFailed, "docker " + args[0] + " " + what + ": " + o->describe());
  }
  return doc;
}

Result<json> DockerPlace::owned_container(const std::string& id, Role role) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  const Names n = names_for(id);
  const std::string& name = role == Role::kGatekeeper ? n.gatekeeper : n.space;
  Result<json> doc = inspect({"container", "inspect", name}, name);
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
  Result<std::string> out = cli_.run({"image", "inspect", "--format", "{{json .Config.Env}}", image}, image);
  if (!out) return fail(Code::kImageMissing, out.error().message);
  std::set<std::string> names;
  const json env = json::parse(*out, nullptr, false);
  if (env.is_array())
    for (const json& e : env)
      if (e.is_string()) names.insert(e.get<std::string>().substr(0, e.get<std::string>().find('=')));
  return names;
}

Result<void> DockerPlace::start_gatekeeper_and_key(const std::string& id, const std::string& window_key) {
  const Names n = names_for(id);
  Result<std::string> s = cli_.run({"start", n.gatekeeper}, n.gatekeeper, kChangeTimeout);
  if (!s) return s.error();
  if (Result<void> ready = wait_gatekeeper_ready(*this, id); !ready) return ready;
  return deliver_window_key(*this, id, window_key);
}

Result<SpaceSummary> DockerPlace::create(const CreateRequest& request) {
  SpaceSpec spec;
  spec.id = random_hex(6);
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
  if (spec.name.empty() || spec.name.size() > 100 || spec.name.find_first_of("\n\r\t") != std::string::npos)
    return fail(Code::kInvalidArgument, "space create: a name is 1 to 100 characters on one line");
  Result<int> major = engine_major();
  if (!major) return major.error();
  spec.engine_major = *major;
  Result<std::string> gk_image = read_pin(options_.gatekeeper_image_file);
  if (!gk_image) return gk_image.error();
  spec.gatekeeper_image = *gk_image;
  if (request.space_image.empty()) {
    Result<std::string> pin = read_pin(options_.space_image_file);
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
  for (const std::string* image : {&spec.gatekeeper_image, &spec.space_image}) {
    if (Result<std::string> r = cli_.run({"image", "inspect", "--format", "{{.Id}}", *image}, *image); !r)
      return fail(r.error().code == Code::kCommandFailed ? Code::kImageMissing : r.error().code, r.error().message);
  }

  const Names n = names_for(spec.id);
  auto rollback = [&](Failure failure) -> Failure {
    if (Result<void> r = remove_everything(spec.id, true); !r) failure.message += "; rollback: " + r.error().message;
    return failure;
  };
  auto step = [&](const std::vector<std::string>& args, const std::string& what) -> Result<std::string> {
    return cli_.run(args, what, kChangeTimeout);
  };
  if (Result<std::string> r = step(inner_network_argv(spec), n.inner); !r) return rollback(r.error());
  if (Result<std::string> r = step(outer_network_argv(spec), n.outer); !r) return rollback(r.error());
  Result<json> inner = inspect({"network", "inspect", n.inner}, n.inner);
  if (!inner) return rollback(inner.error());
  std::string subnet;
  if (!inner->empty() && (*inner)[0].contains("IPAM") && (*inner)[0]["IPAM"]["Config"].is_array() &&
      !(*inner)[0]["IPAM"]["Config"].empty())
    subnet = (*inner)[0]["IPAM"]["Config"][0].value("Subnet", "");
  if (subnet.empty() || subnet.find(':') != std::string::npos)
    return rollback(fail(Code::kCommandFailed, "docker network inspect " + n.inner + ": no IPv4 subnet"));
  if (Result<std::string> r = step(volume_argv(spec, Role::kHomeVolume), n.home); !r) return rollback(r.error());
  if (Result<std::string> r = step(volume_argv(spec, Role::kWorkVolume), n.work); !r) return rollback(r.error());
  // The work volume takes the owner of the image's /spaces (spec.h work_volume_owner_argv).
  if (Result<std::string> r = step(work_volume_owner_argv(spec), n.space + "-volume-owner"); !r) return rollback(r.error());
  if (Result<std::string> r = step({"rm", n.space + "-volume-owner"}, n.space + "-volume-owner"); !r)
    return rollback(r.error());
  // The gatekeeper first, so it holds the first address on the inner subnet
  // (docs/reference-behaviour.md#networks).
  if (Result<std::string> r = step(gatekeeper_create_argv(spec, subnet), n.gatekeeper); !r) return rollback(r.error());
  if (Result<std::string> r = step({"network", "connect", n.outer, n.gatekeeper}, n.gatekeeper); !r)
    return rollback(r.error());
  if (Result<std::string> r = step(space_create_argv(spec), n.space); !r) return rollback(r.error());

  Result<std::vector<Difference>> differences = verify(spec.id);
  if (!differences) return rollback(differences.error());
  if (!differences->empty()) {
    std::string message = "space create " + spec.id + ": verify found " + std::to_string(differences->size()) + " difference(s):";
    for (const Difference& d : *differences) message += " [" + d.check + "] " + d.message + ";";
    return rollback(fail(Code::kVerifyFailed, message));
  }
  if (Result<void> r = start_gatekeeper_and_key(spec.id, spec.window_key); !r) return rollback(r.error());
  if (Result<std::string> r = step({"start", n.space}, n.space); !r) return rollback(r.error());

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
  std::vector<std::string> container_ids = lines(*ids);
  if (!container_ids.empty()) {
    std::vector<std::string> args = {"container", "inspect"};
    args.insert(args.end(), container_ids.begin(), container_ids.end());
    Result<json> doc = inspect(args, "(labelled containers)");
    if (!doc) return doc.error();
    for (const json& c : *doc) {
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
      } else if (role == role_word(Role::kGatekeeper)) {
        s.gatekeeper_state = state_of(c);
      }
    }
  }
  std::set<std::string> network_names;
  for (const std::string& name : lines(*networks)) network_names.insert(name);
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
  Result<json> c = owned_container(id, role);
  if (!c) return c.error();
  const Names n = names_for(id);
  const std::string& name = role == Role::kGatekeeper ? n.gatekeeper : n.space;
  if (state_of(*c) != "running") return fail(Code::kSpaceNotRunning, "docker exec " + name + ": the container is " + state_of(*c));
  std::vector<std::string> args = {"exec", "--interactive", "--user",
                                   std::string(role == Role::kGatekeeper ? kGatekeeperUser : kSpaceUser), name};
  args.insert(args.end(), argv.begin(), argv.end());
  Result<ProcessOutcome> o = cli_.run_raw(args, name, timeout, stdin_bytes);
  if (!o) return o.error();
  if (!o->exited) return fail(Code::kCommandFailed, "docker exec " + name + ": " + o->describe());
  return ExecOutput{o->exit_code, std::move(o->out), std::move(o->err)};
}

Result<std::vector<std::string>> DockerPlace::exec_argv(const std::string& id) {
  Result<json> c = owned_container(id, Role::kSpace);
  if (!c) return c.error();
  const std::string name = names_for(id).space;
  if (state_of(*c) != "running") return fail(Code::kSpaceNotRunning, "exec argv " + name + ": the container is " + state_of(*c));
  return std::vector<std::string>{cli_.program(), "exec", "--interactive", "--user", std::string(kSpaceUser), name};
}

Result<std::vector<std::string>> DockerPlace::connect(const std::string& id, std::uint16_t port) {
  Result<std::vector<std::string>> argv = exec_argv(id);
  if (!argv) return argv.error();
  argv->insert(argv->end(), {"nc", "127.0.0.1", std::to_string(port)});
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
    if (Result<std::string> r = cli_.run({"stop", "--time", "10", name}, name, kChangeTimeout); !r) return r.error();
  }
  return {};
}

Result<void> DockerPlace::start(const std::string& id) {
  Result<json> space = owned_container(id, Role::kSpace);
  if (!space) return space.error();
  // A space that fails verify is never started (docs/decisions.md#create-verify-start).
  Result<std::vector<Difference>> differences = verify(id);
  if (!differences) return differences.error();
  if (!differences->empty()) {
    std::string message = "space start " + id + ": verify found differences:";
    for (const Difference& d : *differences) message += " [" + d.check + "] " + d.message + ";";
    return fail(Code::kVerifyFailed, message);
  }
  const std::string url = window_url_of(*space);
  const std::string key = url.size() > kWindowBase.size() ? url.substr(kWindowBase.size()) : std::string();
  if (Result<void> r = start_gatekeeper_and_key(id, key); !r) return r;
  const std::string name = names_for(id).space;
  if (Result<std::string> r = cli_.run({"start", name}, name, kChangeTimeout); !r) return r.error();
  return {};
}

Result<void> DockerPlace::remove_everything(const std::string& id, bool also_by_name) {
  const Names n = names_for(id);
  const std::string by_id = "label=" + std::string(kLabelId) + "=" + id;
  const std::string by_owner = "label=" + std::string(kLabelOwner) + "=" + options_.owner;
  // By name only in a rollback: that call just saw the names free, and an interrupted `docker
  // create` can leave an unlabelled object behind (docs/reference-behaviour.md#docker-place).
  // Elsewhere labels decide.
  std::set<std::string> containers, volumes, networks;
  if (also_by_name) {
    containers = {n.space, n.gatekeeper};
    volumes = {n.home, n.work};
    networks = {n.inner, n.outer};
  }
  if (Result<std::string> r = cli_.run({"ps", "--all", "--filter", by_id, "--filter", by_owner, "--format", "{{.Names}}"}, id); r)
    for (const std::string& l : lines(*r)) containers.insert(l);
  else
    return r.error();
  if (Result<std::string> r = cli_.run({"volume", "ls", "--filter", by_id, "--filter", by_owner, "--format", "{{.Name}}"}, id); r)
    for (const std::string& l : lines(*r)) volumes.insert(l);
  if (Result<std::string> r = cli_.run({"network", "ls", "--filter", by_id, "--filter", by_owner, "--format", "{{.Name}}"}, id); r)
    for (const std::string& l : lines(*r)) networks.insert(l);
  std::string failures;
  auto remove = [&](const std::vector<std::string>& args, const std::string& what) {
    Result<ProcessOutcome> o = cli_.run_raw(args, what, kChangeTimeout);
    if (!o) {
      failures += " " + o.error().message + ";";
    } else if (!o->succeeded() && !no_such_object(o->err)) {
      failures += " docker " + args[0] + " " + what + ": " + o->describe() + ";";
    }
  };
  // Containers, then volumes, then networks: each holds the next
  // (docs/reference-behaviour.md#docker-place).
  for (const std::string& c : containers) remove({"rm", "--force", "--volumes", c}, c);
  for (const std::string& v : volumes) remove({"volume", "rm", "--force", v}, v);
  for (const std::string& w : networks) remove({"network", "rm", w}, w);
  if (!failures.empty()) return fail(Code::kCommandFailed, "space remove " + id + ":" + failures);
  return {};
}

Result<void> DockerPlace::remove(const std::string& id) {
  if (!is_space_id(id)) return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  return remove_everything(id, false);
}

}  // namespace controller
