// place check on Kubernetes: proved by trying. The cluster answers and lets us do what a space
// needs (kubectl auth can-i, one verb at a time); then probe pods in a throwaway namespace, behind
// the same kind of policies a space gets, try to get out: an isolated probe must not reach a
// listener in another pod, the API server or the metadata address, and must reach the one
// listener its policy allows (the positive control: without it, "refused" could mean "nothing
// works"). A cluster whose network plugin accepts NetworkPolicy objects but does not enforce
// them fails the isolation probe and is reported as unusable for allowlist spaces.
#include "controller/docker_place.h"
#include "controller/image_ensure.h"
#include "controller/kube_place.h"
#include "controller/records.h"

namespace controller::kube {

using nlohmann::json;

namespace {

inline constexpr std::string_view kMetadataAddress =
    "169.254.169.254";  // the clouds' instance metadata

// What a space needs to be allowed, as `kubectl auth can-i VERB RESOURCE` asks it.
const std::vector<std::pair<std::string, std::string>>& needed_permissions() {
  static const std::vector<std::pair<std::string, std::string>> kNeeded = {
      {"create", "namespaces"},
      {"delete", "namespaces"},
      {"get", "namespaces"},
      {"list", "namespaces"},
      {"create", "pods"},
      {"delete", "pods"},
      {"patch", "pods"},
      {"get", "pods"},
      {"create", "pods/exec"},
      {"create", "services"},
      {"create", "persistentvolumeclaims"},
      {"create", "serviceaccounts"},
      {"create", "networkpolicies.networking.k8s.io"},
      {"list", "rolebindings.rbac.authorization.k8s.io"}};
  return kNeeded;
}

}  // namespace

Result<CheckReport> KubernetesPlace::check() {
  CheckReport report;
  report.place = "kubernetes";
  const std::string& base = options_.kube_namespace;
  Result<json> version =
      cli_.json(base, {"version", "--output", "json"}, "of context " + cli_.context());
  if (!version) return version.error();
  const std::string client =
      version->value("clientVersion", json::object()).value("gitVersion", "");
  const json server = version->value("serverVersion", json());
  if (!server.is_object() || server.value("gitVersion", "").empty())
    return fail(Code::kPlaceUnreachable, "kubectl version (context " + cli_.context() +
                                             "): no server version: the API server did not answer");
  report.engine_version =
      "kubernetes " + server.value("gitVersion", "") + " (kubectl " + client + ")";
  report.os_arch = server.value("platform", "");
  report.findings.push_back("the API server of context " + cli_.context() +
                            " answers: " + report.engine_version);

  std::string refused;
  for (const auto& [verb, resource] : needed_permissions()) {
    Result<ProcessOutcome> o =
        cli_.run_raw(base, {"auth", "can-i", verb, resource}, "auth can-i " + verb + " " + resource,
                     kKubeQueryTimeout, {});
    if (!o) return o.error();
    if (unreachable_text(o->err))
      return fail(Code::kPlaceUnreachable,
                  "kubectl auth can-i (context " + cli_.context() + "): " + o->describe());
    if (o->out.rfind("yes", 0) != 0)
      refused += (refused.empty() ? "" : ", ") + verb + " " + resource;
  }
  if (!refused.empty()) {
    report.findings.push_back("this account may not: " + refused +
                              " (RBAC): spaces cannot be made here");
    return report;
  }
  report.findings.push_back("RBAC allows every verb a space needs (" +
                            std::to_string(needed_permissions().size()) + " checked)");
  // RuntimeDefault is every CRI runtime's own profile; Localhost needs our files on the node.
  report.seccomp = true;

  Result<std::string> image = read_digest_record(options_.space_image_file);
  if (!image) return image.error();
  if (image->empty()) {
    report.findings.push_back(
        "the space image has no registry digest (run spacectl image push): the probes cannot run");
    return report;
  }
  ProbeSpec probe;
  probe.ns = base + "-probe-" + random_hex(6);
  probe.owner = options_.owner;
  probe.created = now_utc_iso();
  probe.image = *image;
  probe.seccomp_localhost = options_.seccomp_localhost;
  Result<std::string> made =
      cli_.run(probe.ns, {"create", "--filename", "-", "--output", "json"}, "namespace " + probe.ns,
               kKubeChangeTimeout, probe_namespace(probe).dump());
  if (!made) return made.error();
  auto finish = [&](Result<CheckReport> r) -> Result<CheckReport> {
    Result<void> gone = delete_namespace(probe.ns);
    if (!gone) {
      if (!r)
        return fail(r.error().code,
                    r.error().message + "; probe namespace: " + gone.error().message);
      return gone.error();
    }
    return r;
  };
  made =
      cli_.run(probe.ns, {"create", "--filename", "-", "--output", "json"}, "probes in " + probe.ns,
               kKubeChangeTimeout, list_of(probe_objects(probe)).dump());
  if (!made) return finish(made.error());
  std::map<std::string, std::string> ip;
  for (std::string_view name : {kProbeAllowed, kProbeDenied, kProbeClient}) {
    if (Result<void> r = wait_running(probe.ns, std::string(name)); !r) {
      if (options_.seccomp_localhost)
        return finish(
            fail(r.error().code,
                 r.error().message +
                     " (the probes use the Localhost seccomp profiles: does every node carry "
                     "them under the kubelet's seccomp root?)"));
      return finish(r.error());
    }
    Result<json> p = pod(probe.ns, std::string(name));
    if (!p) return finish(p.error());
    ip[std::string(name)] = p->value("status", json::object()).value("podIP", "");
  }
  report.findings.push_back(
      options_.seccomp_localhost
          ? "the probe pods ran under the Localhost seccomp profiles: the node carries them"
          : "pods run under the runtime's default seccomp profile (RuntimeDefault), not "
            "seccomp-profiles/: install them on the nodes and use --seccomp-localhost");
  std::string api_ip;
  Result<json> api = cli_.json("default", {"get", "service", "kubernetes", "--output", "json"},
                               "service default/kubernetes");
  if (api && api->contains("spec")) api_ip = (*api)["spec"].value("clusterIP", "");
  auto reach = [&](const std::string& host, int port) -> Result<bool> {
    Result<ProcessOutcome> o =
        cli_.run_raw(probe.ns,
                     {"exec", "-i", std::string(kProbeClient), "--container", "probe", "--",
                      "/bin/busybox", "nc", "-z", "-w", "5", host, std::to_string(port)},
                     "probe " + host + ":" + std::to_string(port), kKubeQueryTimeout, {});
    if (!o) return o.error();
    std::string err = o->err;
    const std::optional<int> status = exec_status(*o, err);
    if (!status)
      return fail(Code::kCommandFailed, "kubectl exec in " + probe.ns + "/" +
                                            std::string(kProbeClient) + ": " + o->describe());
    return *status == 0;
  };
  Result<bool> allowed = reach(ip[std::string(kProbeAllowed)], kProbePort);
  if (!allowed) return finish(allowed.error());
  report.positive_control = *allowed;
  report.findings.push_back(
      *allowed ? "positive control: the isolated probe reached the one listener its policy allows"
               : "positive control FAILED: the isolated probe could not reach the listener its "
                 "policy allows");
  std::vector<std::pair<std::string, std::pair<std::string, int>>> denied = {
      {"a listener in another pod", {ip[std::string(kProbeDenied)], kProbePort}},
      {"the metadata address", {std::string(kMetadataAddress), 80}}};
  if (!api_ip.empty())
    denied.push_back({"the API server", {api_ip, 443}});
  else
    report.findings.push_back(
        "the API server's cluster IP could not be read (service default/kubernetes): not probed");
  bool isolated = true;
  for (const auto& [what, where] : denied) {
    Result<bool> got = reach(where.first, where.second);
    if (!got) return finish(got.error());
    report.findings.push_back(std::string(*got ? "REACHED " : "refused: ") + what + " (" +
                              where.first + ":" + std::to_string(where.second) + ")");
    if (*got) isolated = false;
  }
  report.isolation_proved = isolated && !api_ip.empty();
  if (!isolated)
    report.findings.push_back(
        "this cluster's network plugin does not enforce NetworkPolicy egress: unusable for "
        "allowlist spaces");
  return finish(report);
}

}  // namespace controller::kube
