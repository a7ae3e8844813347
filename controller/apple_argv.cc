// The Apple place's argv for each step of a create (tests compare them exactly) and the label
// and JSON helpers apple_place.cc, apple_check.cc and apple_verify.cc share.
#include "controller/apple_place.h"

#include "controller/records.h"

namespace controller::apple {

using nlohmann::json;

namespace detail {

SpaceSpec label_spec(const AppleSpec& s) {
  SpaceSpec l;
  l.id = s.id;
  l.owner = s.owner;
  l.name = s.name;
  l.created = s.created;
  return l;
}

void add_labels(std::vector<std::string>& a, const AppleSpec& spec, Role role) {
  for (const auto& [k, v] : labels_for(label_spec(spec), role)) {
    a.insert(a.end(), {"--label", k + "=" + v});
  }
}

const json& member(const json& o, const char* key) {
  static const json null;
  return o.is_object() && o.contains(key) ? o[key] : null;
}

std::string address_only(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

}  // namespace detail

using detail::add_labels;
using detail::address_only;

namespace {

std::string mib(std::int64_t bytes) { return std::to_string(bytes >> 20) + "M"; }

// The space's two volumes where the space sees them: HOME and its work folder.
std::vector<std::string> volume_mounts(const AppleSpec& spec, const Names& n) {
  return {"--mount", "type=volume,source=" + n.home + ",target=" + std::string(kHomePath),
          "--mount", "type=volume,source=" + n.work + ",target=" + work_path(spec.id)};
}

// `create` of a long-lived container, hardened alike for the gatekeeper and the space: its name
// (and an init process when `init`), a fixed user, a read-only root, no capability, no core file,
// bounded memory and CPUs.
std::vector<std::string> hardened_create(const std::string& name, bool init, std::string_view user,
                                         const std::string& memory, const std::string& cpus) {
  std::vector<std::string> a = {"create", "--name", name};
  if (init) a.push_back("--init");
  a.insert(a.end(), {"--user", std::string(user), "--read-only", "--cap-drop", "ALL", "--ulimit",
                     std::string(kCoreUlimit), "--memory", memory, "--cpus", cpus});
  return a;
}

}  // namespace

std::vector<std::string> network_create_argv(const AppleSpec& spec, Role role) {
  const Names n = names_for(spec.id);
  // The inner network is host-only (--internal): no route out. The outer one is the default NAT.
  std::vector<std::string> a = {"network", "create"};
  if (role == Role::kInnerNetwork) a.push_back("--internal");
  add_labels(a, spec, role);
  a.push_back(role == Role::kInnerNetwork ? n.inner : n.outer);
  return a;
}

std::vector<std::string> volume_create_argv(const AppleSpec& spec, Role role) {
  const Names n = names_for(spec.id);
  // Each volume is an ext4 block device of its own inside the VM: -s is a hard size bound.
  std::vector<std::string> a = {"volume", "create"};
  add_labels(a, spec, role);
  a.insert(a.end(),
           {"-s", std::to_string(spec.disk_bytes), role == Role::kHomeVolume ? n.home : n.work});
  return a;
}

std::vector<std::string> setup_run_argv(const AppleSpec& spec) {
  const Names n = names_for(spec.id);
  // Fresh volumes come up root-owned; one root one-shot with CHOWN only, no network, gives them to
  // the space user and removes itself.
  std::vector<std::string> a = {"run", "--rm", "--name", n.space + "-setup", "--user", "0:0"};
  a.insert(a.end(), {"--cap-drop", "ALL", "--cap-add", "CHOWN", "--read-only"});
  a.insert(a.end(), {"--network", "none", "--memory", "128M", "--cpus", "1"});
  const std::vector<std::string> mounts = volume_mounts(spec, n);
  a.insert(a.end(), mounts.begin(), mounts.end());
  add_labels(a, spec, Role::kProbe);
  a.insert(a.end(), {spec.space_image, "/bin/busybox", "chown", std::string(kSpaceUser),
                     std::string(kHomePath), work_path(spec.id)});
  return a;
}

std::vector<std::string> gatekeeper_create_argv(const AppleSpec& spec) {
  const Names n = names_for(spec.id);
  std::vector<std::string> a =
      hardened_create(n.gatekeeper, false, kGatekeeperUser, mib(kGatekeeperMemory), "1");
  a.insert(a.end(), {"--network", n.inner, "--network", n.outer});
  add_labels(a, spec, Role::kGatekeeper);
  a.push_back(spec.gatekeeper_image);
  const std::vector<std::string> command = gatekeeper_command(spec.inner_subnet);
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

std::vector<std::string> space_environment(const AppleSpec& spec) {
  // A host-only network resolves no names, and the space may reach no DNS server anyway: it knows
  // the gatekeeper by its inner address, in the same variables every place sets.
  const std::string gk = spec.gatekeeper_address;
  const std::string proxy = "http://" + gk + ":3128";
  const std::string no_proxy = gk + ",localhost,127.0.0.1";
  return {"HOME=" + std::string(kHomePath),
          "HTTPS_PROXY=" + proxy,
          "https_proxy=" + proxy,
          "HTTP_PROXY=" + proxy,
          "http_proxy=" + proxy,
          "NO_PROXY=" + no_proxy,
          "no_proxy=" + no_proxy,
          "NODE_USE_ENV_PROXY=1",
          std::string(kWindowEnv) + "=http://" + gk + ":8080/k/" + spec.window_key};
}

std::vector<std::string> space_create_argv(const AppleSpec& spec) {
  const Names n = names_for(spec.id);
  std::vector<std::string> a =
      hardened_create(n.space, true, kSpaceUser, mib(spec.memory_bytes), std::to_string(spec.cpus));
  a.insert(a.end(), {"--no-dns", "--network", n.inner, "--tmpfs", "/tmp"});
  const std::vector<std::string> mounts = volume_mounts(spec, n);
  a.insert(a.end(), mounts.begin(), mounts.end());
  for (const std::string& e : space_environment(spec)) a.insert(a.end(), {"--env", e});
  add_labels(a, spec, Role::kSpace);
  a.push_back(spec.space_image);
  a.insert(a.end(), spec.command.begin(), spec.command.end());
  return a;
}

}  // namespace controller::apple
