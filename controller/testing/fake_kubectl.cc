// A stand-in for `kubectl` against one small cluster, for the Kubernetes place's tests. It keeps
// the cluster's objects in $FAKE_KUBECTL_STATE/state.json and answers from the recorded shapes in
// $FAKE_KUBECTL_ANSWERS (controller/testdata/kube/README.md says where each comes from).
//
// Every argv is checked against the exact shapes the place may send: `--context <ctx>` and
// `--namespace <ns>` first (ctx must be $FAKE_KUBECTL_CONTEXT, the cluster the test made; any
// other is refused as kubectl refuses an unknown context), then one of the subcommands below with
// exactly its flags. Anything else exits 90 and is appended to $FAKE_KUBECTL_REFUSED, which the
// tests require to stay empty. Objects a `create` receives are appended as they arrived to
// $FAKE_KUBECTL_STATE/created.jsonl (the schema test validates them).
//
// Modes: FAKE_KUBECTL_WEBHOOK=hostpath (a mutating webhook adds a hostPath volume to every pod);
// FAKE_KUBECTL_CNI=none (the network plugin accepts NetworkPolicy objects and enforces
// none of them); FAKE_KUBECTL_UNREACHABLE=1 (the API server refuses connections).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/testing/fake_cli.h"
#include "policy/number.h"

namespace {

using nlohmann::json;

using controller::testing::fake_env;
using controller::testing::slurp;

const controller::testing::FakeCli kFake{"FAKE_KUBECTL", "fake kubectl"};

std::string env(const char* name) { return fake_env(name); }
json answer(const std::string& name) { return kFake.answer(name); }

std::string message(const std::string& key) {
  return answer("messages.json").value(key, std::string());
}

std::string format(std::string text, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    const std::size_t at = text.find("%s") != std::string::npos ? text.find("%s") : text.find("%d");
    if (at == std::string::npos) break;
    text.replace(at, 2, a);
  }
  return text;
}

int refuse(const std::vector<std::string>& argv, const std::string& why) {
  return kFake.refuse(argv, why);
}

struct State {
  json doc;
  std::string path = kFake.state_file();
  State()
      : doc(kFake.load_state(
            json{{"objects", json::array()}, {"next_pod", 10}, {"next_service", 10}})) {}
  void save() const { std::ofstream(path) << doc.dump(1); }
  json* find(const std::string& kind, const std::string& ns, const std::string& name) {
    for (json& o : doc["objects"]) {
      if (o["kind"] == kind && o["metadata"]["name"] == name &&
          (kind == "Namespace" || o["metadata"].value("namespace", "") == ns)) {
        return &o;
      }
    }
    return nullptr;
  }
  void erase(const std::string& kind, const std::string& ns, const std::string& name) {
    json kept = json::array();
    for (json& o : doc["objects"]) {
      if (!(o["kind"] == kind && o["metadata"]["name"] == name &&
            (kind == "Namespace" || o["metadata"].value("namespace", "") == ns))) {
        kept.push_back(o);
      }
    }
    doc["objects"] = kept;
  }
};

// The API server's canonical form of a quantity (k8s.io/apimachinery resource.Quantity): plain
// byte counts that are whole binary multiples come back with the binary suffix, milli-cores that
// are whole cores come back without "m".
std::string canonical(const std::string& q) {
  // Anything else (a suffix this fake does not model, a value past 2^63) comes back as given.
  if (q.size() > 1 && q.back() == 'm') {
    const std::optional<long long> m = policy::parse_number<long long>(q.substr(0, q.size() - 1));
    return m && *m % 1000 == 0 ? std::to_string(*m / 1000) : q;
  }
  const std::optional<long long> parsed = policy::parse_number<long long>(q);
  if (!parsed || *parsed <= 0) return q;
  long long v = *parsed;
  const char* suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  int i = 0;
  while (v % 1024 == 0 && i < 5) v /= 1024, ++i;
  return std::to_string(v) + suffix[i];
}

void canonical_quantities(json& v, const std::string& key) {
  if (v.is_object()) {
    for (auto& [k, x] : v.items()) canonical_quantities(x, k);
  } else if (v.is_array()) {
    for (json& x : v) canonical_quantities(x, key);
  } else if (v.is_string() && (key == "cpu" || key == "memory" || key == "storage" ||
                               key == "ephemeral-storage" || key == "sizeLimit")) {
    v = canonical(v.get<std::string>());
  }
}

const std::map<std::string, std::string>& plural_kinds() {
  static const std::map<std::string, std::string> k = {
      {"pods", "Pod"},
      {"persistentvolumeclaims", "PersistentVolumeClaim"},
      {"services", "Service"},
      {"networkpolicies", "NetworkPolicy"},
      {"serviceaccounts", "ServiceAccount"},
      {"rolebindings", "RoleBinding"}};
  return k;
}

bool has_labels(const json& o, const std::string& selector) {
  std::size_t s = 0;
  while (s < selector.size()) {
    std::size_t e = selector.find(',', s);
    if (e == std::string::npos) e = selector.size();
    const std::string term = selector.substr(s, e - s);
    const std::size_t eq = term.find('=');
    const json labels = o["metadata"].value("labels", json::object());
    if (eq == std::string::npos ||
        labels.value(term.substr(0, eq), "\x01") != term.substr(eq + 1)) {
      return false;
    }
    s = e + 1;
  }
  return true;
}

void set_running(State& st, json& pod) {
  json status = answer("pod-status-running.json");
  const std::string ip = "10.244.0." + std::to_string(st.doc["next_pod"].get<int>());
  st.doc["next_pod"] = st.doc["next_pod"].get<int>() + 1;
  status["podIP"] = ip;
  status["podIPs"][0]["ip"] = ip;
  json& cs = status["containerStatuses"][0];
  const std::string image = pod["spec"]["containers"][0]["image"];
  cs["name"] = pod["spec"]["containers"][0]["name"];
  cs["image"] = image;
  cs["imageID"] = image;  // containerd reports repository@sha256:<manifest digest>
  pod["status"] = status;
}

int create(State& st, const std::string& ns, const std::string& input) {
  json doc = json::parse(input, nullptr, false);
  if (!doc.is_object()) return refuse({"create"}, "stdin is not a JSON object");
  std::vector<json> items = doc.value("kind", "") == "List" ? doc["items"].get<std::vector<json>>()
                                                            : std::vector<json>{doc};
  json made = json::array();
  for (json o : items) {
    std::ofstream(env("FAKE_KUBECTL_STATE") + "/created.jsonl", std::ios::app) << o.dump() << '\n';
    const std::string kind = o.value("kind", ""), name = o["metadata"].value("name", "");
    if (kind == "Namespace") {
      if (name != ns) {
        return refuse({"create", kind, name}, "a namespace created under another --namespace");
      }
    } else {
      if (o["metadata"].value("namespace", "") != ns) {
        return refuse({"create", kind, name}, "metadata.namespace differs from --namespace");
      }
      if (st.find("Namespace", "", ns) == nullptr) {
        std::cerr << format(message("not_found"), {"namespaces", ns});
        return 1;
      }
    }
    if (st.find(kind, ns, name) != nullptr) {
      std::cerr << format(message("already_exists"),
                          {kind == "Namespace" ? "namespaces" : kind, name});
      return 1;
    }
    const json defaults = answer("defaults.json");
    o["metadata"]["uid"] =
        "00000000-0000-0000-0000-" + std::to_string(100000000000 + st.doc["objects"].size());
    o["metadata"]["creationTimestamp"] = "2026-12-01T00:00:00Z";
    o["metadata"]["resourceVersion"] = std::to_string(1000 + st.doc["objects"].size());
    canonical_quantities(o, "");
    if (kind == "Namespace") {
      o["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
      o["spec"] = defaults["Namespace"]["spec"];
      o["status"] = defaults["Namespace"]["status"];
      // The namespace controller gives every namespace its default service account.
      st.doc["objects"].push_back({{"apiVersion", "v1"},
                                   {"kind", "ServiceAccount"},
                                   {"metadata", {{"name", "default"}, {"namespace", name}}}});
    } else if (kind == "Pod") {
      for (auto& [k, v] : defaults["Pod"]["spec"].items()) {
        if (!o["spec"].contains(k)) o["spec"][k] = v;
      }
      for (json& c : o["spec"]["containers"]) {
        for (auto& [k, v] : defaults["Pod"]["container"].items()) c[k] = v;
      }
      // FAKE_KUBECTL_WEBHOOK=hostpath: a mutating admission webhook that adds a host path.
      if (env("FAKE_KUBECTL_WEBHOOK") == "hostpath") {
        o["spec"]["volumes"].push_back(
            {{"name", "injected"}, {"hostPath", {{"path", "/var/run"}}}});
      }
      if (o["spec"].contains("schedulingGates") && !o["spec"]["schedulingGates"].empty()) {
        o["status"] = answer("pod-status-gated.json");
      } else {
        set_running(st, o);
      }
    } else if (kind == "Service") {
      const std::string ip = "10.96.0." + std::to_string(st.doc["next_service"].get<int>());
      st.doc["next_service"] = st.doc["next_service"].get<int>() + 1;
      json spec = defaults["Service"]["spec"];
      spec["clusterIP"] = ip;
      spec["clusterIPs"] = json::array({ip});
      for (auto& [k, v] : spec.items()) o["spec"][k] = v;
      o["status"] = defaults["Service"]["status"];
    } else if (kind == "PersistentVolumeClaim") {
      o["spec"]["storageClassName"] = defaults["PersistentVolumeClaim"]["spec"]["storageClassName"];
      o["status"] = defaults["PersistentVolumeClaim"]["status"];
    }
    st.doc["objects"].push_back(o);
    made.push_back(o);
  }
  st.save();
  std::cout << (made.size() == 1 && doc.value("kind", "") != "List"
                    ? made[0]
                    : json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", made}})
                   .dump(1)
            << "\n";
  return 0;
}

int exec(State& st, const std::string& ns, const std::string& pod_name,
         const std::string& container, const std::vector<std::string>& cmd) {
  json* pod = st.find("Pod", ns, pod_name);
  if (pod == nullptr || (*pod)["status"].value("phase", "") != "Running" ||
      (*pod)["spec"]["containers"][0].value("name", "") != container) {
    std::cerr << format(message("exec_not_running"), {container});
    return 1;
  }
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  auto status = [&](int code) {
    if (code != 0) std::cerr << format(message("exec_status"), {std::to_string(code)});
    return code;
  };
  const std::string& c0 = cmd[0];
  if (c0 == "cat" && cmd.size() == 1) {
    std::cout << input;
    return 0;
  }
  if (c0 == "true" && cmd.size() == 1) return 0;
  if (c0 == "false" && cmd.size() == 1) return status(1);
  if (c0 == "id" && cmd == std::vector<std::string>{"id", "-u"}) {
    std::cout << (*pod)["spec"]["securityContext"]["runAsUser"].get<long long>() << "\n";
    return 0;
  }
  if (pod_name == "gatekeeper" && c0 == "/gatekeeper" && cmd.size() == 4 && cmd[1] == "control") {
    if (cmd[2] == "GET" && cmd[3] == "/health") {
      std::cout << R"({"ready":true,"corridor":true,"window":true,"control":true})"
                << "\n";
      return 0;
    }
    if (cmd[2] == "POST" && cmd[3] == "/window-key") {
      // The key must arrive on stdin, and be the one the namespace's pods were made with.
      const json body = json::parse(input, nullptr, false);
      const json* n = st.find("Namespace", "", ns);
      const json pods =
          n == nullptr
              ? json()
              : json::parse((*n)["metadata"]["annotations"].value("spacectl.space/pods", "{}"),
                            nullptr, false);
      if (!body.is_object() || !pods.is_object() ||
          body.value("key", "") != pods.value("window_key", "-")) {
        std::cout << R"({"error":"window key refused"})"
                  << "\n";
        return status(1);
      }
      std::cout << R"({"ok":true})"
                << "\n";
      return 0;
    }
  }
  // The probe: busybox nc -z -w 5 HOST PORT from the isolated probe pod.
  if (cmd.size() == 7 && c0 == "/bin/busybox" && cmd[1] == "nc" && cmd[2] == "-z" &&
      cmd[3] == "-w" && cmd[4] == "5") {
    const std::string host = cmd[5], port = cmd[6];
    bool allowed_by_policy = false;
    for (const json& o : st.doc["objects"]) {
      if (o["kind"] == "Pod" && o["metadata"].value("namespace", "") == ns &&
          o["metadata"]["name"] == "allowed-listener" && o["status"].value("podIP", "") == host &&
          port == "8080") {
        allowed_by_policy = true;
      }
    }
    bool exists = host == "169.254.169.254" ? env("FAKE_KUBECTL_METADATA") == "1" : true;
    if (env("FAKE_KUBECTL_CNI") == "none") return status(exists ? 0 : 1);
    return status(allowed_by_policy ? 0 : 1);
  }
  std::cerr << "exec: \"" << c0 << "\": executable file not found in $PATH\n";
  return status(127);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  {
    std::ofstream log(env("FAKE_KUBECTL_LOG"), std::ios::app);
    for (std::size_t i = 0; i < a.size(); ++i) log << (i ? "\x1f" : "") << a[i];
    log << '\n';
  }
  if (a.size() < 5 || a[0] != "--context" || a[2] != "--namespace" || a[4].empty() ||
      a[4][0] == '-') {
    return refuse(a, "--context and --namespace are not the first four arguments");
  }
  if (env("FAKE_KUBECTL_UNREACHABLE") == "1") {
    std::cerr << message("unreachable");
    return 1;
  }
  if (a[1] != env("FAKE_KUBECTL_CONTEXT")) {
    std::cerr << format(message("no_context"), {a[1]});
    return 1;
  }
  const std::string ns = a[3];
  const std::vector<std::string> c(a.begin() + 4, a.end());
  State st;
  auto is = [&](std::initializer_list<const char*> want) {
    if (c.size() != want.size()) return false;
    std::size_t i = 0;
    for (const char* w : want) {
      if (std::string(w) != "*" && c[i] != w) return false;
      ++i;
    }
    return true;
  };
  if (is({"version", "--output", "json"})) {
    std::cout << answer("version.json").dump(2) << "\n";
    return 0;
  }
  if (is({"auth", "can-i", "*", "*"})) {
    const bool denied = env("FAKE_KUBECTL_DENY") == c[2] + " " + c[3];
    std::cout << (denied ? "no" : "yes") << "\n";
    return denied ? 1 : 0;
  }
  if (is({"get", "namespace", "*", "--ignore-not-found", "--output", "json"})) {
    if (c[2] != ns) return refuse(a, "get namespace of another --namespace");
    if (const json* n = st.find("Namespace", "", c[2]); n != nullptr) {
      std::cout << n->dump(1) << "\n";
    }
    return 0;
  }
  if (is({"get", "namespaces", "--selector", "*", "--output", "json"})) {
    json items = json::array();
    for (const json& o : st.doc["objects"]) {
      if (o["kind"] == "Namespace" && has_labels(o, c[3])) items.push_back(o);
    }
    std::cout << json{{"apiVersion", "v1"},
                      {"kind", "List"},
                      {"items", items},
                      {"metadata", {{"resourceVersion", ""}}}}
                     .dump(1)
              << "\n";
    return 0;
  }
  if (is({"get", "pod", "*", "--ignore-not-found", "--output", "json"})) {
    if (const json* p = st.find("Pod", ns, c[2]); p != nullptr) std::cout << p->dump(1) << "\n";
    return 0;
  }
  if (is({"get", "service", "*", "--output", "json"})) {
    if (ns == "default" && c[2] == "kubernetes") {
      std::cout << json{{"apiVersion", "v1"},
                        {"kind", "Service"},
                        {"metadata", {{"name", "kubernetes"}, {"namespace", "default"}}},
                        {"spec",
                         {{"clusterIP", "10.96.0.1"},
                          {"ports", json::array({{{"name", "https"}, {"port", 443}}})}}}}
                       .dump(1)
                << "\n";
      return 0;
    }
    const json* s = st.find("Service", ns, c[2]);
    if (s == nullptr) {
      std::cerr << format(message("not_found"), {"services", c[2]});
      return 1;
    }
    std::cout << s->dump(1) << "\n";
    return 0;
  }
  if (is({"get", "*", "--output", "json"})) {
    std::set<std::string> kinds;
    std::size_t s = 0;
    while (s <= c[1].size()) {
      std::size_t e = c[1].find(',', s);
      if (e == std::string::npos) e = c[1].size();
      const auto k = plural_kinds().find(c[1].substr(s, e - s));
      if (k == plural_kinds().end()) return refuse(a, "an unknown resource in get");
      kinds.insert(k->second);
      s = e + 1;
    }
    json items = json::array();
    for (const json& o : st.doc["objects"]) {
      if (kinds.count(o["kind"]) != 0 && o["metadata"].value("namespace", "") == ns) {
        items.push_back(o);
      }
    }
    std::cout << json{{"apiVersion", "v1"},
                      {"kind", "List"},
                      {"items", items},
                      {"metadata", {{"resourceVersion", ""}}}}
                     .dump(1)
              << "\n";
    return 0;
  }
  if (is({"create", "--filename", "-", "--output", "json"})) {
    const std::string input((std::istreambuf_iterator<char>(std::cin)),
                            std::istreambuf_iterator<char>());
    return create(st, ns, input);
  }
  if (is({"patch", "pod", "*", "--type", "json", "--patch",
          R"([{"op":"remove","path":"/spec/schedulingGates"}])"})) {
    json* p = st.find("Pod", ns, c[2]);
    if (p == nullptr) {
      std::cerr << format(message("not_found"), {"pods", c[2]});
      return 1;
    }
    (*p)["spec"].erase("schedulingGates");
    set_running(st, *p);
    st.save();
    std::cout << "pod/" << c[2] << " patched\n";
    return 0;
  }
  if (is({"delete", "pod", "*", "--ignore-not-found", "--wait=true", "--timeout=60s"})) {
    st.erase("Pod", ns, c[2]);
    st.save();
    return 0;
  }
  if (is({"delete", "namespace", "*", "--ignore-not-found", "--wait=true", "--timeout=300s"})) {
    if (c[2] != ns) return refuse(a, "delete namespace of another --namespace");
    json kept = json::array();
    for (const json& o : st.doc["objects"]) {
      if (!(o["kind"] == "Namespace" ? o["metadata"]["name"] == c[2]
                                     : o["metadata"].value("namespace", "") == c[2])) {
        kept.push_back(o);
      }
    }
    st.doc["objects"] = kept;
    st.save();
    return 0;
  }
  if (c.size() >= 7 && c[0] == "exec" && c[1] == "-i" && c[3] == "--container" && c[5] == "--") {
    return exec(st, ns, c[2], c[4], std::vector<std::string>(c.begin() + 6, c.end()));
  }
  return refuse(a, "no such shape");
}
