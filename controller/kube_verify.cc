// verify on the Kubernetes place: every object of the space read back from the API server and
// compared with what we generate, field by field; anything the cluster added that weakens it
// (kube_objects.h weakenings) or any object we did not make is a difference too.
#include <optional>
#include <set>

#include "controller/kube_place.h"

namespace controller::kube {

using nlohmann::json;

namespace {

// A Kubernetes quantity (k8s.io/apimachinery resource.Quantity) in thousandths: the API server
// stores "268435456" as "256Mi" and "1000m" as "1", so values are compared, not text. Whole
// numbers with a suffix only (the forms we write and the canonical forms the server returns).
std::optional<unsigned __int128> quantity(const std::string& text) {
  if (text.empty() || text.size() > 24) return std::nullopt;
  std::size_t i = 0;
  unsigned __int128 v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    v = v * 10 + static_cast<unsigned>(text[i++] - '0');
  if (i == 0) return std::nullopt;
  const std::string suffix = text.substr(i);
  unsigned __int128 milli = 0;
  if (suffix == "m")
    milli = 1;
  else if (suffix.empty())
    milli = 1000;
  else {
    static const std::vector<std::pair<std::string, std::pair<unsigned, unsigned>>> kSuffixes = {
        {"k", {1000, 1}},  {"M", {1000, 2}},  {"G", {1000, 3}},  {"T", {1000, 4}},
        {"P", {1000, 5}},  {"E", {1000, 6}},  {"Ki", {1024, 1}}, {"Mi", {1024, 2}},
        {"Gi", {1024, 3}}, {"Ti", {1024, 4}}, {"Pi", {1024, 5}}, {"Ei", {1024, 6}}};
    for (const auto& [s, f] : kSuffixes)
      if (s == suffix) {
        milli = 1000;
        for (unsigned k = 0; k < f.second; ++k) milli *= f.first;
      }
    if (milli == 0) return std::nullopt;
  }
  return v * milli;
}

const json* find(const json& list, const std::string& kind, const std::string& name) {
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return nullptr;
  for (const json& o : list["items"])
    if (o.value("kind", "") == kind && o.contains("metadata") &&
        o["metadata"].value("name", "") == name)
      return &o;
  return nullptr;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

void compare_subset(const json& want, const json& live, const std::string& path,
                    std::vector<std::string>& out) {
  if (want.is_object()) {
    if (!live.is_object()) {
      out.push_back(path + ": " + live.dump().substr(0, 200) + ", want an object");
      return;
    }
    for (const auto& [k, w] : want.items()) {
      if (!live.contains(k)) {
        out.push_back(path + "/" + k + ": missing, want " + w.dump().substr(0, 200));
        continue;
      }
      compare_subset(w, live[k], path + "/" + k, out);
    }
    return;
  }
  if (want.is_array()) {
    if (!live.is_array() || live.size() != want.size()) {
      out.push_back(path + ": " + live.dump().substr(0, 300) + ", want " +
                    want.dump().substr(0, 300));
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i)
      compare_subset(want[i], live[i], path + "/" + std::to_string(i), out);
    return;
  }
  if (want == live) return;
  if (want.is_string() && live.is_string()) {
    const std::optional<unsigned __int128> a = quantity(want.get<std::string>()),
                                           b = quantity(live.get<std::string>());
    if (a && b && *a == *b) return;
  }
  out.push_back(path + ": " + live.dump().substr(0, 200) + ", want " + want.dump().substr(0, 200));
}

std::vector<Difference> KubernetesPlace::compare(const KubeSpec& spec, const json& live_namespace,
                                                 const json& live) {
  std::vector<Difference> out;
  auto add = [&](const std::string& check, const std::vector<std::string>& found) {
    for (const std::string& f : found) out.push_back(Difference{check, f});
  };
  {
    const json want = namespace_object(spec);
    std::vector<std::string> found;
    compare_subset(want["metadata"]["labels"],
                   live_namespace["metadata"].value("labels", json::object()),
                   "Namespace/" + spec.ns + "/metadata/labels", found);
    add("namespace", found);
  }
  std::vector<json> expected = namespaced_objects(spec);
  const json* space = find(live, "Pod", "space");
  const json* gk = find(live, "Pod", "gatekeeper");
  if (gk != nullptr) expected.push_back(gatekeeper_pod(spec));
  if (space != nullptr) expected.push_back(space_pod(spec));
  if (space != nullptr && gk == nullptr)
    out.push_back(
        Difference{"gatekeeper_missing",
                   "pod " + spec.ns + "/gatekeeper is missing while the space pod exists"});
  std::set<std::string> known;
  for (json& want : expected) {
    const std::string kind = want["kind"], name = want["metadata"]["name"];
    known.insert(kind + "/" + name);
    const std::string check = lower(kind) + "_" + name;
    const json* got = find(live, kind, name);
    if (got == nullptr) {
      out.push_back(Difference{check, kind + " " + spec.ns + "/" + name + " is missing"});
      continue;
    }
    std::vector<std::string> found;
    compare_subset(want["metadata"]["labels"], (*got)["metadata"].value("labels", json::object()),
                   kind + "/" + name + "/metadata/labels", found);
    if (want.contains("spec")) {
      // The gate is lifted by start; everything else must be as we made it.
      if (kind == "Pod") want["spec"].erase("schedulingGates");
      compare_subset(want["spec"], got->value("spec", json::object()), kind + "/" + name + "/spec",
                     found);
    }
    if (kind == "ServiceAccount")
      compare_subset(want["automountServiceAccountToken"],
                     got->value("automountServiceAccountToken", json()),
                     kind + "/" + name + "/automountServiceAccountToken", found);
    for (const std::string& w : weakenings(*got)) found.push_back(w);
    if (kind == "Pod") {
      // What runs is the pinned image: the runtime reports the digest it resolved.
      const std::string image = want["spec"]["containers"][0]["image"];
      const std::string digest = image.substr(image.find('@') + 1);
      for (const json& cs :
           got->value("status", json::object()).value("containerStatuses", json::array())) {
        const std::string id = cs.value("imageID", "");
        if (!id.empty() && (id.size() < digest.size() ||
                            id.compare(id.size() - digest.size(), digest.size(), digest) != 0))
          found.push_back(kind + "/" + name + "/status/containerStatuses/imageID: " + id +
                          ", want " + digest);
      }
    }
    add(check, found);
  }
  for (const json& o : live.value("items", json::array())) {
    const std::string kind = o.value("kind", ""),
                      name = o.contains("metadata") ? o["metadata"].value("name", "") : "";
    if (kind == "ServiceAccount" && name == "default")
      continue;  // every namespace has it; no pod uses it
    if (known.count(kind + "/" + name) == 0)
      out.push_back(
          Difference{"unexpected_" + lower(kind),
                     kind + " " + spec.ns + "/" + name + " is not one of the space's objects"});
  }
  return out;
}

Result<std::vector<Difference>> KubernetesPlace::verify(const std::string& id) {
  Result<json> ns = owned_namespace(id);
  if (!ns) return ns.error();
  Result<KubeSpec> spec = spec_of(id, *ns);
  if (!spec) return spec.error();
  // Everything the space's namespace holds of the kinds we make, plus RoleBindings (the service
  // account must be bound to nothing). Secrets are never read: their values would come along.
  Result<json> live = cli_.json(
      spec->ns,
      {"get", "serviceaccounts,persistentvolumeclaims,networkpolicies,services,pods,rolebindings",
       "--output", "json"},
      "objects of " + spec->ns);
  if (!live) return live.error();
  if (const json* svc = find(*live, "Service", std::string(kGatekeeperAlias)); svc != nullptr)
    spec->gatekeeper_service_ip = svc->value("spec", json::object()).value("clusterIP", "");
  return compare(*spec, *ns, *live);
}

}  // namespace controller::kube
