#include "controller/kube_place.h"

#include <thread>

#include "controller/docker_place.h"
#include "controller/gatekeeper_channel.h"
#include "controller/image_ensure.h"
#include "controller/loop_disk.h"
#include "controller/records.h"
#include "controller/signals.h"
#include "controller/text.h"

namespace controller::kube {

using nlohmann::json;

namespace {

std::string pod_name(ExecTarget t) {
  switch (t) {
    case ExecTarget::kSpace:
      return "space";
    case ExecTarget::kGatekeeper:
      return "gatekeeper";
  }
  return "space";
}

std::string phase_state(const json& pod) {
  if (pod.is_null()) return "missing";
  const std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
  if (phase == "Running") return "running";
  if (phase == "Succeeded" || phase == "Failed") return "exited";
  return "created";  // Pending: gated, scheduled, pulling
}

const json* item(const json& list, std::string_view kind, std::string_view name) {
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return nullptr;
  for (const json& o : list["items"]) {
    if (o.value("kind", "") == kind && o.contains("metadata") &&
        o["metadata"].value("name", "") == name) {
      return &o;
    }
  }
  return nullptr;
}

}  // namespace

KubernetesPlace::KubernetesPlace(PlaceOptions options)
    : options_(std::move(options)),
      cli_(options_.place_program.empty() ? "kubectl" : options_.place_program,
           options_.kube_context) {}

Result<json> KubernetesPlace::owned_namespace(const std::string& id) {
  if (!is_space_id(id)) {
    return fail(Code::kInvalidArgument, "space " + id + ": an id is 12 lowercase hex digits");
  }
  const std::string ns = space_namespace(options_.kube_namespace, id);
  Result<json> got = cli_.json(
      ns, {"get", "namespace", ns, "--ignore-not-found", "--output", "json"}, "namespace " + ns);
  if (!got) return got.error();
  const json& labels = got->is_object() && got->contains("metadata")
                           ? (*got)["metadata"].value("labels", json::object())
                           : json::object();
  if (got->is_null() || labels.value(std::string(kLabelMarker), "") != "true" ||
      labels.value(std::string(kLabelOwner), "") != options_.owner ||
      labels.value(std::string(kLabelId), "") != id) {
    return fail(Code::kSpaceNotFound, "space " + id + ": no namespace " + ns +
                                          " of this owner in context " + cli_.context());
  }
  return got;
}

Result<KubeSpec> KubernetesPlace::spec_of(const std::string& id, const json& ns) {
  KubeSpec spec;
  spec.id = id;
  spec.owner = options_.owner;
  spec.ns = space_namespace(options_.kube_namespace, id);
  const json annotations = ns["metadata"].value("annotations", json::object());
  spec.name = annotations.value(std::string(kAnnotationName), "");
  spec.created = annotations.value(std::string(kAnnotationCreated), "");
  if (!read_pods_annotation(annotations.value(std::string(kAnnotationPods), ""), spec)) {
    return fail(Code::kRecordUnreadable, "space " + id + ": the annotation " +
                                             std::string(kAnnotationPods) + " of namespace " +
                                             spec.ns + " is missing or malformed");
  }
  return spec;
}

Result<json> KubernetesPlace::pod(const std::string& ns, const std::string& name) {
  return cli_.json(ns, {"get", "pod", name, "--ignore-not-found", "--output", "json"},
                   "pod " + ns + "/" + name);
}

Result<std::string> KubernetesPlace::service_ip(const std::string& ns) {
  Result<json> svc =
      cli_.json(ns, {"get", "service", std::string(kGatekeeperAlias), "--output", "json"},
                "service " + ns + "/gatekeeper");
  if (!svc) return svc.error();
  const std::string ip = svc->contains("spec") ? (*svc)["spec"].value("clusterIP", "") : "";
  if (ip.empty() || ip == "None") {
    return fail(Code::kVerifyFailed, "service " + ns + "/gatekeeper: no cluster IP");
  }
  return ip;
}

Result<void> KubernetesPlace::wait_running(const std::string& ns, const std::string& name) {
  const auto deadline = std::chrono::steady_clock::now() + kPodRunningTimeout;
  std::string last = "not yet read";
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop_requests() > 0) {
      return fail(Code::kInterrupted, "pod " + ns + "/" + name + ": waiting stopped by a signal");
    }
    Result<json> p = pod(ns, name);
    if (!p) return p.error();
    const std::string state = phase_state(*p);
    if (state == "running") return {};
    if (state == "missing" || state == "exited") {
      return fail(Code::kCommandFailed,
                  "pod " + ns + "/" + name + ": " + state + " while waiting for it to run");
    }
    last = p->contains("status") ? (*p)["status"].dump().substr(0, 300) : "no status";
    std::this_thread::sleep_for(kPodPollInterval);
  }
  return fail(Code::kCommandTimeout,
              "pod " + ns + "/" + name + ": not running within 300 s; last status " + last);
}

Result<void> KubernetesPlace::lift_gate(const std::string& ns, const std::string& name) {
  Result<std::string> r = cli_.run(ns,
                                   {"patch", "pod", name, "--type", "json", "--patch",
                                    R"([{"op":"remove","path":"/spec/schedulingGates"}])"},
                                   "pod " + ns + "/" + name, kKubeChangeTimeout);
  if (!r) return r.error();
  return {};
}

Result<void> KubernetesPlace::delete_namespace(const std::string& ns) {
  Result<std::string> r = cli_.run(
      ns, {"delete", "namespace", ns, "--ignore-not-found", "--wait=true", "--timeout=300s"},
      "namespace " + ns, kNamespaceGoneTimeout + kKubeQueryTimeout);
  if (!r) return r.error();
  // --wait returns when the object is gone; read it back anyway (an older kubectl returned early).
  const auto deadline = std::chrono::steady_clock::now() + kNamespaceGoneTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    Result<json> got = cli_.json(
        ns, {"get", "namespace", ns, "--ignore-not-found", "--output", "json"}, "namespace " + ns);
    if (!got) return got.error();
    if (got->is_null()) return {};
    if (stop_requests() > 0) {
      return fail(Code::kInterrupted,
                  "namespace " + ns + ": waiting for its removal stopped by a signal");
    }
    std::this_thread::sleep_for(kPodPollInterval);
  }
  return fail(Code::kCommandTimeout, "namespace " + ns + ": still there 300 s after its deletion");
}

Result<void> KubernetesPlace::bring_up(KubeSpec& spec, bool space_too) {
  Result<std::string> ip = service_ip(spec.ns);
  if (!ip) return ip.error();
  spec.gatekeeper_service_ip = *ip;
  std::vector<json> pods = {gatekeeper_pod(spec)};
  if (space_too) pods.push_back(space_pod(spec));
  for (const json& p : pods) {
    const std::string name = p["metadata"]["name"];
    Result<json> old = pod(spec.ns, name);
    if (!old) return old.error();
    if (!old->is_null()) {  // an exited pod of an earlier start
      Result<std::string> d = cli_.run(
          spec.ns, {"delete", "pod", name, "--ignore-not-found", "--wait=true", "--timeout=60s"},
          "pod " + spec.ns + "/" + name, kKubeChangeTimeout);
      if (!d) return d.error();
    }
  }
  Result<std::string> made =
      cli_.run(spec.ns, {"create", "--filename", "-", "--output", "json"}, "pods of " + spec.ns,
               kKubeChangeTimeout, list_of(pods).dump());
  if (!made) return made.error();
  // create → verify → start: the pods are stored but gated; nothing runs until verify agrees.
  Result<std::vector<Difference>> v = verify(spec.id);
  if (!v) return v.error();
  if (!v->empty()) {
    std::string all;
    for (const Difference& d : *v) all += (all.empty() ? "" : "; ") + d.check + ": " + d.message;
    return fail(Code::kVerifyFailed, "space " + spec.id + ": verify found " +
                                         std::to_string(v->size()) + " difference(s): " + all);
  }
  if (Result<void> r = lift_gate(spec.ns, "gatekeeper"); !r) return r;
  if (Result<void> r = wait_running(spec.ns, "gatekeeper"); !r) return r;
  if (Result<void> r = wait_gatekeeper_ready(*this, spec.id); !r) return r;
  if (Result<void> r = deliver_window_key(*this, spec.id, spec.window_key); !r) return r;
  if (!space_too) return {};
  if (Result<void> r = lift_gate(spec.ns, "space"); !r) return r;
  return wait_running(spec.ns, "space");
}

Result<SpaceSummary> KubernetesPlace::create(const CreateRequest& request) {
  KubeSpec spec;
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
  spec.ns = space_namespace(options_.kube_namespace, spec.id);
  spec.memory_bytes = request.memory_bytes > 0 ? request.memory_bytes : kDefaultSpaceMemory;
  if (spec.memory_bytes < kMinSpaceMemory) {
    return fail(Code::kInvalidArgument, "space create: --memory is below 64 MiB");
  }
  spec.nano_cpus = request.nano_cpus > 0 ? request.nano_cpus : kNanoCpusPerCpu;
  spec.disk_bytes = request.disk_bytes > 0 ? request.disk_bytes : kDefaultDiskBytes;
  if (spec.disk_bytes < kMinDiskBytes || spec.disk_bytes > kMaxDiskBytes) {
    return fail(Code::kInvalidArgument, "space create: --disk is outside 64 MiB to 16 TiB");
  }
  spec.command = request.command;
  spec.seccomp_localhost = options_.seccomp_localhost;
  spec.window_key = random_hex(32);
  // A cluster pulls from a registry: both images by their recorded repository digest (image push).
  Result<std::string> gk = read_digest_record(options_.gatekeeper_image_file);
  if (!gk) return gk.error();
  if (gk->empty()) {
    return fail(Code::kImageMissing, "space create: the gatekeeper image has no registry digest (" +
                                         digest_record_for(options_.gatekeeper_image_file) +
                                         "); run spacectl image push first");
  }
  spec.gatekeeper_image = *gk;
  if (!request.space_image.empty()) {
    if (!is_digest_reference(request.space_image)) {
      return fail(
          Code::kInvalidArgument,
          "space create: on Kubernetes --image is a digest reference (registry/path@sha256:<hex>)");
    }
    spec.space_image = request.space_image;
  } else {
    Result<std::string> sp = read_digest_record(options_.space_image_file);
    if (!sp) return sp.error();
    if (sp->empty()) {
      return fail(Code::kImageMissing, "space create: the space image has no registry digest (" +
                                           digest_record_for(options_.space_image_file) +
                                           "); run spacectl image push first");
    }
    spec.space_image = *sp;
  }
  if (request.progress) request.progress("checking_names");
  Result<json> existing =
      cli_.json(spec.ns, {"get", "namespace", spec.ns, "--ignore-not-found", "--output", "json"},
                "namespace " + spec.ns);
  if (!existing) return existing.error();
  if (!existing->is_null()) {
    return fail(Code::kInvalidArgument, "space create: namespace " + spec.ns + " already exists");
  }

  if (request.progress) request.progress("creating_namespace");
  Result<std::string> ns =
      cli_.run(spec.ns, {"create", "--filename", "-", "--output", "json"}, "namespace " + spec.ns,
               kKubeChangeTimeout, namespace_object(spec).dump());
  if (!ns) return ns.error();
  auto rollback = [&](Failure f) -> Failure {
    if (Result<void> gone = delete_namespace(spec.ns); !gone) {
      f.message += "; rollback: " + gone.error().message;
    }
    return f;
  };
  if (request.progress) request.progress("creating_objects");
  Result<std::string> objects =
      cli_.run(spec.ns, {"create", "--filename", "-", "--output", "json"}, "objects of " + spec.ns,
               kKubeChangeTimeout, list_of(namespaced_objects(spec)).dump());
  if (!objects) return rollback(objects.error());
  if (request.progress) request.progress("starting_gatekeeper");
  if (Result<void> up = bring_up(spec, true); !up) return rollback(up.error());
  SpaceSummary s;
  s.id = spec.id;
  s.name = spec.name;
  s.created = spec.created;
  s.space_state = "running";
  s.gatekeeper_state = "running";
  s.window_url = std::string(kWindowBase) + spec.window_key;
  return s;
}

Result<std::vector<SpaceSummary>> KubernetesPlace::list() {
  Result<json> all = cli_.json(
      options_.kube_namespace,
      {"get", "namespaces", "--selector", label_selector(options_.owner), "--output", "json"},
      "namespaces of owner " + options_.owner);
  if (!all) return all.error();
  std::vector<SpaceSummary> out;
  if (all->is_null() || !all->contains("items") || !(*all)["items"].is_array()) return out;
  for (const json& ns : (*all)["items"]) {
    const json meta = ns.value("metadata", json::object());
    const json labels = meta.value("labels", json::object());
    const std::string id = labels.value(std::string(kLabelId), "");
    // Probe namespaces carry no id; a namespace whose name is not ours for its id is not a space.
    if (!is_space_id(id) ||
        meta.value("name", "") != space_namespace(options_.kube_namespace, id)) {
      continue;
    }
    SpaceSummary s;
    s.id = id;
    const json annotations = meta.value("annotations", json::object());
    s.name = annotations.value(std::string(kAnnotationName), "");
    s.created = annotations.value(std::string(kAnnotationCreated), "");
    const std::string name = meta.value("name", "");
    Result<json> live = cli_.json(
        name, {"get", "pods,persistentvolumeclaims,services,networkpolicies", "--output", "json"},
        "objects of " + name);
    if (!live) return live.error();
    const json* space = item(*live, "Pod", "space");
    const json* gk = item(*live, "Pod", "gatekeeper");
    s.space_state = space != nullptr ? phase_state(*space) : "exited";  // stop deletes the pods
    s.gatekeeper_state = gk != nullptr ? phase_state(*gk) : "exited";
    for (const auto& [kind, obj] :
         std::vector<std::pair<std::string, std::string>>{{"PersistentVolumeClaim", "home"},
                                                          {"PersistentVolumeClaim", "work"},
                                                          {"Service", "gatekeeper"},
                                                          {"NetworkPolicy", "default-deny"}}) {
      if (item(*live, kind, obj) == nullptr) s.missing.push_back(kind + "/" + obj);
    }
    if (space != nullptr && gk == nullptr) s.missing.push_back("Pod/gatekeeper");
    KubeSpec spec;
    if (read_pods_annotation(annotations.value(std::string(kAnnotationPods), ""), spec)) {
      s.window_url = std::string(kWindowBase) + spec.window_key;
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::string> KubernetesPlace::running_pod(const std::string& id, ExecTarget target) {
  Result<json> ns = owned_namespace(id);
  if (!ns) return ns.error();
  const std::string name = (*ns)["metadata"].value("name", "");
  Result<json> p = pod(name, pod_name(target));
  if (!p) return p.error();
  if (phase_state(*p) != "running") {
    return fail(Code::kSpaceNotRunning,
                "space " + id + ": pod " + name + "/" + pod_name(target) + " is not running");
  }
  return name;
}

Result<ExecOutput> KubernetesPlace::exec(const std::string& id, ExecTarget target,
                                         const std::vector<std::string>& argv,
                                         const std::string& stdin_bytes,
                                         std::chrono::milliseconds timeout) {
  if (argv.empty()) return fail(Code::kInvalidArgument, "space exec: no command");
  Result<std::string> ns = running_pod(id, target);
  if (!ns) return ns.error();
  std::vector<std::string> args = {"exec",           "-i", pod_name(target), "--container",
                                   pod_name(target), "--"};
  args.insert(args.end(), argv.begin(), argv.end());
  Result<ProcessOutcome> o =
      cli_.run_raw(*ns, args, "pod " + *ns + "/" + pod_name(target), timeout, stdin_bytes);
  if (!o) return o.error();
  std::string err = o->err;
  const std::optional<int> status = exec_status(*o, err);
  if (!status) {
    if (unreachable_text(o->err)) {
      return fail(Code::kPlaceUnreachable,
                  "kubectl exec in " + *ns + ": the API server does not answer: " + o->describe());
    }
    return fail(Code::kCommandFailed,
                "kubectl exec in " + *ns + "/" + pod_name(target) + ": " + o->describe());
  }
  return ExecOutput{*status, std::move(o->out), std::move(err)};
}

Result<std::vector<std::string>> KubernetesPlace::exec_argv(const std::string& id) {
  Result<std::string> ns = running_pod(id, ExecTarget::kSpace);
  if (!ns) return ns.error();
  // -i without -t: binary-safe, and the command's exit status comes back as kubectl's own.
  return cli_.argv(*ns, {"exec", "-i", "space", "--container", "space", "--"});
}

Result<std::vector<std::string>> KubernetesPlace::interactive_exec_argv(const std::string& id,
                                                                        bool terminal) {
  if (!terminal) return exec_argv(id);
  Result<std::string> ns = running_pod(id, ExecTarget::kSpace);
  if (!ns) return ns.error();
  return cli_.argv(*ns, {"exec", "-i", "--tty", "space", "--container", "space", "--"});
}

Result<std::vector<std::string>> KubernetesPlace::connect(const std::string& id,
                                                          std::uint16_t port) {
  Result<std::vector<std::string>> a = exec_argv(id);
  if (!a) return a.error();
  // busybox nc of the space image: a cluster gives no way to place a root-owned program of ours
  // into a running pod (no exec as root), and anything the space user can write the agent can
  // replace; the stream's other end is hostile either way (the dispatcher treats it so).
  a->insert(a->end(), {"/bin/nc", "127.0.0.1", std::to_string(port)});
  return a;
}

Result<void> KubernetesPlace::stop(const std::string& id) {
  Result<json> ns = owned_namespace(id);
  if (!ns) return ns.error();
  const std::string name = (*ns)["metadata"].value("name", "");
  // The space first: it never runs without its gatekeeper. Claims, Service and policies stay.
  for (const char* p : {"space", "gatekeeper"}) {
    Result<std::string> r =
        cli_.run(name, {"delete", "pod", p, "--ignore-not-found", "--wait=true", "--timeout=60s"},
                 "pod " + name + "/" + p, kKubeChangeTimeout);
    if (!r) return r.error();
  }
  return {};
}

Result<void> KubernetesPlace::start(const std::string& id) {
  Result<json> ns = owned_namespace(id);
  if (!ns) return ns.error();
  Result<KubeSpec> spec = spec_of(id, *ns);
  if (!spec) return spec.error();
  Result<json> space = pod(spec->ns, "space");
  if (!space) return space.error();
  Result<json> gk = pod(spec->ns, "gatekeeper");
  if (!gk) return gk.error();
  if (phase_state(*space) == "running") {
    if (phase_state(*gk) == "running") return {};
    return bring_up(*spec, false);  // a running space gets its gatekeeper back, nothing else
  }
  return bring_up(*spec, true);
}

Result<void> KubernetesPlace::remove(const std::string& id) {
  Result<json> ns = owned_namespace(id);
  if (!ns) return ns.error();
  return delete_namespace((*ns)["metadata"].value("name", ""));
}

}  // namespace controller::kube
