#include "controller/apple_place.h"

#include <cerrno>
#include <set>
#include <thread>

#include "controller/docker_place.h"
#include "controller/gatekeeper_channel.h"
#include "controller/image_ensure.h"
#include "controller/loop_disk.h"
#include "controller/process.h"
#include "controller/records.h"
#include "controller/text.h"

namespace controller::apple {

using detail::address_only;
using detail::member;
using nlohmann::json;

AppleContainerPlace::AppleContainerPlace(PlaceOptions options) : options_(std::move(options)) {}

Result<std::string> AppleContainerPlace::run(const std::vector<std::string>& args,
                                             const std::string& what,
                                             std::chrono::milliseconds timeout,
                                             const std::string& stdin_bytes) {
  ProcessRequest r;
  r.argv = {program()};
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.timeout = timeout;
  r.stdin_bytes = stdin_bytes;
  const ProcessOutcome o = run_process(r);
  const std::string op = "container " + (args.empty() ? std::string() : args[0]) + " " + what;
  if (o.spawn_failed) {
    return fail(o.spawn_errno == ENOENT ? Code::kPlaceUnreachable : Code::kInternal,
                op + ": " + program() + " is not installed");
  }
  if (o.timed_out) return fail(Code::kCommandTimeout, op + ": " + o.describe());
  if (o.interrupted) return fail(Code::kInterrupted, op + ": " + o.describe());
  if (!o.succeeded()) {
    if (o.err.find("XPC connection error") != std::string::npos ||
        o.err.find("container system start") != std::string::npos) {
      return fail(Code::kPlaceUnreachable,
                  op + ": the container API server does not answer (container system start): " +
                      o.describe());
    }
    if (o.err.find("not found") != std::string::npos) {
      return fail(Code::kSpaceNotFound, op + ": " + o.describe());
    }
    return fail(Code::kCommandFailed, op + ": " + o.describe());
  }
  return o.out;
}

Result<json> AppleContainerPlace::run_json(const std::vector<std::string>& args,
                                           const std::string& what) {
  Result<std::string> out = run(args, what);
  if (!out) return out.error();
  json doc = json::parse(*out, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    return fail(Code::kInternal,
                "container " + args[0] + " " + what + ": the answer is not a JSON array");
  }
  return doc;
}

Result<json> AppleContainerPlace::owned(const std::string& id) {
  json out = {
      {"containers", json::array()}, {"networks", json::array()}, {"volumes", json::array()}};
  const std::vector<std::pair<std::string, std::vector<std::string>>> lists = {
      {"containers", {"list", "--all", "--format", "json"}},
      {"networks", {"network", "list", "--format", "json"}},
      {"volumes", {"volume", "list", "--format", "json"}}};
  for (const auto& [kind, args] : lists) {
    Result<json> all = run_json(args, kind + " of owner " + options_.owner);
    if (!all) return all.error();
    for (const json& o : *all) {
      const json& conf = member(o, "configuration");
      const json labels =
          conf.is_object() && conf.contains("labels") ? conf["labels"] : member(o, "labels");
      if (!labels.is_object() || labels.value(std::string(kLabelMarker), "") != "true" ||
          labels.value(std::string(kLabelOwner), "") != options_.owner ||
          (!id.empty() && labels.value(std::string(kLabelId), "") != id)) {
        continue;
      }
      out[kind].push_back(o);
    }
  }
  return out;
}

Result<json> AppleContainerPlace::container(const std::string& id, Role role) {
  if (!is_space_id(id)) {
    return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  }
  Result<json> mine = owned(id);
  if (!mine) return mine.error();
  for (const json& c : (*mine)["containers"]) {
    if (member(member(c, "configuration"), "labels").value(std::string(kLabelRole), "") ==
        role_word(role)) {
      return c;
    }
  }
  if ((*mine)["containers"].empty() && (*mine)["networks"].empty() && (*mine)["volumes"].empty()) {
    return fail(Code::kSpaceNotFound, "space " + id + ": nothing of this owner carries that id");
  }
  return fail(Code::kSpaceNotFound,
              "space " + id + ": its " + std::string(role_word(role)) + " container is missing");
}

Result<AppleSpec> AppleContainerPlace::spec_of(const std::string& id, const json& space) {
  AppleSpec s;
  s.id = id;
  s.owner = options_.owner;
  const json& c = member(space, "configuration");
  s.name = member(c, "labels").value(std::string(kLabelName), "");
  s.created = member(c, "labels").value(std::string(kLabelCreated), "");
  s.space_image = member(member(c, "image"), "reference").is_string()
                      ? member(member(c, "image"), "reference").get<std::string>()
                      : "";
  s.memory_bytes = member(member(c, "resources"), "memoryInBytes").is_number()
                       ? member(member(c, "resources"), "memoryInBytes").get<std::int64_t>()
                       : 0;
  s.cpus = member(member(c, "resources"), "cpus").is_number()
               ? member(member(c, "resources"), "cpus").get<std::int64_t>()
               : 0;
  for (const json& e : member(member(c, "initProcess"), "environment")) {
    const std::string text = e.is_string() ? e.get<std::string>() : "";
    const std::string window = std::string(kWindowEnv) + "=http://";
    if (text.rfind(window, 0) != 0) continue;
    const std::size_t colon = text.find(':', window.size()), key = text.find("/k/");
    if (colon == std::string::npos || key == std::string::npos) break;
    s.gatekeeper_address = text.substr(window.size(), colon - window.size());
    s.window_key = text.substr(key + 3);
  }
  if (s.window_key.size() != 64) {
    return fail(Code::kVerifyFailed,
                "space " + id + ": its window variable is missing or malformed");
  }
  Result<std::string> gk = read_digest_record(options_.gatekeeper_image_file);
  if (!gk) return gk.error();
  s.gatekeeper_image = *gk;
  Result<json> net =
      run_json({"network", "inspect", names_for(id).inner}, "network " + names_for(id).inner);
  if (!net) return net.error();
  if (!net->empty()) {
    s.inner_subnet = member(member((*net)[0], "status"), "ipv4Subnet").is_string()
                         ? member(member((*net)[0], "status"), "ipv4Subnet").get<std::string>()
                         : "";
  }
  return s;
}

Result<void> AppleContainerPlace::start_gatekeeper(const std::string& id, const std::string& key) {
  const Names n = names_for(id);
  if (Result<std::string> s = run({"start", n.gatekeeper}, n.gatekeeper, kAppleChangeTimeout); !s) {
    return s.error();
  }
  if (Result<void> r = wait_gatekeeper_ready(*this, id); !r) return r;
  return deliver_window_key(*this, id, key);
}

Result<SpaceSummary> AppleContainerPlace::create(const CreateRequest& request) {
  AppleSpec spec;
  spec.id = request.id.empty() ? random_hex(6) : request.id;
  if (!is_space_id(spec.id)) {
    return fail(Code::kInvalidArgument, "space create: an id is 12 lowercase hex digits");
  }
  if (!is_display_name(request.name)) {
    return fail(Code::kInvalidArgument,
                "space create: a name is 1 to 100 bytes of UTF-8 without control characters");
  }
  spec.owner = options_.owner;
  spec.name = request.name;
  spec.created = now_utc_iso();
  spec.memory_bytes = request.memory_bytes > 0 ? request.memory_bytes : kDefaultSpaceMemory;
  if (spec.memory_bytes < kMinSpaceMemory) {
    return fail(Code::kInvalidArgument, "space create: --memory is below 64 MiB");
  }
  spec.memory_bytes = (spec.memory_bytes >> 20) << 20;  // the CLI's granularity is 1 MiB
  spec.cpus = std::max<std::int64_t>(
      1, (request.nano_cpus > 0 ? request.nano_cpus : kNanoCpusPerCpu) / kNanoCpusPerCpu);
  spec.disk_bytes = request.disk_bytes > 0 ? request.disk_bytes : kDefaultDiskBytes;
  spec.command = request.command;
  spec.window_key = random_hex(32);
  Result<std::string> gk = read_digest_record(options_.gatekeeper_image_file);
  if (!gk) return gk.error();
  Result<std::string> sp = request.space_image.empty()
                               ? read_digest_record(options_.space_image_file)
                               : Result<std::string>(request.space_image);
  if (!sp) return sp.error();
  if (gk->empty() || !is_digest_reference(*sp)) {
    return fail(
        Code::kImageMissing,
        "space create: container pulls images by registry digest; run spacectl image push first");
  }
  spec.gatekeeper_image = *gk;
  spec.space_image = *sp;
  Result<json> taken = owned(spec.id);
  if (!taken) return taken.error();
  if (!(*taken)["containers"].empty() || !(*taken)["networks"].empty() ||
      !(*taken)["volumes"].empty()) {
    return fail(Code::kInvalidArgument, "space create: id " + spec.id + " is in use");
  }
  auto rollback = [&](Failure f) -> Failure {
    if (Result<void> r = remove_everything(spec.id); !r) {
      f.message += "; rollback: " + r.error().message;
    }
    return f;
  };
  const Names n = names_for(spec.id);
  for (const std::string& image : {spec.gatekeeper_image, spec.space_image}) {
    if (Result<std::string> p = run({"image", "pull", image}, image, kApplePullTimeout); !p) {
      return p.error();
    }
  }
  for (const std::vector<std::string>& step :
       {network_create_argv(spec, Role::kInnerNetwork),
        network_create_argv(spec, Role::kOuterNetwork), volume_create_argv(spec, Role::kHomeVolume),
        volume_create_argv(spec, Role::kWorkVolume), setup_run_argv(spec)}) {
    if (Result<std::string> r = run(step, step.back(), kAppleChangeTimeout); !r) {
      return rollback(r.error());
    }
  }
  Result<json> inner = run_json({"network", "inspect", n.inner}, "network " + n.inner);
  if (!inner) return rollback(inner.error());
  const json entry = inner->empty() ? json() : (*inner)[0];
  const json subnet = member(member(entry, "status"), "ipv4Subnet");
  if (!subnet.is_string()) {
    return rollback(fail(Code::kVerifyFailed, "network " + n.inner + ": no IPv4 subnet"));
  }
  if (member(member(entry, "configuration"), "mode") != json("hostOnly")) {
    return rollback(fail(Code::kVerifyFailed, "network " + n.inner + ": not host-only"));
  }
  spec.inner_subnet = subnet;
  if (Result<std::string> r = run(gatekeeper_create_argv(spec), n.gatekeeper, kAppleChangeTimeout);
      !r) {
    return rollback(r.error());
  }
  Result<json> gk_entry = container(spec.id, Role::kGatekeeper);
  if (!gk_entry) return rollback(gk_entry.error());
  if (std::vector<Difference> d = verify_container(*gk_entry, spec, Role::kGatekeeper);
      !d.empty()) {
    return rollback(fail(Code::kVerifyFailed, "space create: gatekeeper: " + d.front().check +
                                                  ": " + d.front().message));
  }
  if (Result<void> r = start_gatekeeper(spec.id, spec.window_key); !r) return rollback(r.error());
  gk_entry = container(spec.id, Role::kGatekeeper);
  if (!gk_entry) return rollback(gk_entry.error());
  for (const json& att : member(member(*gk_entry, "status"), "networks")) {
    if (member(att, "network") == json(n.inner)) {
      spec.gatekeeper_address = address_only(member(att, "ipv4Address").get<std::string>());
    }
  }
  if (spec.gatekeeper_address.empty()) {
    return rollback(
        fail(Code::kVerifyFailed, "gatekeeper " + n.gatekeeper + ": no address on " + n.inner));
  }
  if (Result<std::string> r = run(space_create_argv(spec), n.space, kAppleChangeTimeout); !r) {
    return rollback(r.error());
  }
  Result<std::vector<Difference>> v = verify(spec.id);
  if (!v) return rollback(v.error());
  if (!v->empty()) {
    return rollback(
        fail(Code::kVerifyFailed, "space create: " + v->front().check + ": " + v->front().message));
  }
  if (Result<std::string> r = run({"start", n.space}, n.space, kAppleChangeTimeout); !r) {
    return rollback(r.error());
  }
  SpaceSummary s;
  s.id = spec.id;
  s.name = spec.name;
  s.created = spec.created;
  s.space_state = s.gatekeeper_state = "running";
  s.window_url = std::string(kWindowBase) + spec.window_key;
  return s;
}

Result<std::vector<SpaceSummary>> AppleContainerPlace::list() {
  Result<json> mine = owned("");
  if (!mine) return mine.error();
  std::map<std::string, SpaceSummary> by_id;
  for (const json& c : (*mine)["containers"]) {
    const json labels = member(member(c, "configuration"), "labels");
    const std::string id = labels.value(std::string(kLabelId), "");
    const std::string role = labels.value(std::string(kLabelRole), "");
    if (!is_space_id(id) || (role != "space" && role != "gatekeeper")) continue;
    SpaceSummary& s = by_id[id];
    s.id = id;
    const std::string state = member(member(c, "status"), "state").is_string()
                                  ? member(member(c, "status"), "state").get<std::string>()
                                  : "unknown";
    const std::string word = state == "running" ? "running" : "exited";
    if (role == "space") {
      s.name = labels.value(std::string(kLabelName), "");
      s.created = labels.value(std::string(kLabelCreated), "");
      s.space_state = word;
    } else {
      s.gatekeeper_state = word;
    }
  }
  std::vector<SpaceSummary> out;
  for (auto& [id, s] : by_id) {
    if (s.space_state.empty()) s.space_state = "missing";
    if (s.gatekeeper_state.empty()) s.missing.push_back(names_for(id).gatekeeper);
    out.push_back(s);
  }
  return out;
}

Result<ExecOutput> AppleContainerPlace::exec(const std::string& id, ExecTarget target,
                                             const std::vector<std::string>& argv,
                                             const std::string& stdin_bytes,
                                             std::chrono::milliseconds timeout) {
  const Role role = target == ExecTarget::kSpace ? Role::kSpace : Role::kGatekeeper;
  Result<json> c = container(id, role);
  if (!c) return c.error();
  if (member(member(*c, "status"), "state") != json("running")) {
    return fail(Code::kSpaceNotRunning, "space " + id + ": not running");
  }
  ProcessRequest r;
  r.argv = {program(),
            "exec",
            "--interactive",
            "--user",
            std::string(role == Role::kSpace ? kSpaceUser : kGatekeeperUser),
            role == Role::kSpace ? names_for(id).space : names_for(id).gatekeeper};
  r.argv.insert(r.argv.end(), argv.begin(), argv.end());
  r.stdin_bytes = stdin_bytes;
  r.timeout = timeout;
  ProcessOutcome o = run_process(r);
  if (!o.exited || o.timed_out) {
    return fail(o.timed_out ? Code::kCommandTimeout : Code::kCommandFailed,
                "container exec " + r.argv[5] + ": " + o.describe());
  }
  return ExecOutput{o.exit_code, std::move(o.out), std::move(o.err)};
}

Result<std::vector<std::string>> AppleContainerPlace::exec_argv(const std::string& id) {
  Result<json> c = container(id, Role::kSpace);
  if (!c) return c.error();
  if (member(member(*c, "status"), "state") != json("running")) {
    return fail(Code::kSpaceNotRunning, "space " + id + ": not running");
  }
  return std::vector<std::string>{
      program(), "exec", "--interactive", "--user", std::string(kSpaceUser), names_for(id).space};
}

Result<std::vector<std::string>> AppleContainerPlace::interactive_exec_argv(const std::string& id,
                                                                            bool terminal) {
  Result<std::vector<std::string>> a = exec_argv(id);
  if (!a || !terminal) return a;
  a->insert(a->begin() + 2, "--tty");  // after `container exec`
  return a;
}

Result<std::vector<std::string>> AppleContainerPlace::connect(const std::string& id,
                                                              std::uint16_t port) {
  Result<std::vector<std::string>> a = exec_argv(id);
  if (!a) return a.error();
  a->insert(a->end(), {"/bin/nc", "127.0.0.1", std::to_string(port)});
  return a;
}

Result<void> AppleContainerPlace::stop(const std::string& id) {
  Result<json> c = container(id, Role::kSpace);
  if (!c) return c.error();
  for (const std::string& name : {names_for(id).space, names_for(id).gatekeeper}) {
    if (Result<std::string> r = run({"stop", "--time", "10", name}, name, kAppleChangeTimeout);
        !r) {
      return r.error();
    }
  }
  return {};
}

Result<void> AppleContainerPlace::start(const std::string& id) {
  Result<json> space = container(id, Role::kSpace);
  if (!space) return space.error();
  Result<AppleSpec> spec = spec_of(id, *space);
  if (!spec) return spec.error();
  Result<std::vector<Difference>> v = verify(id);
  if (!v) return v.error();
  if (!v->empty()) {
    return fail(Code::kVerifyFailed,
                "space start: " + v->front().check + ": " + v->front().message);
  }
  Result<json> gk = container(id, Role::kGatekeeper);
  if (!gk) return gk.error();
  if (member(member(*gk, "status"), "state") != json("running")) {
    if (Result<void> r = start_gatekeeper(id, spec->window_key); !r) return r;
  }
  if (member(member(*space, "status"), "state") == json("running")) return {};
  Result<std::string> r =
      run({"start", names_for(id).space}, names_for(id).space, kAppleChangeTimeout);
  if (!r) return r.error();
  return {};
}

Result<void> AppleContainerPlace::remove_everything(const std::string& id) {
  Result<json> mine = owned(id);
  if (!mine) return mine.error();
  std::string failed;
  auto name_of = [](const json& o) {
    const json& c = member(o, "configuration");
    if (member(c, "id").is_string()) return member(c, "id").get<std::string>();
    if (member(c, "name").is_string()) return member(c, "name").get<std::string>();
    return member(o, "name").is_string() ? member(o, "name").get<std::string>() : std::string();
  };
  for (const json& c : (*mine)["containers"]) {
    if (Result<std::string> r =
            run({"delete", "--force", name_of(c)}, name_of(c), kAppleChangeTimeout);
        !r) {
      failed += r.error().message + "; ";
    }
  }
  for (const json& v : (*mine)["volumes"]) {
    if (Result<std::string> r =
            run({"volume", "delete", name_of(v)}, name_of(v), kAppleChangeTimeout);
        !r) {
      failed += r.error().message + "; ";
    }
  }
  for (const json& n : (*mine)["networks"]) {
    if (Result<std::string> r =
            run({"network", "delete", name_of(n)}, name_of(n), kAppleChangeTimeout);
        !r) {
      failed += r.error().message + "; ";
    }
  }
  if (!failed.empty()) return fail(Code::kCommandFailed, "space remove " + id + ": " + failed);
  return {};
}

Result<void> AppleContainerPlace::remove(const std::string& id) {
  if (!is_space_id(id)) {
    return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  }
  Result<json> mine = owned(id);
  if (!mine) return mine.error();
  if ((*mine)["containers"].empty() && (*mine)["networks"].empty() && (*mine)["volumes"].empty()) {
    return fail(Code::kSpaceNotFound, "space " + id + ": nothing of this owner carries that id");
  }
  return remove_everything(id);
}

}  // namespace controller::apple
