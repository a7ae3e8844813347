#include "controller/kube_objects.h"

#include <set>

namespace controller::kube {

using nlohmann::json;

namespace {

constexpr std::string_view kPsaPrefix = "pod-security.kubernetes.io/";

bool alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string milli(std::int64_t m) { return std::to_string(m) + "m"; }

json seccomp(bool localhost, std::string_view profile) {
  if (localhost) return {{"type", "Localhost"}, {"localhostProfile", std::string(profile)}};
  return {{"type", "RuntimeDefault"}};
}

json meta(const KubeSpec& spec, std::string_view name, Role role) {
  return {{"name", std::string(name)}, {"namespace", spec.ns}, {"labels", labels(spec, role)}};
}

// Both containers: nothing to escalate with, nothing to write but their volumes.
json container_security(std::int64_t uid, bool localhost, std::string_view profile) {
  return {{"allowPrivilegeEscalation", false},
          {"privileged", false},
          {"readOnlyRootFilesystem", true},
          {"runAsNonRoot", true},
          {"runAsUser", uid},
          {"runAsGroup", uid},
          {"capabilities", {{"drop", json::array({"ALL"})}}},
          {"seccompProfile", seccomp(localhost, profile)}};
}

// Pod fields both pods share: no token, no host namespaces, no service links (they would put
// every Service of the namespace into the environment), no restart (start makes pods again), and
// the gate verify lifts.
json pod_spec_common(std::int64_t uid, bool localhost, std::string_view profile) {
  return {{"serviceAccountName", std::string(kServiceAccount)},
          {"automountServiceAccountToken", false},
          {"enableServiceLinks", false},
          {"hostNetwork", false},
          {"hostPID", false},
          {"hostIPC", false},
          {"shareProcessNamespace", false},
          {"restartPolicy", "Never"},
          {"terminationGracePeriodSeconds", 10},
          {"schedulingGates", json::array({{{"name", std::string(kVerifyGate)}}})},
          {"securityContext",
           {{"runAsNonRoot", true},
            {"runAsUser", uid},
            {"runAsGroup", uid},
            {"seccompProfile", seccomp(localhost, profile)}}}};
}

json port(std::string_view name, int number) {
  return {
      {"name", std::string(name)}, {"port", number}, {"targetPort", number}, {"protocol", "TCP"}};
}

json tcp(int number) { return {{"protocol", "TCP"}, {"port", number}}; }

json role_selector(const std::string& id, Role role) {
  return {{"matchLabels",
           {{std::string(kLabelId), id}, {std::string(kLabelRole), std::string(role_word(role))}}}};
}

json policy(const KubeSpec& spec, std::string_view name, json pod_selector, json types,
            json rules) {
  json p = {
      {"apiVersion", "networking.k8s.io/v1"},
      {"kind", "NetworkPolicy"},
      {"metadata", meta(spec, name, Role::kInnerNetwork)},
      {"spec", {{"podSelector", std::move(pod_selector)}, {"policyTypes", std::move(types)}}}};
  for (auto& [k, v] : rules.items()) p["spec"][k] = v;
  return p;
}

}  // namespace

bool is_label_value(std::string_view v) {
  if (v.empty() || v.size() > 63 || !alnum(v.front()) || !alnum(v.back())) return false;
  for (char c : v)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool is_namespace_base(std::string_view base) {
  // <base>-<12 hex> and <base>-probe-<12 hex> stay within a DNS label's 63 characters.
  if (base.empty() || base.size() > 44 || base.front() == '-' || base.back() == '-') return false;
  for (char c : base)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return base.front() >= 'a' && base.front() <= 'z';
}

std::string space_namespace(std::string_view base, std::string_view id) {
  return std::string(base) + "-" + std::string(id);
}

std::string label_selector(std::string_view owner) {
  return std::string(kLabelMarker) + "=true," + std::string(kLabelOwner) + "=" + std::string(owner);
}

json labels(const KubeSpec& spec, Role role) {
  return {{std::string(kLabelMarker), "true"},
          {std::string(kLabelId), spec.id},
          {std::string(kLabelRole), std::string(role_word(role))},
          {std::string(kLabelOwner), spec.owner},
          {std::string(kLabelVersion), std::string(kControllerVersion)}};
}

json namespace_object(const KubeSpec& spec) {
  json l = labels(spec, Role::kInnerNetwork);
  l[std::string(kLabelRole)] = "namespace";
  for (const char* mode : {"enforce", "audit", "warn"}) {
    l[std::string(kPsaPrefix) + mode] = std::string(kPsaLevel);
    l[std::string(kPsaPrefix) + mode + "-version"] = "latest";
  }
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata",
           {{"name", spec.ns},
            {"labels", l},
            {"annotations",
             {{std::string(kAnnotationName), spec.name},
              {std::string(kAnnotationCreated), spec.created},
              {std::string(kAnnotationPods), pods_annotation(spec)}}}}}};
}

json service_account(const KubeSpec& spec) {
  // Bound to no Role (verify refuses any RoleBinding in the namespace) and never mounted.
  return {{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata", meta(spec, kServiceAccount, Role::kSpace)},
          {"automountServiceAccountToken", false}};
}

json claim(const KubeSpec& spec, Role role) {
  const bool home = role == Role::kHomeVolume;
  // The storage request is the size bound Docker's local volumes lacked: the provisioner makes a
  // volume of this size (one that ignores it is named in docs/places.md).
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", meta(spec, home ? "home" : "work", role)},
          {"spec",
           {{"accessModes", json::array({"ReadWriteOnce"})},
            {"volumeMode", "Filesystem"},
            {"resources", {{"requests", {{"storage", std::to_string(spec.disk_bytes)}}}}}}}};
}

json gatekeeper_service(const KubeSpec& spec) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", meta(spec, kGatekeeperAlias, Role::kGatekeeper)},
      {"spec",
       {{"type", "ClusterIP"},
        {"selector", role_selector(spec.id, Role::kGatekeeper)["matchLabels"]},
        {"ports", json::array({port("corridor", kCorridorPort), port("window", kWindowPort)})}}}};
}

std::vector<std::string> fixed_egress_except() {
  return {
      "0.0.0.0/8",       // RFC 1122 "this network"
      "10.0.0.0/8",      // RFC 1918 (the usual pod, service and node ranges)
      "100.64.0.0/10",   // RFC 6598 shared address space (pod ranges of several CNIs)
      "127.0.0.0/8",     // RFC 1122 loopback
      "169.254.0.0/16",  // RFC 3927 link-local: the metadata address 169.254.169.254
      "172.16.0.0/12",   // RFC 1918
      "192.0.0.0/24",    // RFC 6890 IETF protocol assignments
      "192.168.0.0/16",  // RFC 1918
      "198.18.0.0/15",   // RFC 2544 benchmarking
      "224.0.0.0/4",     // RFC 5771 multicast
      "240.0.0.0/4",     // RFC 1112 reserved, and broadcast
  };
}

namespace {

std::vector<std::string> fixed_egress_except_v6() {
  return {
      "::/128",         // RFC 4291 unspecified
      "::1/128",        // RFC 4291 loopback
      "::ffff:0:0/96",  // RFC 4291 IPv4-mapped: the v4 ranges again
      "64:ff9b::/96",   // RFC 6052 NAT64: the v4 ranges again
      "fc00::/7",       // RFC 4193 unique local (pod ranges; fd00:ec2::254, a metadata address)
      "fe80::/10",      // RFC 4291 link-local
      "ff00::/8",       // RFC 4291 multicast
  };
}

}  // namespace

std::vector<json> network_policies(const KubeSpec& spec) {
  std::vector<json> out;
  // Everything in the namespace is denied both ways unless a policy below allows it.
  out.push_back(policy(spec, "default-deny", json::object(), json::array({"Ingress", "Egress"}),
                       json::object()));
  // The space reaches the gatekeeper's corridor and window, nothing else: no DNS (it reads
  // `gatekeeper` from /etc/hosts), no API server, no other pod, no node.
  out.push_back(policy(
      spec, "space-egress", role_selector(spec.id, Role::kSpace), json::array({"Egress"}),
      {{"egress",
        json::array(
            {{{"to", json::array({{{"podSelector", role_selector(spec.id, Role::kGatekeeper)}}})},
              {"ports", json::array({tcp(kCorridorPort), tcp(kWindowPort)})}}})}}));
  out.push_back(policy(
      spec, "gatekeeper-ingress", role_selector(spec.id, Role::kGatekeeper),
      json::array({"Ingress"}),
      {{"ingress",
        json::array(
            {{{"from", json::array({{{"podSelector", role_selector(spec.id, Role::kSpace)}}})},
              {"ports", json::array({tcp(kCorridorPort), tcp(kWindowPort)})}}})}}));
  // The gatekeeper reaches port 443 anywhere public and the cluster's DNS; never the pod,
  // service or node ranges, nor the metadata address (its own address table refuses them too).
  std::vector<std::string> v4 = fixed_egress_except();
  std::vector<std::string> v6 = fixed_egress_except_v6();
  for (const std::string& r : spec.egress_except)
    (r.find(':') == std::string::npos ? v4 : v6).push_back(r);
  const json public_443 = {
      {"to", json::array({{{"ipBlock", {{"cidr", "0.0.0.0/0"}, {"except", v4}}}},
                          {{"ipBlock", {{"cidr", "::/0"}, {"except", v6}}}}})},
      {"ports", json::array({tcp(443)})}};
  const json dns = {
      {"to", json::array({{{"namespaceSelector",
                            {{"matchLabels", {{"kubernetes.io/metadata.name", "kube-system"}}}}},
                           {"podSelector", {{"matchLabels", {{"k8s-app", "kube-dns"}}}}}}})},
      {"ports", json::array({{{"protocol", "UDP"}, {"port", 53}}, tcp(53)})}};
  out.push_back(policy(spec, "gatekeeper-egress", role_selector(spec.id, Role::kGatekeeper),
                       json::array({"Egress"}), {{"egress", json::array({public_443, dns})}}));
  return out;
}

json gatekeeper_pod(const KubeSpec& spec) {
  json pod_spec = pod_spec_common(65532, spec.seccomp_localhost, kGatekeeperSeccompLocalhost);
  pod_spec["dnsPolicy"] = "ClusterFirst";  // the corridor resolves names through the cluster's DNS
  // The corridor and window bind the pod's own address, known only once the pod runs: the kubelet
  // expands $(POD_IP) in args from the downward API.
  pod_spec["containers"] = json::array(
      {{{"name", "gatekeeper"},
        {"image", spec.gatekeeper_image},
        {"imagePullPolicy", "IfNotPresent"},
        {"args", json::array({"serve", "--bind", "$(POD_IP)"})},
        {"env", json::array({{{"name", "POD_IP"},
                              {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}})},
        {"ports",
         json::array({{{"name", "corridor"}, {"containerPort", kCorridorPort}, {"protocol", "TCP"}},
                      {{"name", "window"}, {"containerPort", kWindowPort}, {"protocol", "TCP"}}})},
        {"resources",
         {{"requests",
           {{"cpu", milli(kGatekeeperCpuRequestMilli)},
            {"memory", std::to_string(kGatekeeperMemory)}}},
          {"limits",
           {{"memory", std::to_string(kGatekeeperMemory)},
            {"ephemeral-storage", std::to_string(kEphemeralLimit)}}}}},
        {"securityContext",
         container_security(65532, spec.seccomp_localhost, kGatekeeperSeccompLocalhost)}}});
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", meta(spec, "gatekeeper", Role::kGatekeeper)},
          {"spec", pod_spec}};
}

json space_pod(const KubeSpec& spec) {
  json pod_spec = pod_spec_common(70000, spec.seccomp_localhost, kSpaceSeccompLocalhost);
  pod_spec["securityContext"]["fsGroup"] =
      70000;  // fresh claims are root's; the space user owns them
  pod_spec["securityContext"]["fsGroupChangePolicy"] = "OnRootMismatch";
  // No DNS server at all: the only names the space uses are the gatekeeper's (/etc/hosts).
  pod_spec["dnsPolicy"] = "None";
  pod_spec["dnsConfig"] = {{"nameservers", json::array({"127.0.0.1"})}};
  pod_spec["hostAliases"] =
      json::array({{{"ip", spec.gatekeeper_service_ip},
                    {"hostnames", json::array({std::string(kGatekeeperAlias)})}}});
  SpaceSpec env_spec;
  env_spec.window_key = spec.window_key;
  json env = json::array();
  for (const std::string& e : space_environment(env_spec)) {
    const std::size_t eq = e.find('=');
    env.push_back({{"name", e.substr(0, eq)}, {"value", e.substr(eq + 1)}});
  }
  json c = {
      {"name", "space"},
      {"image", spec.space_image},
      {"imagePullPolicy", "IfNotPresent"},
      {"env", env},
      {"resources",
       {{"requests",
         {{"cpu", milli(kSpaceCpuRequestMilli)}, {"memory", std::to_string(spec.memory_bytes)}}},
        {"limits",
         {{"cpu", milli(spec.nano_cpus / 1000000)},
          {"memory", std::to_string(spec.memory_bytes)},
          {"ephemeral-storage", std::to_string(kEphemeralLimit)}}}}},
      {"securityContext",
       container_security(70000, spec.seccomp_localhost, kSpaceSeccompLocalhost)},
      {"volumeMounts", json::array({{{"name", "home"}, {"mountPath", std::string(kHomePath)}},
                                    {{"name", "work"}, {"mountPath", work_path(spec.id)}},
                                    {{"name", "tmp"}, {"mountPath", "/tmp"}}})}};
  if (!spec.command.empty()) c["args"] = spec.command;
  pod_spec["containers"] = json::array({c});
  pod_spec["volumes"] = json::array(
      {{{"name", "home"}, {"persistentVolumeClaim", {{"claimName", "home"}}}},
       {{"name", "work"}, {"persistentVolumeClaim", {{"claimName", "work"}}}},
       {{"name", "tmp"},
        {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", std::to_string(kSpaceTmp)}}}}});
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", meta(spec, "space", Role::kSpace)},
          {"spec", pod_spec}};
}

std::vector<json> namespaced_objects(const KubeSpec& spec) {
  std::vector<json> out = {service_account(spec), claim(spec, Role::kHomeVolume),
                           claim(spec, Role::kWorkVolume)};
  for (json& p : network_policies(spec)) out.push_back(std::move(p));
  out.push_back(gatekeeper_service(spec));
  return out;
}

json list_of(const std::vector<json>& items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

std::string pods_annotation(const KubeSpec& spec) {
  return json{{"gatekeeper_image", spec.gatekeeper_image},
              {"space_image", spec.space_image},
              {"memory", spec.memory_bytes},
              {"nano_cpus", spec.nano_cpus},
              {"disk", spec.disk_bytes},
              {"command", spec.command},
              {"window_key", spec.window_key},
              {"seccomp_localhost", spec.seccomp_localhost},
              {"egress_except", spec.egress_except}}
      .dump();
}

bool read_pods_annotation(std::string_view text, KubeSpec& spec) {
  const json a = json::parse(text, nullptr, false);
  if (!a.is_object()) return false;
  auto str = [&](const char* k) { return a.contains(k) && a[k].is_string(); };
  auto num = [&](const char* k) {
    return a.contains(k) && a[k].is_number_integer() && a[k].get<std::int64_t>() > 0;
  };
  auto strings = [&](const char* k) {
    if (!a.contains(k) || !a[k].is_array()) return false;
    for (const json& s : a[k])
      if (!s.is_string()) return false;
    return true;
  };
  if (!str("gatekeeper_image") || !str("space_image") || !num("memory") || !num("nano_cpus") ||
      !num("disk") || !strings("command") || !str("window_key") ||
      !a.contains("seccomp_localhost") || !a["seccomp_localhost"].is_boolean() ||
      !strings("egress_except"))
    return false;
  spec.gatekeeper_image = a["gatekeeper_image"];
  spec.space_image = a["space_image"];
  spec.memory_bytes = a["memory"];
  spec.nano_cpus = a["nano_cpus"];
  spec.disk_bytes = a["disk"];
  spec.command = a["command"].get<std::vector<std::string>>();
  spec.window_key = a["window_key"];
  spec.seccomp_localhost = a["seccomp_localhost"];
  spec.egress_except = a["egress_except"].get<std::vector<std::string>>();
  return true;
}

namespace {

void scan(const json& v, const std::string& where, std::vector<std::string>& out) {
  // Keys whose mere presence hands something over: Secrets, tokens, host files and devices.
  static const std::set<std::string> kForbiddenKeys = {"secretKeyRef",
                                                       "secretRef",
                                                       "secret",
                                                       "secretName",
                                                       "projected",
                                                       "serviceAccountToken",
                                                       "hostPath",
                                                       "envFrom",
                                                       "hostPort",
                                                       "csi",
                                                       "nfs",
                                                       "iscsi",
                                                       "flexVolume",
                                                       "imagePullSecrets",
                                                       "ephemeralContainers",
                                                       "initContainers",
                                                       "volumeDevices",
                                                       "sysctls",
                                                       "hostUsers"};
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) {
      const std::string at = where + "/" + k;
      if (kForbiddenKeys.count(k) != 0) out.push_back(at + " is present");
      if ((k == "privileged" || k == "allowPrivilegeEscalation" || k == "hostNetwork" ||
           k == "hostPID" || k == "hostIPC" || k == "automountServiceAccountToken" ||
           k == "shareProcessNamespace") &&
          x != json(false))
        out.push_back(at + " is " + x.dump() + ", never allowed");
      if (k == "runAsNonRoot" && x != json(true))
        out.push_back(at + " is " + x.dump() + ", must be true");
      if ((k == "runAsUser" || k == "runAsGroup") &&
          (!x.is_number_integer() || x.get<std::int64_t>() == 0))
        out.push_back(at + " is " + x.dump() + ", never root");
      if (k == "readOnlyRootFilesystem" && x != json(true))
        out.push_back(at + " is " + x.dump() + ", must be true");
      if (k == "capabilities" &&
          (!x.is_object() || x.contains("add") || x.value("drop", json()) != json::array({"ALL"})))
        out.push_back(at + " must drop ALL and add nothing: " + x.dump());
      if (k == "procMount" && x != json("Default")) out.push_back(at + " is " + x.dump());
      if (k == "seccompProfile" && (!x.is_object() || (x.value("type", "") != "RuntimeDefault" &&
                                                       x.value("type", "") != "Localhost")))
        out.push_back(at + " is " + x.dump() + ", must be RuntimeDefault or Localhost");
      scan(x, at, out);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) scan(v[i], where + "/" + std::to_string(i), out);
  }
}

}  // namespace

std::vector<std::string> weakenings(const json& object) {
  std::vector<std::string> out;
  const std::string kind = object.value("kind", "");
  const std::string name = object.contains("metadata") ? object["metadata"].value("name", "") : "";
  const std::string where = kind + "/" + name;
  if (kind == "Secret") out.push_back(where + ": a Secret");
  if (kind == "RoleBinding" || kind == "ClusterRoleBinding" || kind == "Role" ||
      kind == "ClusterRole")
    out.push_back(where + ": RBAC objects grant the space's account access to the API");
  if (kind == "ServiceAccount" &&
      object.value("automountServiceAccountToken", json(true)) != json(false))
    out.push_back(where + "/automountServiceAccountToken must be false");
  std::vector<std::string> found;
  scan(object, where, found);
  out.insert(out.end(), found.begin(), found.end());
  if (kind == "Pod") {
    const json& s = object.contains("spec") ? object["spec"] : json::object();
    if (s.value("automountServiceAccountToken", json(true)) != json(false))
      out.push_back(where + "/spec/automountServiceAccountToken must be false");
    if (!s.contains("containers") || !s["containers"].is_array() || s["containers"].size() != 1)
      out.push_back(where + "/spec/containers must hold exactly one container");
    for (const json& c : s.value("containers", json::array())) {
      const json sc = c.value("securityContext", json::object());
      if (sc.value("allowPrivilegeEscalation", json(true)) != json(false))
        out.push_back(where + "/" + c.value("name", "") +
                      ": allowPrivilegeEscalation must be false");
      if (sc.value("readOnlyRootFilesystem", json(false)) != json(true))
        out.push_back(where + "/" + c.value("name", "") + ": readOnlyRootFilesystem must be true");
      if (!sc.contains("capabilities"))
        out.push_back(where + "/" + c.value("name", "") + ": capabilities must drop ALL");
    }
    for (const json& vol : s.value("volumes", json::array())) {
      // A volume is a claim or a memory-backed emptyDir; any other source is refused (the API
      // server adds none when the token is not mounted).
      bool ok = vol.is_object() && vol.size() == 2 && vol.contains("name") &&
                (vol.contains("persistentVolumeClaim") || vol.contains("emptyDir"));
      if (!ok)
        out.push_back(where + "/spec/volumes: " + vol.dump() +
                      " is neither a claim nor an emptyDir");
    }
  }
  return out;
}

json probe_namespace(const ProbeSpec& p) {
  json l = {{std::string(kLabelMarker), "true"},
            {std::string(kLabelRole), std::string(role_word(Role::kProbe))},
            {std::string(kLabelOwner), p.owner},
            {std::string(kLabelVersion), std::string(kControllerVersion)}};
  for (const char* mode : {"enforce", "audit", "warn"}) {
    l[std::string(kPsaPrefix) + mode] = std::string(kPsaLevel);
    l[std::string(kPsaPrefix) + mode + "-version"] = "latest";
  }
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata",
           {{"name", p.ns},
            {"labels", l},
            {"annotations", {{std::string(kAnnotationCreated), p.created}}}}}};
}

std::vector<json> probe_objects(const ProbeSpec& p) {
  auto probe_meta = [&](std::string_view name) {
    return json{{"name", std::string(name)},
                {"namespace", p.ns},
                {"labels",
                 {{std::string(kLabelMarker), "true"},
                  {std::string(kLabelRole), std::string(role_word(Role::kProbe))},
                  {std::string(kLabelOwner), p.owner},
                  {"spacectl.space.probe", std::string(name)}}}};
  };
  auto select = [](std::string_view name) {
    return json{{"matchLabels", {{"spacectl.space.probe", std::string(name)}}}};
  };
  auto net_policy = [&](std::string_view name, json selector, json types, json rules) {
    json o = {{"apiVersion", "networking.k8s.io/v1"},
              {"kind", "NetworkPolicy"},
              {"metadata", probe_meta(name)},
              {"spec", {{"podSelector", std::move(selector)}, {"policyTypes", std::move(types)}}}};
    for (auto& [k, v] : rules.items()) o["spec"][k] = v;
    return o;
  };
  std::vector<json> out;
  out.push_back(net_policy("default-deny", json::object(), json::array({"Ingress", "Egress"}),
                           json::object()));
  // The isolated probe gets a space's egress: one listener on one port.
  out.push_back(net_policy(
      "probe-egress", select(kProbeClient), json::array({"Egress"}),
      {{"egress", json::array({{{"to", json::array({{{"podSelector", select(kProbeAllowed)}}})},
                                {"ports", json::array({tcp(kProbePort)})}}})}}));
  // Both listeners accept anyone in the namespace, so a refused connection to the denied one
  // proves the egress side is enforced (a CNI enforcing ingress only would let it through).
  for (std::string_view l : {kProbeAllowed, kProbeDenied})
    out.push_back(net_policy(
        std::string(l) + "-ingress", select(l), json::array({"Ingress"}),
        {{"ingress", json::array({{{"from", json::array({{{"podSelector", json::object()}}})},
                                   {"ports", json::array({tcp(kProbePort)})}}})}}));
  auto pod = [&](std::string_view name, json command) {
    json s = pod_spec_common(70000, p.seccomp_localhost, kSpaceSeccompLocalhost);
    s.erase("schedulingGates");  // nothing to verify first: probes run and go
    s["dnsPolicy"] = "None";
    s["dnsConfig"] = {{"nameservers", json::array({"127.0.0.1"})}};
    s["containers"] =
        json::array({{{"name", "probe"},
                      {"image", p.image},
                      {"imagePullPolicy", "IfNotPresent"},
                      {"command", std::move(command)},
                      {"resources",
                       {{"requests", {{"cpu", "10m"}, {"memory", std::to_string(16ll << 20)}}},
                        {"limits",
                         {{"cpu", "100m"},
                          {"memory", std::to_string(32ll << 20)},
                          {"ephemeral-storage", std::to_string(64ll << 20)}}}}},
                      {"securityContext",
                       container_security(70000, p.seccomp_localhost, kSpaceSeccompLocalhost)}}});
    return json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", probe_meta(name)}, {"spec", s}};
  };
  const json listener =
      json::array({"/bin/busybox", "httpd", "-f", "-p", std::to_string(kProbePort)});
  out.push_back(pod(kProbeAllowed, listener));
  out.push_back(pod(kProbeDenied, listener));
  out.push_back(pod(kProbeClient, json::array({"/bin/busybox", "sleep", "600"})));
  return out;
}

}  // namespace controller::kube
