// place check on the Apple container place: the CLI and its API server answer, then probes on a
// fresh host-only network: a listener there must answer (positive control), a public address
// must not.
#include "controller/apple_place.h"
#include "controller/docker_place.h"
#include "controller/image_ensure.h"
#include "controller/process.h"
#include "controller/records.h"

namespace controller::apple {

using detail::add_labels;
using detail::address_only;
using detail::label_spec;
using detail::member;
using nlohmann::json;

namespace {

// A raw public address the isolated probe must not reach (a public DNS resolver's, on 443): on a
// Mac with net.inet.ip.forwarding=1 a host-only network passes outbound TCP (apple/container
// issue 2062), and only a real attempt shows it.
inline constexpr std::string_view kPublicProbe = "1.1.1.1";
inline constexpr int kProbePort = 8080;

}  // namespace

Result<CheckReport> AppleContainerPlace::check() {
  CheckReport r;
  r.place = "apple-container";
  Result<json> version = run_json({"system", "version", "--format", "json"}, "(system version)");
  if (!version) return version.error();
  std::string cli, server;
  for (const json& v : *version) {
    if (member(v, "appName") == json("container")) cli = member(v, "version").get<std::string>();
    if (member(v, "appName") == json("container-apiserver"))
      server = member(v, "version").get<std::string>();
  }
  if (server.empty())
    return fail(Code::kPlaceUnreachable,
                "container system version: no API server answered; run `container system start`");
  r.engine_version = "container " + cli;
  r.os_arch = "macos/arm64";
  r.findings.push_back("container " + cli + " answers; " + server);
  // Every container is a VM of its own: its kernel, its seccomp defaults; no host kernel shared.
  r.seccomp = true;
  r.findings.push_back(
      "one VM per container: the space shares no kernel with the Mac or with the gatekeeper");
  r.findings.push_back(
      "cannot restrict: a host-only network still reaches services the Mac listens on with all "
      "interfaces (apple/container issue 1320): bind host services to 127.0.0.1");
  r.findings.push_back(
      "no no-new-privileges flag and no custom seccomp profile: the VM boundary stands in for "
      "them");
  // The probe: a listener and a client on a fresh host-only network.
  const std::string pid = random_hex(6);
  const std::string net = "gk-probe-" + pid + "-network";
  AppleSpec ps;
  ps.id = pid;
  ps.owner = options_.owner;
  ps.name = "probe";
  ps.created = now_utc_iso();
  Result<std::string> image = read_digest_record(options_.space_image_file);
  if (!image) return image.error();
  if (image->empty()) {
    r.findings.push_back(
        "the space image has no registry digest (run spacectl image push): the probes cannot run");
    return r;
  }
  std::vector<std::string> made_containers;
  auto cleanup = [&]() {
    for (const std::string& c : made_containers) (void)run({"delete", "--force", c}, c);
    (void)run({"network", "delete", net}, net);
  };
  std::vector<std::string> a = {"network", "create", "--internal"};
  add_labels(a, ps, Role::kProbe);
  a.push_back(net);
  if (Result<std::string> n = run(a, net, kAppleChangeTimeout); !n) return n.error();
  std::string listener_ip;
  for (const std::string role : {"listener", "client"}) {
    const std::string name = "gk-probe-" + pid + "-" + role;
    std::vector<std::string> c = {
        "run",         "--detach",   "--name",    name,       "--user", std::string(kSpaceUser),
        "--read-only", "--cap-drop", "ALL",       "--memory", "64M",    "--cpus",
        "1",           "--no-dns",   "--network", net};
    add_labels(c, ps, Role::kProbe);
    c.push_back(*image);
    if (role == "listener")
      c.insert(c.end(), {"/bin/busybox", "httpd", "-f", "-p", std::to_string(kProbePort)});
    else
      c.insert(c.end(), {"/bin/busybox", "sleep", "600"});
    Result<std::string> ran = run(c, name, kApplePullTimeout);
    if (!ran) {
      cleanup();
      return ran.error();
    }
    made_containers.push_back(name);
    if (role == "listener") {
      Result<json> in = run_json({"inspect", name}, name);
      if (!in || in->empty()) {
        cleanup();
        return in ? fail(Code::kInternal, "container inspect " + name + ": empty") : in.error();
      }
      for (const json& att : member(member((*in)[0], "status"), "networks"))
        if (member(att, "network") == json(net))
          listener_ip = address_only(member(att, "ipv4Address").get<std::string>());
    }
  }
  auto reach = [&](const std::string& host, int port) -> Result<bool> {
    ProcessRequest pr;
    pr.argv = {program(),
               "exec",
               "--interactive",
               "--user",
               std::string(kSpaceUser),
               "gk-probe-" + pid + "-client",
               "/bin/busybox",
               "nc",
               "-z",
               "-w",
               "5",
               host,
               std::to_string(port)};
    pr.timeout = kAppleQueryTimeout;
    const ProcessOutcome o = run_process(pr);
    if (!o.exited || o.timed_out)
      return fail(Code::kCommandFailed, "container exec probe: " + o.describe());
    return o.exit_code == 0;
  };
  Result<bool> control = reach(listener_ip, kProbePort);
  Result<bool> out = reach(std::string(kPublicProbe), 443);
  cleanup();
  if (!control) return control.error();
  if (!out) return out.error();
  r.positive_control = *control;
  r.isolation_proved = !*out;
  r.findings.push_back(
      *control
          ? "positive control: the probe reached a listener on its host-only network"
          : "positive control FAILED: the probe could not reach a listener on its own network");
  r.findings.push_back(*out ? "REACHED a public address from a host-only network: the Mac forwards "
                              "(net.inet.ip.forwarding=1, "
                              "issue 2062): unusable for allowlist spaces until forwarding is off"
                            : "refused: a public address from a host-only network");
  return r;
}

}  // namespace controller::apple
