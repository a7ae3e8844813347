// The Kubernetes place's objects (docs/places.md#kubernetes): every object a space is made of,
// generated as JSON from a spec, and the rules no object of ours may ever break. Pure: no kubectl,
// no clock, no randomness; golden files and the Kubernetes v1.36.0 schema check the output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/spec.h"

namespace controller::kube {

// Ports of the gatekeeper's Service and listeners (the same as on every other place).
inline constexpr int kCorridorPort = 3128;
inline constexpr int kWindowPort = 8080;
// Seccomp profiles a node carries for us, relative to the kubelet's seccomp root
// (/var/lib/kubelet/seccomp): the profiles of seccomp-profiles/, copied there by the operator.
inline constexpr std::string_view kSpaceSeccompLocalhost = "profiles/spacectl-space.json";
inline constexpr std::string_view kGatekeeperSeccompLocalhost = "profiles/spacectl-gatekeeper.json";
// The scheduling gate every pod is created with: the API server has stored it, nothing runs it,
// until verify read it back and found nothing different (create → verify → start).
inline constexpr std::string_view kVerifyGate = "spacectl.space/verify";
// Pod Security Admission (https://kubernetes.io/docs/concepts/security/pod-security-admission/):
// `restricted` enforced, audited and warned on each space's namespace.
inline constexpr std::string_view kPsaLevel = "restricted";
inline constexpr std::string_view kServiceAccount = "spacectl-none";  // no token, no bindings
// Annotations (labels cannot hold a display name or a time): what start needs to make the pods
// again after stop deleted them.
inline constexpr std::string_view kAnnotationName = "spacectl.space/name";
inline constexpr std::string_view kAnnotationCreated = "spacectl.space/created";
inline constexpr std::string_view kAnnotationPods =
    "spacectl.space/pods";  // JSON: images, limits, command, key
inline constexpr std::int64_t kGatekeeperCpuRequestMilli = 500;  // four times the space's: weight
inline constexpr std::int64_t kSpaceCpuRequestMilli = 125;
inline constexpr std::int64_t kEphemeralLimit = 1ll << 30;  // logs and the writable layer
inline constexpr std::int64_t kGatekeeperTmp = 16ll << 20;  // the gatekeeper's /tmp (memory)
inline constexpr std::int64_t kSpaceTmp = 256ll << 20;      // the space's /tmp (memory)

struct KubeSpec {
  std::string id, owner, name, created;
  std::string ns;                // the space's namespace: <place namespace>-<id>
  std::string gatekeeper_image;  // registry digest references (image_ensure.h is_digest_reference)
  std::string space_image;
  std::int64_t memory_bytes = kDefaultSpaceMemory;
  std::int64_t nano_cpus = kNanoCpusPerCpu;
  std::int64_t disk_bytes = 0;       // each claim's storage request
  std::string window_key;            // 64 hex: not a secret from the agent (spec.h kWindowEnv)
  std::vector<std::string> command;  // empty: the image's own
  bool seccomp_localhost = false;    // the nodes carry our profiles (place check proved it)
  // Ranges the gatekeeper may never reach besides the fixed private and special ones: the
  // cluster's node addresses and pod CIDRs that are public (read by check and create).
  std::vector<std::string> egress_except;
  // The gatekeeper Service's cluster IP: the space reaches `gatekeeper` through /etc/hosts
  // (hostAliases), because it may reach no DNS server. Empty until the Service exists.
  std::string gatekeeper_service_ip;
};

// A namespace name: <base>-<id>; the base is a DNS label of at most 50 characters.
bool is_namespace_base(std::string_view base);
std::string space_namespace(std::string_view base, std::string_view id);
// A label value Kubernetes accepts (owner ids become label values): at most 63 characters of
// [A-Za-z0-9._-], starting and ending alphanumeric.
bool is_label_value(std::string_view value);
std::string label_selector(std::string_view owner);  // marker and owner, for list

nlohmann::json labels(const KubeSpec& spec, Role role);
nlohmann::json namespace_object(const KubeSpec& spec);
nlohmann::json service_account(const KubeSpec& spec);
nlohmann::json claim(const KubeSpec& spec, Role role);  // kHomeVolume or kWorkVolume
nlohmann::json gatekeeper_service(const KubeSpec& spec);
std::vector<nlohmann::json> network_policies(const KubeSpec& spec);
nlohmann::json gatekeeper_pod(const KubeSpec& spec);
nlohmann::json space_pod(const KubeSpec& spec);  // needs gatekeeper_service_ip
// Everything but the namespace and the pods, in creation order (one List).
std::vector<nlohmann::json> namespaced_objects(const KubeSpec& spec);
nlohmann::json list_of(const std::vector<nlohmann::json>& items);

// The ranges the gatekeeper's egress excepts whatever the cluster says (each with its reason).
std::vector<std::string> fixed_egress_except();

// What start needs again (kAnnotationPods), and back.
std::string pods_annotation(const KubeSpec& spec);
bool read_pods_annotation(std::string_view text, KubeSpec& spec);

// Rules no object of ours may break, on generated objects (tests) and on what the API server
// returns (verify: a mutating webhook may have added any of these): a Secret or a reference to one,
// a host path, a privileged or escalating container, host namespaces, a service-account token,
// a capability added, an extra container. Each break is one sentence naming object and field.
std::vector<std::string> weakenings(const nlohmann::json& object);

// The place check's probe objects, in a throwaway namespace of their own
// (docs/places.md#kubernetes): a listener the isolated probe may reach (labelled as a gatekeeper,
// behind the same policies a space gets), a listener it may not, and the isolated probe itself.
struct ProbeSpec {
  std::string ns, owner, created;
  std::string image;  // the space image by digest (busybox nc and httpd)
  bool seccomp_localhost = false;
};
nlohmann::json probe_namespace(const ProbeSpec& spec);
std::vector<nlohmann::json> probe_objects(const ProbeSpec& spec);  // policies and the three pods
inline constexpr std::string_view kProbeAllowed = "allowed-listener";
inline constexpr std::string_view kProbeDenied = "denied-listener";
inline constexpr std::string_view kProbeClient = "isolated-probe";
inline constexpr int kProbePort = 8080;

}  // namespace controller::kube
