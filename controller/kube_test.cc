// The Kubernetes place's objects and operations without a cluster: golden files, the Kubernetes
// v1.36.0 schema, the rules no object may break, verify's read-back, the place check's probes and
// the exact argv of exec, all through the fake kubectl (testing/fake_kubectl.cc).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "controller/kube_objects.h"
#include "controller/kube_place.h"
#include "controller/registry.h"
#include "controller/testing/fake_kube_cluster.h"
#include "tests/support/environment.h"

namespace controller::kube {
namespace {

using nlohmann::json;

const std::string kGolden = std::string(KUBE_TESTDATA) + "/golden";
const std::string kSchemaModules = std::string(GK_SOURCE_DIR) + "/build/kube-schema/node_modules";
const std::string kValidator = std::string(GK_SOURCE_DIR) + "/tests/kube-schema/validate-kube.mjs";

KubeSpec golden_spec() {
  KubeSpec s;
  s.id = "0123456789ab";
  s.owner = "0123456789abcdef01234567";
  s.name = "Golden, a=b \"quoted\"";
  s.created = "2026-12-01T00:00:00Z";
  s.ns = space_namespace("gk", s.id);
  s.gatekeeper_image = "registry.test:5000/spaces/gatekeeper@sha256:" + std::string(64, 'd');
  s.space_image = "registry.test:5000/spaces/space@sha256:" + std::string(64, 'e');
  s.memory_bytes = 512ll << 20;
  s.nano_cpus = 1500000000;
  s.disk_bytes = 1ll << 30;
  s.window_key = std::string(64, 'c');
  s.egress_except = {"203.0.113.7/32"};
  s.gatekeeper_service_ip = "10.96.0.10";
  return s;
}

ProbeSpec golden_probe() {
  ProbeSpec p;
  p.ns = "gk-probe-0123456789ab";
  p.owner = "0123456789abcdef01234567";
  p.created = "2026-12-01T00:00:00Z";
  p.image = "registry.test:5000/spaces/space@sha256:" + std::string(64, 'e');
  return p;
}

// Every object the place can generate: a space's (both seccomp modes) and the probes'.
std::vector<json> every_object() {
  KubeSpec s = golden_spec();
  std::vector<json> out = {namespace_object(s)};
  for (const json& o : namespaced_objects(s)) out.push_back(o);
  out.push_back(gatekeeper_pod(s));
  out.push_back(space_pod(s));
  s.seccomp_localhost = true;
  s.command = {"/bin/sleep", "infinity"};
  out.push_back(gatekeeper_pod(s));
  out.push_back(space_pod(s));
  const ProbeSpec p = golden_probe();
  out.push_back(probe_namespace(p));
  for (const json& o : probe_objects(p)) out.push_back(o);
  return out;
}

std::string golden_name(const json& o, std::size_t index) {
  return std::to_string(index) + "-" + o["kind"].get<std::string>() + "-" +
         o["metadata"]["name"].get<std::string>() + ".json";
}

// The generated objects are exactly the reviewed ones. GK_UPDATE_GOLDEN=1 writes them anew (then
// review the diff: each changed field is a change to what a cluster runs).
TEST(KubeObjectsTest, EveryGeneratedObjectEqualsItsGoldenFile) {
  const std::vector<json> all = every_object();
  const bool update = std::getenv("GK_UPDATE_GOLDEN") != nullptr;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string file = kGolden + "/" + golden_name(all[i], i);
    if (update) std::ofstream(file) << all[i].dump(2) << "\n";
    const json want = json::parse(testing::slurp(file), nullptr, false);
    ASSERT_FALSE(want.is_discarded())
        << file << " is missing or not JSON (GK_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(all[i], want) << file << "\n" << json::diff(want, all[i]).dump(1);
  }
}

int validate(const std::string& file) {
  const std::string cmd =
      "node " + kValidator + " " + kSchemaModules + " " + file + " > " + file + ".log 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

bool have_validator() {
  return std::system("command -v node > /dev/null 2>&1") == 0 &&
         access((kSchemaModules + "/kubernetes-models/v1/Pod.js").c_str(), R_OK) == 0;
}

TEST(KubeSchemaTest, EveryGeneratedObjectValidatesAgainstKubernetes1_36) {
  GK_REQUIRE(have_validator(), "node and build/kube-schema are needed (run .ci/setup)");
  testing::FakeCluster scratch;
  const std::string file = scratch.dir() + "/objects.json";
  std::ofstream(file) << list_of(every_object()).dump();
  EXPECT_EQ(validate(file), 0) << testing::slurp(file + ".log");
  // One line per object: all of them were checked, none skipped.
  const std::string log = testing::slurp(file + ".log");
  std::size_t lines = 0;
  for (std::size_t at = log.find("valid against Kubernetes v1.36.0"); at != std::string::npos;
       at = log.find("valid against", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, every_object().size()) << log;
}

// The validator can say no: a Pod whose seccomp type is not one of the schema's values, and a
// container without its required name, are refused; so is a kind the schema does not know.
TEST(KubeSchemaTest, TheValidatorRefusesObjectsThatBreakTheSchema) {
  GK_REQUIRE(have_validator(), "node and build/kube-schema are needed (run .ci/setup)");
  testing::FakeCluster scratch;
  json bad_seccomp = space_pod(golden_spec());
  bad_seccomp["spec"]["securityContext"]["seccompProfile"]["type"] = "Unconfined-ish";
  json no_name = gatekeeper_pod(golden_spec());
  no_name["spec"]["containers"][0].erase("name");
  json unknown_kind = namespace_object(golden_spec());
  unknown_kind["kind"] = "Namespaces";
  for (const json& o : {bad_seccomp, no_name, unknown_kind}) {
    const std::string file = scratch.dir() + "/bad.json";
    std::ofstream(file) << o.dump();
    EXPECT_EQ(validate(file), 1) << o.dump().substr(0, 200) << "\n"
                                 << testing::slurp(file + ".log");
  }
}

// What the place really sent to the API server (the fake keeps every object a create received),
// through create, stop, start and the place check.
TEST(KubeSchemaTest, EveryObjectThePlaceSentValidates) {
  GK_REQUIRE(have_validator(), "node and build/kube-schema are needed (run .ci/setup)");
  testing::FakeCluster cluster;
  auto place = cluster.place("schemaowner");
  ASSERT_TRUE(place->check().ok());
  CreateRequest request;
  request.memory_bytes = 256ll << 20;
  Result<SpaceSummary> made = place->create(request);
  ASSERT_TRUE(made.ok()) << made.error().message;
  ASSERT_TRUE(place->stop(made->id).ok());
  ASSERT_TRUE(place->start(made->id).ok());
  json items = json::array();
  const std::string sent = cluster.created();
  for (std::size_t s = 0; s < sent.size();) {
    const std::size_t e = sent.find('\n', s);
    items.push_back(json::parse(sent.substr(s, e - s)));
    s = e + 1;
  }
  // The probes' namespace, policies and pods (8); the space's namespace, objects (8) and its two
  // pods, made at create and again at start (4).
  EXPECT_EQ(items.size(), 8u + 1u + 8u + 4u);
  const std::string file = cluster.dir() + "/sent.json";
  std::ofstream(file) << json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump();
  EXPECT_EQ(validate(file), 0) << testing::slurp(file + ".log");
  EXPECT_EQ(cluster.refused(), "");
}

TEST(KubePolicyTest, NoGeneratedObjectBreaksARule) {
  for (const json& o : every_object()) {
    for (const std::string& w : weakenings(o)) ADD_FAILURE() << w;
    EXPECT_NE(o["kind"], "Secret");
  }
}

// Inputs a user or a space could choose (a name, a command, an image reference) never turn into a
// Secret, a host path, a privilege, a host namespace or a token: the rules hold for hostile text.
TEST(KubePolicyTest, HostileNamesAndCommandsChangeNoRule) {
  KubeSpec s = golden_spec();
  s.name = "x\"},\"hostNetwork\":true,\"a\":{\"";
  s.command = {"--privileged", "hostPath", "secretKeyRef", "$(POD_IP)"};
  for (const json& o : {namespace_object(s), space_pod(s), gatekeeper_pod(s)}) {
    for (const std::string& w : weakenings(o)) ADD_FAILURE() << w;
    EXPECT_FALSE(o.contains("spec") && o["spec"].is_object() && o["spec"].contains("hostNetwork") &&
                 o["spec"]["hostNetwork"] == true);
  }
  EXPECT_EQ(namespace_object(s)["metadata"]["annotations"][std::string(kAnnotationName)], s.name);
}

// The rules can say no: each way a Pod could be weakened is caught and named.
TEST(KubePolicyTest, EachWeakeningOfAPodIsNamed) {
  const json base = space_pod(golden_spec());
  struct Case {
    const char* what;
    std::function<void(json&)> change;
  };
  const std::vector<Case> cases = {
      {"hostNetwork", [](json& p) { p["spec"]["hostNetwork"] = true; }},
      {"hostPID", [](json& p) { p["spec"]["hostPID"] = true; }},
      {"hostIPC", [](json& p) { p["spec"]["hostIPC"] = true; }},
      {"privileged",
       [](json& p) { p["spec"]["containers"][0]["securityContext"]["privileged"] = true; }},
      {"allowPrivilegeEscalation",
       [](json& p) {
         p["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = true;
       }},
      {"hostPath",
       [](json& p) {
         p["spec"]["volumes"].push_back({{"name", "h"}, {"hostPath", {{"path", "/"}}}});
       }},
      {"secret",
       [](json& p) {
         p["spec"]["volumes"].push_back({{"name", "s"}, {"secret", {{"secretName", "x"}}}});
       }},
      {"secretKeyRef",
       [](json& p) {
         p["spec"]["containers"][0]["env"].push_back(
             {{"name", "K"}, {"valueFrom", {{"secretKeyRef", {{"name", "x"}, {"key", "k"}}}}}});
       }},
      {"projected",
       [](json& p) {
         p["spec"]["volumes"].push_back(
             {{"name", "t"},
              {"projected",
               {{"sources", json::array({{{"serviceAccountToken", {{"path", "t"}}}}})}}}});
       }},
      {"automountServiceAccountToken",
       [](json& p) { p["spec"].erase("automountServiceAccountToken"); }},
      {"capabilities",
       [](json& p) {
         p["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] =
             json::array({"NET_ADMIN"});
       }},
      {"runAsUser",
       [](json& p) { p["spec"]["containers"][0]["securityContext"]["runAsUser"] = 0; }},
      {"runAsNonRoot", [](json& p) { p["spec"]["securityContext"]["runAsNonRoot"] = false; }},
      {"readOnlyRootFilesystem",
       [](json& p) {
         p["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] = false;
       }},
      {"seccompProfile",
       [](json& p) {
         p["spec"]["securityContext"]["seccompProfile"] = {{"type", "Unconfined"}};
       }},
      {"containers",
       [](json& p) { p["spec"]["containers"].push_back(p["spec"]["containers"][0]); }},
      {"initContainers", [](json& p) { p["spec"]["initContainers"] = p["spec"]["containers"]; }},
      {"hostPort",
       [](json& p) {
         p["spec"]["containers"][0]["ports"] =
             json::array({{{"containerPort", 80}, {"hostPort", 80}}});
       }},
      {"envFrom",
       [](json& p) {
         p["spec"]["containers"][0]["envFrom"] = json::array({{{"secretRef", {{"name", "x"}}}}});
       }},
  };
  for (const Case& c : cases) {
    json p = base;
    c.change(p);
    const std::vector<std::string> found = weakenings(p);
    ASSERT_FALSE(found.empty()) << c.what;
    bool named = false;
    for (const std::string& f : found) named = named || f.find(c.what) != std::string::npos;
    EXPECT_TRUE(named) << c.what << ": " << found.front();
  }
  json secret = {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "x"}}}};
  EXPECT_FALSE(weakenings(secret).empty());
}

const json* object_named(const std::vector<json>& all, const std::string& name) {
  for (const json& o : all) {
    if (o["metadata"]["name"] == name) return &o;
  }
  return nullptr;
}

// The space reaches only the gatekeeper's two ports (no DNS); the gatekeeper reaches 443 outside
// every private, pod, service and node range and the metadata address, and the cluster's DNS.
TEST(KubePolicyTest, NetworkPoliciesAllowExactlyTheCorridorTheWindowAnd443) {
  const std::vector<json> p = network_policies(golden_spec());
  ASSERT_EQ(p.size(), 4u);
  const json* deny = object_named(p, "default-deny");
  ASSERT_NE(deny, nullptr);
  EXPECT_EQ((*deny)["spec"]["podSelector"], json::object());
  EXPECT_EQ((*deny)["spec"]["policyTypes"], json::array({"Ingress", "Egress"}));
  EXPECT_FALSE((*deny)["spec"].contains("ingress") || (*deny)["spec"].contains("egress"));
  const json* space = object_named(p, "space-egress");
  ASSERT_NE(space, nullptr);
  ASSERT_EQ((*space)["spec"]["egress"].size(), 1u);
  const json& rule = (*space)["spec"]["egress"][0];
  EXPECT_EQ(rule["ports"],
            json::parse(R"([{"protocol":"TCP","port":3128},{"protocol":"TCP","port":8080}])"));
  EXPECT_EQ(rule["to"][0]["podSelector"]["matchLabels"][std::string(kLabelRole)], "gatekeeper");
  EXPECT_FALSE(rule["to"][0].contains("ipBlock") || rule["to"][0].contains("namespaceSelector"));
  const json* out = object_named(p, "gatekeeper-egress");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ((*out)["spec"]["egress"].size(), 2u);
  const json& web = (*out)["spec"]["egress"][0];
  EXPECT_EQ(web["ports"], json::parse(R"([{"protocol":"TCP","port":443}])"));
  const json except = web["to"][0]["ipBlock"]["except"];
  for (const char* r : {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                        "169.254.0.0/16", "127.0.0.0/8", "203.0.113.7/32"}) {
    EXPECT_NE(std::find(except.begin(), except.end(), json(r)), except.end()) << r;
  }
  const json except6 = web["to"][1]["ipBlock"]["except"];
  for (const char* r : {"fc00::/7", "fe80::/10", "::ffff:0:0/96"}) {
    EXPECT_NE(std::find(except6.begin(), except6.end(), json(r)), except6.end()) << r;
  }
  const json& dns = (*out)["spec"]["egress"][1];
  EXPECT_EQ(dns["ports"],
            json::parse(R"([{"protocol":"UDP","port":53},{"protocol":"TCP","port":53}])"));
  EXPECT_EQ(dns["to"][0]["podSelector"]["matchLabels"]["k8s-app"], "kube-dns");
  // The space pod itself: no DNS server, the gatekeeper by /etc/hosts.
  const json pod = space_pod(golden_spec());
  EXPECT_EQ(pod["spec"]["dnsPolicy"], "None");
  EXPECT_EQ(pod["spec"]["hostAliases"][0]["ip"], "10.96.0.10");
}

TEST(KubeRegistryTest, ContextAndNamespaceAreAlwaysExplicit) {
  PlaceOptions o;
  o.owner = "0123456789abcdef01234567";
  Result<std::unique_ptr<Place>> p = builtin_registry().make("kubernetes", o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, Code::kUsage);
  o.kube_context = "kind-spaces";
  p = builtin_registry().make("kubernetes", o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("--namespace"), std::string::npos);
  for (const char* bad :
       {"Spaces", "-gk", "gk-", "a_b", "0gk", "averyveryveryveryveryveryveryverylongnamespace"}) {
    o.kube_namespace = bad;
    EXPECT_FALSE(builtin_registry().make("kubernetes", o).ok()) << bad;
  }
  o.kube_namespace = "spaces";
  EXPECT_TRUE(builtin_registry().make("kubernetes", o).ok());
}

class KubePlaceTest : public ::testing::Test {
 protected:
  testing::FakeCluster cluster;
  std::unique_ptr<KubernetesPlace> place = cluster.place("kubeowner");
  std::string id;
  void TearDown() override { EXPECT_EQ(cluster.refused(), ""); }
  void make() {
    CreateRequest r;
    r.memory_bytes = 256ll << 20;
    Result<SpaceSummary> s = place->create(r);
    ASSERT_TRUE(s.ok()) << s.error().message;
    id = s->id;
  }
  json& stored(json& state, const std::string& kind, const std::string& name) {
    for (json& o : state["objects"]) {
      if (o["kind"] == kind && o["metadata"]["name"] == name &&
          o["metadata"].value("namespace", "") == "gk-" + id) {
        return o;
      }
    }
    ADD_FAILURE() << kind << "/" << name << " not stored";
    static json none;
    return none;
  }
};

TEST_F(KubePlaceTest, ExecArgvIsKubectlExecInteractiveWithExplicitContextAndNamespace) {
  make();
  Result<std::vector<std::string>> a = place->exec_argv(id);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(*a, (std::vector<std::string>{FAKE_KUBECTL, "--context", "spacectl-test", "--namespace",
                                          "gk-" + id, "exec", "-i", "space", "--container", "space",
                                          "--"}));
  Result<std::vector<std::string>> tty = place->interactive_exec_argv(id, true);
  ASSERT_TRUE(tty.ok()) << tty.error().message;
  EXPECT_EQ(*tty, (std::vector<std::string>{FAKE_KUBECTL, "--context", "spacectl-test",
                                            "--namespace", "gk-" + id, "exec", "-i", "--tty",
                                            "space", "--container", "space", "--"}));
  Result<std::vector<std::string>> c = place->connect(id, 27600);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(std::vector<std::string>(c->end() - 3, c->end()),
            (std::vector<std::string>{"/bin/nc", "127.0.0.1", "27600"}));
  Result<ExecOutput> uid =
      place->exec(id, ExecTarget::kSpace, {"id", "-u"}, {}, std::chrono::seconds(10));
  ASSERT_TRUE(uid.ok());
  EXPECT_EQ(uid->out, "70000\n");
  // Every call named the context and the namespace first (the fake refuses anything else).
  std::size_t calls = 0;
  const std::string log = cluster.log();
  for (std::size_t s = 0; s < log.size();) {
    const std::size_t e = log.find('\n', s);
    const std::string first = "--context\x1fspacectl-test\x1f--namespace\x1f";
    EXPECT_EQ(log.compare(s, first.size(), first), 0) << log.substr(s, e - s);
    ++calls;
    s = e + 1;
  }
  EXPECT_GT(calls, 10u);
}

// verify reads every object back: a field the cluster changed and an object nobody asked for are
// both named; a stopped space keeps its claims.
TEST_F(KubePlaceTest, VerifyNamesEachDifferenceTheClusterIntroduced) {
  make();
  Result<std::vector<Difference>> clean = place->verify(id);
  ASSERT_TRUE(clean.ok()) << clean.error().message;
  for (const Difference& d : *clean) ADD_FAILURE() << d.check << ": " << d.message;
  json state = cluster.state();
  stored(state, "Pod", "space")["spec"]["hostNetwork"] = true;
  stored(state, "Pod", "gatekeeper")["spec"]["containers"][0]["securityContext"]["runAsUser"] = 0;
  stored(state, "PersistentVolumeClaim", "work")["spec"]["resources"]["requests"]["storage"] =
      "100Gi";
  json extra = stored(state, "NetworkPolicy", "space-egress");
  extra["metadata"]["name"] = "allow-all";
  state["objects"].push_back(extra);
  json binding = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "RoleBinding"},
                  {"metadata", {{"name", "space-admin"}, {"namespace", "gk-" + id}}}};
  state["objects"].push_back(binding);
  for (json& o : state["objects"]) {
    if (o["kind"] == "Namespace" && o["metadata"]["name"] == "gk-" + id) {
      o["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "privileged";
    }
  }
  cluster.set_state(state);
  Result<std::vector<Difference>> v = place->verify(id);
  ASSERT_TRUE(v.ok()) << v.error().message;
  std::string all;
  for (const Difference& d : *v) all += d.check + ": " + d.message + "\n";
  for (const char* want :
       {"pod_space: Pod/space/spec/hostNetwork: true, want false", "pod_gatekeeper",
        "runAsUser: 0, want 65532", "persistentvolumeclaim_work",
        "unexpected_networkpolicy: NetworkPolicy gk-", "unexpected_rolebinding",
        "namespace: Namespace/gk-"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << all;
  }
  Result<void> started =
      place->start(id);  // running: nothing to start; verify is the gate at create and start
  EXPECT_TRUE(started.ok());
}

TEST_F(KubePlaceTest, StopDeletesThePodsAndKeepsTheClaims) {
  make();
  ASSERT_TRUE(place->stop(id).ok());
  const json state = cluster.state();
  std::size_t pods = 0, claims = 0;
  for (const json& o : state["objects"]) {
    pods += o["kind"] == "Pod" ? 1 : 0;
    claims += o["kind"] == "PersistentVolumeClaim" ? 1 : 0;
  }
  EXPECT_EQ(pods, 0u);
  EXPECT_EQ(claims, 2u);
  Result<std::vector<Difference>> v = place->verify(id);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->empty());
  ASSERT_TRUE(place->start(id).ok());
  Result<std::vector<SpaceSummary>> all = place->list();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].space_state, "running");
  EXPECT_TRUE((*all)[0].missing.empty());
}

// create → verify → start: a mutating admission webhook that adds a host path to every pod is
// caught while the pods are still gated; nothing ever runs, and the namespace goes again.
TEST_F(KubePlaceTest, CreateRefusesWhatAWebhookAddedBeforeAnythingRuns) {
  setenv("FAKE_KUBECTL_WEBHOOK", "hostpath", 1);
  CreateRequest r;
  Result<SpaceSummary> s = place->create(r);
  unsetenv("FAKE_KUBECTL_WEBHOOK");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kVerifyFailed);
  EXPECT_NE(s.error().message.find("hostPath is present"), std::string::npos) << s.error().message;
  EXPECT_EQ(cluster.log().find("\x1fpatch\x1f"), std::string::npos)
      << "a scheduling gate was lifted";
  EXPECT_EQ(cluster.leftovers("kubeowner"), "");
}

TEST_F(KubePlaceTest, PlaceCheckProvesIsolationWithAPositiveControl) {
  Result<CheckReport> r = place->check();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->isolation_proved);
  EXPECT_TRUE(r->positive_control);
  EXPECT_EQ(r->engine_version, "kubernetes v1.36.0 (kubectl v1.36.0)");
  std::string all;
  for (const std::string& f : r->findings) all += f + "\n";
  for (const char* want :
       {"refused: a listener in another pod", "refused: the metadata address (169.254.169.254:80)",
        "refused: the API server (10.96.0.1:443)", "positive control: the isolated probe reached",
        "RuntimeDefault"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << all;
  }
  EXPECT_EQ(cluster.leftovers("kubeowner"), "") << "the probe namespace is gone";
}

// A network plugin that accepts NetworkPolicy objects and enforces none: the probe gets through,
// and the place says it cannot restrict the network.
TEST_F(KubePlaceTest, AClusterThatDoesNotEnforceNetworkPolicyIsUnusable) {
  setenv("FAKE_KUBECTL_CNI", "none", 1);
  Result<CheckReport> r = place->check();
  unsetenv("FAKE_KUBECTL_CNI");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->isolation_proved);
  EXPECT_TRUE(r->positive_control);
  EXPECT_NE(r->findings.back().find(
                "does not enforce NetworkPolicy egress: unusable for allowlist spaces"),
            std::string::npos);
}

TEST_F(KubePlaceTest, MissingPermissionsAreNamedAndNothingIsCreated) {
  setenv("FAKE_KUBECTL_DENY", "create pods/exec", 1);
  Result<CheckReport> r = place->check();
  unsetenv("FAKE_KUBECTL_DENY");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->isolation_proved);
  EXPECT_NE(r->findings.back().find("may not: create pods/exec"), std::string::npos)
      << r->findings.back();
  EXPECT_EQ(cluster.created(), "");
}

TEST_F(KubePlaceTest, AnotherContextIsNeverUsed) {
  PlaceOptions o = cluster.options("kubeowner");
  o.kube_context = "production";
  KubernetesPlace other(o);
  Result<std::vector<SpaceSummary>> all = other.list();
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().code, Code::kPlaceUnreachable);
  EXPECT_NE(all.error().message.find("context production"), std::string::npos)
      << all.error().message;
}

TEST_F(KubePlaceTest, AnUnreachableApiServerIsNeverAnEmptyList) {
  setenv("FAKE_KUBECTL_UNREACHABLE", "1", 1);
  Result<std::vector<SpaceSummary>> all = place->list();
  unsetenv("FAKE_KUBECTL_UNREACHABLE");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().code, Code::kPlaceUnreachable);
}

}  // namespace
}  // namespace controller::kube
