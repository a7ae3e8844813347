// The orchestration of `spacectl escape-test` (escape_runner.h): controls up, binary in, runs,
// host checks, merge, everything down again. Teardown runs from a destructor so an early return
// still removes what the run made and restores the space's network choice.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/escape_binary.h"
#include "controller/escape_dns.h"
#include "controller/escape_facts.h"
#include "controller/escape_host.h"
#include "controller/escape_resolve.h"
#include "controller/escape_runner.h"
#include "controller/gatekeeper_channel.h"
#include "controller/host_guard.h"
#include "controller/records.h"
#include "controller/registry.h"
#include "controller/signals.h"
#include "controller/spec.h"
#include "escape-suite/report.h"
#include "escape-suite/sha256.h"
#include "escape-suite/upstream_answer.h"
#include "policy/number.h"

namespace controller {

using escape::CaseResult;
using escape::Verdict;
using nlohmann::json;

namespace {

class Teardown {
 public:
  Teardown() = default;
  Teardown(const Teardown&) = delete;
  Teardown& operator=(const Teardown&) = delete;
  ~Teardown() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
  }
  void add(std::function<void()> step) { steps_.push_back(std::move(step)); }

 private:
  std::vector<std::function<void()>> steps_;
};

// A stop signal (signals.h) ends the run; the teardown still removes everything and restores the
// space's network and grants, with fresh processes.
Failure interrupted() {
  return fail(Code::kInterrupted, "escape-test: stopped by signal " + std::to_string(last_stop_signal()) +
                                      "; the twin, the test upstream and network, the allowlist switch and the fake grant are rolled back");
}

std::int64_t inspect_number(const DockerCli& cli, const std::string& container, const std::string& format) {
  Result<std::string> out = cli.run({"container", "inspect", "--format", format, "--", container}, container);
  if (!out) return 0;
  std::string_view text = *out;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  return policy::parse_number<std::int64_t>(text).value_or(0);  // unreadable: no limit known
}

// The pinned images the run used; the engine, kernel and limits come from collect_host_facts.
std::vector<std::pair<std::string, std::string>> pin_facts(const PlaceOptions& po) {
  std::vector<std::pair<std::string, std::string>> facts;
  for (const auto& [name, file] : {std::pair{"image.gatekeeper", po.gatekeeper_image_file},
                                   std::pair{"image.space", po.space_image_file}}) {
    if (Result<std::string> id = read_small_file(file, 256); id) facts.emplace_back(name, id->substr(0, id->find('\n')));
  }
  return facts;
}

std::string window_base_of(Place& place, const std::string& id) {
  Result<std::vector<SpaceSummary>> all = place.list();
  if (all) {
    for (const SpaceSummary& s : *all) {
      if (s.id == id) return s.window_url;
    }
  }
  return {};
}

}  // namespace

Result<EscapeReport> run_escape_test(const Registry& registry, const PlaceOptions& po,
                                     const EscapeOptions& eo) {
  if (!is_space_id(eo.space_id)) return fail(Code::kInvalidArgument, "escape-test " + eo.space_id + ": an id is 12 lowercase hex digits");
  const DockerCli cli(po.engine);
  Result<std::unique_ptr<Place>> made = registry.make(eo.place_name, po);
  if (!made) return made.error();
  if ((*made)->privileged_exec() == nullptr) {
    return fail(Code::kPlaceUnusable,
                "escape-test: place " + eo.place_name +
                    " cannot exec as root in a space (the escape suite runs on docker)");
  }
  Place& place = **made;
  const std::string id = eo.space_id;
  const Names main_names = names_for(id);
  Result<std::string> binary = read_small_file(eo.binary, kMaxSuiteBinary);
  if (!binary) return fail(Code::kInvalidArgument, "escape-test: the escape-suite binary " + eo.binary + " cannot be read (--binary)");
  Result<std::string> image_text = read_small_file(po.space_image_file, 256);
  if (!image_text) return fail(Code::kImageMissing, "escape-test: " + po.space_image_file + " (the probe image) is missing");
  std::string image = *image_text;
  while (!image.empty() && (image.back() == '\n' || image.back() == ' ')) image.pop_back();
  escape::Options selection;
  selection.only = eo.only;

  const std::string run = random_hex(6);
  const std::vector<std::string> labels = escape_labels(run, po.owner);
  // The test upstream's bridge (RFC 2544, --internal) comes first: the twin's gatekeeper is
  // created asking the test resolver, which listens on the host's address of that bridge. The
  // bridge carries the run's labels, so the teardown's sweep removes it on every path.
  std::string upstream_note;
  const Result<std::string> picked = pick_test_subnet();
  const std::string upstream_net = "gk-escape-" + run + "-upstream";
  TestResolver resolver;  // declared before the teardown: it answers until the twin is gone
  std::string host_bridge_ip;
  if (!picked) {
    upstream_note = picked.error().message;
  } else {
    const std::string& subnet = *picked;
    std::vector<std::string> a = {"network",    "create",   "--driver", "bridge",
                                  "--internal", "--subnet", subnet};
    a.insert(a.end(), labels.begin(), labels.end());
    a.insert(a.end(), {"--", upstream_net});
    if (Result<std::string> r = cli.run(a, upstream_net, kChangeTimeout); !r) {
      upstream_note = r.error().message;
    } else {
      host_bridge_ip = subnet.substr(0, subnet.rfind('.')) + ".1";
    }
  }
  std::string resolver_note;
  if (!host_bridge_ip.empty()) {
    if (Result<void> r = resolver.start(host_bridge_ip); !r) {
      resolver_note = r.error().message + "; ";
    }
  }

  // Declared before the teardown, which uses it while it is still alive.
  PlaceOptions twin_options = po;
  const bool have_test_image = ::access(eo.test_gatekeeper_image_file.c_str(), R_OK) == 0;
  if (have_test_image) twin_options.gatekeeper_image_file = eo.test_gatekeeper_image_file;
  if (resolver_note.empty() && !host_bridge_ip.empty()) {
    twin_options.unsafe_test_dns_server = resolver.endpoint();
    // The host's address on the test bridge is public to the test image's table; a real host's
    // public addresses reach the gatekeeper as --block the same way (spec.h blocked_ranges).
    twin_options.unsafe_test_blocked_ranges = {host_bridge_ip + "/32"};
  }
  Result<std::unique_ptr<Place>> twin_made = registry.make(eo.place_name, twin_options);
  if (!twin_made) return twin_made.error();
  Place& twin_place = **twin_made;
  HostListeners listeners;
  std::optional<SpaceLock> twin_lock;  // declared first: released after the teardown removed the twin
  Teardown teardown;
  // Last step of the teardown: anything labelled with this run, containers before networks.
  teardown.add([&cli, run] {
    const std::string filter = "label=" + std::string(kLabelEscapeRun) + "=" + run;
    if (Result<std::string> r = cli.run({"ps", "--all", "--quiet", "--filter", filter}, run); r && !r->empty()) {
      std::vector<std::string> rm = {"rm", "--force", "--"};
      for (std::size_t s = 0, e; s < r->size(); s = e + 1) {
        e = r->find('\n', s);
        if (e == std::string::npos) e = r->size();
        if (e > s) rm.push_back(r->substr(s, e - s));
      }
      (void)cli.run_raw(rm, run, kChangeTimeout);
    }
    if (Result<std::string> r = cli.run({"network", "ls", "--quiet", "--filter", filter}, run); r) {
      for (std::size_t s = 0, e; s < r->size(); s = e + 1) {
        e = r->find('\n', s);
        if (e == std::string::npos) e = r->size();
        if (e > s) (void)cli.run_raw({"network", "rm", "--", r->substr(s, e - s)}, run, kChangeTimeout);
      }
    }
  });

  // The ids this selection must report, from the same bytes run on the host.
  Result<std::vector<std::string>> ids = host_listed_ids(*binary, eo.only);
  if (!ids) return ids.error();
  bool need_twin = false;
  for (const std::string& c : *ids) {
    need_twin = need_twin || is_twin_case(c) || c.find("other-space") != std::string::npos || c.rfind("dns.", 0) == 0;
  }

  // The space under test must be ours and running (exec checks both). The binary goes where the
  // space user cannot replace it (place_binary); the bait is the space user's own file.
  const std::string bait_path = "/tmp/escape-bait-" + run;
  Result<std::string> binary_path = place_binary(place, id, run, *binary);
  if (!binary_path) return binary_path.error();
  teardown.add([&place, id, dir = binary_path->substr(0, binary_path->rfind('/')), bait_path] {
    (void)place.privileged_exec()->exec_as_root(id, {"rm", "-rf", dir}, {}, kCopyTimeout);
    (void)place.exec(id, ExecTarget::kSpace, {"rm", "-f", bait_path}, {}, kCopyTimeout);
  });

  std::vector<CaseResult> host;
  // Only when verify inspected the inner network and found nothing ("network_*" covers its
  // host_isolation check: no IPv4 on its bridge) may the binary count EHOSTUNREACH via its gateway.
  bool gateway_unowned = false;
  // Verify before the run attaches the gatekeeper to the test upstream's network (a difference then).
  if (Result<std::vector<Difference>> d = place.verify(id); d) {
    std::string ev;
    gateway_unowned = true;
    for (const Difference& x : *d) {
      ev += "[" + x.check + "] " + x.message + "; ";
      if (x.check.rfind("network_", 0) == 0) gateway_unowned = false;
    }
    host.push_back(host_result("host.verify", d->empty() ? escape::pass("no difference from the hardening spec")
                                                         : escape::fail("differs from the hardening spec: " + ev)));
  } else {
    host.push_back(host_result("host.verify", escape::inconclusive(d.error().message)));
  }
  // Controls: listeners on every host address, kept open until we return.
  std::string listener_note;
  listeners.open_all(listener_note);
  host.push_back(host_result("host.listeners-answer", listeners.answer_locally()));

  // A fake grant key: random, worthless, given to the gatekeepers on stdin only; the space gets
  // its sha256. It is also the host bait (a 0600 file in a fresh host directory).
  const std::string key = "escfake" + random_hex(24);
  const std::string key_sha = escape::sha256_hex(key);
  const std::string bait = "escbait" + random_hex(24);
  char host_dir_template[] = "/tmp/spacectl-escape-XXXXXX";
  if (const char* d = ::mkdtemp(host_dir_template); d != nullptr) {
    const std::string dir = d;
    const std::string file = dir + "/grant-key";
    if (std::ofstream out(file, std::ios::trunc); out) out << key << "\n";
    ::chmod(file.c_str(), 0600);
    teardown.add([dir, file] {
      ::unlink(file.c_str());
      ::rmdir(dir.c_str());
    });
  }
  if (Result<void> c = copy_into(place, id, bait_path, bait + "\n", false, false); !c) return c.error();

  // The space's network choice, restored at the end (the allowlist switch below changes it).
  Result<json> saved_policy = gatekeeper_control(place, id, "GET", "/policy");
  if (!saved_policy) return saved_policy.error();
  const json restore = {{"mode", saved_policy->value("mode", "allowlist")},
                        {"domains", saved_policy->contains("domains") ? (*saved_policy)["domains"] : json::array()}};
  teardown.add([&place, id, restore] { (void)gatekeeper_control(place, id, "POST", "/network", restore.dump()); });
  // The boundary the rich reports draw: the space's own choice, before the run switches it.
  escape::ReportContext context;
  context.has_boundary = true;
  context.boundary = boundary_from_policy(id, main_names.gatekeeper, main_names.inner, main_names.outer, saved_policy->dump());
  context.host_facts = pin_facts(po);

  // The twin: a throw-away space behind the test gatekeeper, also the other space.
  std::string twin_id, twin_note;
  if (!have_test_image) twin_note = "no " + eo.test_gatekeeper_image_file + ": the twin runs the release gatekeeper, its control cannot work; ";
  if (need_twin) {
    CreateRequest req;
    req.id = random_hex(6);
    if (!eo.state_dir.empty()) {
      if (Result<SpaceLock> l = SpaceLock::acquire(eo.state_dir, req.id, "escape-test twin"); l) twin_lock.emplace(std::move(*l));
    }
    req.name = "escape-twin-" + run;
    req.memory_bytes = 256ll << 20;
    Result<SpaceSummary> twin = twin_place.create(req);
    if (twin) {
      twin_id = twin->id;
      teardown.add([&twin_place, twin_id] { (void)twin_place.remove(twin_id); });
    } else {
      twin_note = "twin space: " + twin.error().message;
    }
  }
  const Names twin_names = twin_id.empty() ? Names{} : names_for(twin_id);
  if (stop_requests() > 0) return interrupted();

  // The test upstream on that bridge: an echo listener on 443 with the alias upstream.test, and
  // both gatekeepers attached (the release one resolves it through Docker's DNS, the twin through
  // the test resolver).
  if (upstream_note.empty()) {
    std::vector<std::string> u = {"run", "--detach", "--name", "gk-escape-" + run + "-upstream", "--network", upstream_net,
                                  "--network-alias", std::string(kUpstreamAlias), "--read-only", "--cap-drop", "ALL",
                                  "--security-opt", "no-new-privileges", "--user", std::string(kSpaceUser),
                                  "--pids-limit", "64", "--memory", "64m"};
    u.insert(u.end(), labels.begin(), labels.end());
    const std::vector<std::string> limits = engine_run_flags(po.engine.kind);
    u.insert(u.end(), limits.begin(), limits.end());
    // Ports 443 and 80 as the space user: Docker lets every container's users bind low ports
    // (ip_unprivileged_port_start=0 since Engine 20.10); Podman leaves the kernel's 1024.
    if (po.engine.kind == EngineKind::kPodman) {
      u.insert(u.end(), {"--sysctl", "net.ipv4.ip_unprivileged_port_start=0"});
    }
    // /tmp (exec) holds the suite binary for the window's upstream on 80, started below.
    u.insert(u.end(), {"--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=16m"});
    // -ll: keep listening; each connection echoes (a CONNECT only needs the dial to succeed).
    u.insert(u.end(), {"--", image, "nc", "-ll", "-p", "443", "-e", "cat"});
    if (Result<std::string> r2 = cli.run(u, upstream_net, kChangeTimeout); !r2) {
      upstream_note = r2.error().message;
    } else {
      upstream_note =
          start_window_upstream(cli, "gk-escape-" + run + "-upstream", *binary, key_sha);
    }
    // Podman: the gatekeepers reach the upstream across the test bridge only with the FORWARD
    // rule its inner networks also get (host_guard.h: Docker's FORWARD policy is DROP, and
    // netavark adds nothing for an internal network). The bridge exists once the upstream runs.
    if (upstream_note.empty() && po.engine.kind == EngineKind::kPodman) {
      Result<std::string> iface =
          cli.run({"network", "inspect", "--format", "{{.NetworkInterface}}", "--", upstream_net},
                  upstream_net);
      std::string name = iface ? *iface : std::string();
      while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
      teardown.add([run] { (void)guard_remove("escape-" + run); });
      if (Result<void> r = bridge_members_accept(name, "escape-" + run); !r) {
        upstream_note = r.error().message;
      }
    }
    for (const std::string* gk : {&main_names.gatekeeper, &twin_names.gatekeeper}) {
      if (!upstream_note.empty() || gk->empty()) continue;
      if (Result<std::string> r = cli.run({"network", "connect", "--", upstream_net, *gk}, *gk, kChangeTimeout); !r) {
        upstream_note = r.error().message;
        continue;
      }
      // The reviewer's gatekeeper leaves the test network again before the network goes.
      if (gk == &main_names.gatekeeper) {
        teardown.add([&cli, upstream_net, gk_name = *gk] { (void)cli.run_raw({"network", "disconnect", "--force", "--", upstream_net, gk_name}, gk_name, kChangeTimeout); });
      }
    }
  }

  // Allowlist switch and the fake grant, on both gatekeepers (secret on stdin only).
  const std::string network_body = json{{"mode", "allowlist"}, {"domains", {std::string(kUpstreamAlias)}}}.dump();
  // The twin also allows the resolution cases' names (only its test resolver answers them).
  const std::string twin_network_body =
      json{{"mode", "allowlist"}, {"domains", twin_allowlist(std::string(kUpstreamAlias))}}.dump();
  // The grant goes to the upstream's address literal over http, which only a grant the host marks
  // unsafe_private_upstream may do; no name, so the control does not hang on the corridor's checks.
  const std::string upstream_ip = upstream_note.empty() ? container_address(cli, "gk-escape-" + run + "-upstream", upstream_net) : std::string();
  if (!upstream_ip.empty() && !twin_id.empty()) {
    fill_test_resolver(resolver, std::string(kUpstreamAlias), upstream_ip,
                       container_address(cli, twin_names.gatekeeper, upstream_net), host_bridge_ip);
  }
  std::string grant_body = json{{"id", std::string(kEscapeGrant)},
                                {"upstream", upstream_ip.empty() ? "https://" + std::string(kUpstreamAlias) + "/v1" : "http://" + upstream_ip + "/v1"},
                                {"header", "x-api-key"}, {"secret", key}, {"unsafe_private_upstream", !upstream_ip.empty()}}.dump();
  std::string setup_note;
  for (const std::string* sid : {static_cast<const std::string*>(&id), static_cast<const std::string*>(&twin_id)}) {
    if (sid->empty()) continue;
    Place& p = sid == &id ? place : twin_place;
    if (Result<json> r = gatekeeper_control(p, *sid, "POST", "/network",
                                            sid == &id ? network_body : twin_network_body);
        !r) {
      setup_note += r.error().message + "; ";
    }
    if (Result<json> r = gatekeeper_control(p, *sid, "POST", "/grants", grant_body); !r) setup_note += r.error().message + "; ";
  }
  std::fill(grant_body.begin(), grant_body.end(), '\0');
  // The fake grant goes again at the end, success or not (the twin goes as a whole).
  teardown.add([&place, id] { (void)gatekeeper_control(place, id, "DELETE", "/grants/" + std::string(kEscapeGrant)); });
  if (stop_requests() > 0) return interrupted();

  // Addresses of each space for the other's lateral cases: the space and both gatekeeper legs.
  auto addresses_of = [&cli](const Names& n) {
    std::vector<std::string> out;
    if (n.space.empty()) return out;
    for (const auto& [c, net] : {std::pair{n.space, n.inner}, std::pair{n.gatekeeper, n.inner}, std::pair{n.gatekeeper, n.outer}}) {
      const std::string a = container_address(cli, c, net);
      if (!a.empty()) out.push_back(a);
    }
    return out;
  };

  SuiteControls controls;
  controls.space_id = id;
  controls.allowed_target = std::string(kUpstreamAlias) + ":443";
  controls.window_base = window_base_of(place, id);
  controls.window_grant = std::string(kEscapeGrant);
  controls.secret_sha256 = key_sha;
  controls.control_sha256 = escape::sha256_hex(bait);
  controls.probe_addresses = listeners.addresses();
  controls.other_space = addresses_of(twin_names);
  controls.only = eo.only;
  controls.pids_limit = static_cast<std::uint64_t>(inspect_number(cli, main_names.space, "{{.HostConfig.PidsLimit}}"));
  controls.memory_limit = static_cast<std::uint64_t>(inspect_number(cli, main_names.space, "{{.HostConfig.Memory}}"));
  controls.cpu_limit = static_cast<std::uint64_t>(inspect_number(cli, main_names.space, "{{.HostConfig.NanoCpus}}"));
  // Each volume's size (the filesystem behind it, loop_disk.h): what the disk-fill cases may write.
  if (Result<std::string> q =
          cli.run({"volume", "inspect", "--format",
                   "{{index .Labels \"" + std::string(kLabelDisk) + "\"}}", "--", main_names.home},
                  main_names.home)) {
    std::string_view text = *q;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    controls.home_quota = policy::parse_number<std::uint64_t>(text).value_or(0);
  }
  controls.log_flood_mib = eo.log_flood_mib;
  controls.exhaustion = eo.exhaustion;
  controls.unsafe_privileged = eo.unsafe_privileged;
  controls.gateway_unowned = gateway_unowned;
  controls.podman = po.engine.kind == EngineKind::kPodman;
  controls.progress = static_cast<bool>(eo.progress);
  const auto step = [&eo](const std::string& line) {
    if (eo.progress) eo.progress(line);
  };

  auto run_suite = [&](Place& p, const std::string& sid, const std::string& path,
                       const SuiteControls& c, const std::vector<std::string>& expected,
                       const std::string& what) -> Result<std::vector<CaseResult>> {
    if (expected.empty()) {
      return std::vector<CaseResult>{};  // the selection names no case (host list)
    }
    std::vector<std::string> argv = {path};
    const std::vector<std::string> rest = suite_argv(c);
    argv.insert(argv.end(), rest.begin(), rest.end());
    Result<ExecOutput> r = Result<ExecOutput>(fail(Code::kInternal, what + ": not run"));
    if (eo.progress) {
      // Per-case progress from the suite's stderr; the verdicts still come from its report.
      ProgressLines lines(expected);
      std::size_t done = 0;
      const std::string where = sid == id ? std::string() : " (twin)";
      r = p.privileged_exec()->exec_watched(
          sid, argv, kSuiteTimeout, kMaxSuiteReport, [&](std::string_view bytes) {
            lines.feed(bytes, [&](const std::string& case_id, const std::string& verdict) {
              ++done;
              eo.progress("case " + case_id + " " + verdict + where + " (" + std::to_string(done) +
                          " of " + std::to_string(expected.size()) + ")");
            });
          });
    } else {
      r = p.exec(sid, ExecTarget::kSpace, argv, {}, kSuiteTimeout);
    }
    if (!r) return r.error();
    Result<std::vector<CaseResult>> parsed = parse_suite_report(r->out);
    if (parsed) {
      if (Result<void> same = check_reported_ids(*parsed, expected); !same) parsed = same.error();
    }
    if (!parsed) {
      return fail(parsed.error().code, what + ": exit " + std::to_string(r->exit_code) + ": " + parsed.error().message + "; stderr: " + inside_text(r->err));
    }
    return parsed;
  };

  std::vector<CaseResult> main_results;
  {
    // Who else acts in the space while the suite runs: `docker top` from the host, sampled.
    ProcessSampler sampler(cli, main_names.space);
    step("running " + std::to_string(ids->size()) + " cases in " + id);
    Result<std::vector<CaseResult>> r = run_suite(place, id, *binary_path, controls, *ids, "escape-suite in " + id);
    sampler.stop();
    if (r) {
      main_results = std::move(*r);
      host.push_back(host_result("host.suite-report", escape::pass(std::to_string(main_results.size()) +
                                                                   " cases reported by the binary in " + id + ", exactly the ids the host listed")));
    } else {
      host.push_back(host_result("host.suite-report", escape::fail(r.error().message)));
    }
    // Podman's top shows the space's own pid namespace, where its init is pid 1.
    const long init_pid =
        po.engine.kind == EngineKind::kPodman
            ? 1L
            : static_cast<long>(inspect_number(cli, main_names.space, "{{.State.Pid}}"));
    std::string main_args;
    if (Result<std::string> a = cli.run({"container", "inspect", "--format", "{{json .Config.Cmd}}", "--", main_names.space}, main_names.space); a) {
      const json cmd = json::parse(*a, nullptr, false);
      if (cmd.is_array()) {
        for (const json& x : cmd) {
          if (x.is_string()) main_args += (main_args.empty() ? "" : " ") + x.get<std::string>();
        }
      }
    }
    host.push_back(host_result("host.space-quiet", sampler.error().empty()
                                                       ? judge_quiet(sampler.samples(), *binary_path, init_pid, main_args)
                                                       : escape::inconclusive(sampler.error())));
  }
  if (stop_requests() > 0) return interrupted();
  host.push_back(host_result("host.forged-report-refused", forged_report_refused(place, id, *binary_path, *binary, *ids)));

  std::map<std::string, CaseResult> twin_results;
  bool twin_ran = false;
  if (!twin_id.empty()) {
    SuiteControls tc = controls;
    tc.space_id = twin_id;
    tc.window_base = window_base_of(twin_place, twin_id);
    tc.other_space = addresses_of(main_names);
    tc.only = {"corridor.*", "window.*"};
    tc.exhaustion = false;
    tc.control_sha256.clear();
    Result<std::vector<std::string>> twin_ids = host_listed_ids(*binary, tc.only);
    Result<std::string> twin_path = twin_ids ? place_binary(twin_place, twin_id, run, *binary) : Result<std::string>(twin_ids.error());
    if (!twin_path) {
      twin_note += twin_path.error().message;
    } else {
      step("running " + std::to_string(twin_ids->size()) +
           " corridor and window cases in the twin " + twin_id);
      if (Result<std::vector<CaseResult>> r = run_suite(
              twin_place, twin_id, *twin_path, tc, *twin_ids, "escape-suite in twin " + twin_id);
          r) {
        twin_ran = true;
        for (CaseResult& x : *r) twin_results[x.id] = std::move(x);
      } else {
        twin_note += r.error().message;
      }
    }
  }

  // What the twin's gatekeeper decided for each name: the resolution cases' proof.
  std::map<std::string, std::vector<std::string>> twin_decisions;
  if (twin_ran) {
    if (Result<json> j = gatekeeper_control(twin_place, twin_id, "GET", "/journal"); j) {
      twin_decisions = corridor_decisions(*j);
    }
  }

  if (stop_requests() > 0) return interrupted();
  // Merge: corridor/window cases need the twin's positive control.
  std::vector<CaseResult> results;
  bool flood_delivered = false;
  const CaseResult* release_control = nullptr;
  for (const CaseResult& r : main_results) {
    if (r.id == "res.log-flood-delivered") flood_delivered = r.verdict == Verdict::kPass;
    if (r.id == "corridor.allowed-target-works") release_control = &r;
    if (!is_twin_case(r.id)) {
      results.push_back(r);
      continue;
    }
    auto it = twin_results.find(r.id);
    CaseResult m = merge_twin_result(r, twin_ran && it != twin_results.end() ? &it->second : nullptr);
    if (is_resolution_case(r.id)) {
      const std::string name = resolution_name(r.id);
      m = judge_resolution(m, twin_ran && it != twin_results.end() ? &it->second : nullptr,
                           twin_decisions[name], resolver.questions(name));
    }
    if (!twin_ran && !twin_note.empty()) m.evidence = escape::bound_evidence(m.evidence + " (" + twin_note + ")");
    results.push_back(std::move(m));
  }
  if (release_control != nullptr) {
    // The release image must refuse what the test image allows: proves the twin's only difference.
    auto it = twin_results.find("corridor.allowed-target-works");
    escape::Outcome o;
    if (release_control->evidence.find("-> 200") != std::string::npos) {
      o = escape::fail("the release gatekeeper opened a tunnel to the 198.18/15 upstream: " + release_control->evidence);
    } else if (it == twin_results.end() || it->second.verdict != Verdict::kPass) {
      o = escape::inconclusive("control: the twin's CONNECT did not answer 200; " + release_control->evidence + " " + twin_note + upstream_note + setup_note);
    } else if (release_control->evidence.find("-> 403") != std::string::npos) {
      o = escape::pass("release: " + release_control->evidence + "; test twin: " + it->second.evidence);
    } else {
      o = escape::inconclusive("release: " + release_control->evidence);
    }
    host.push_back(host_result("host.release-gatekeeper-refuses-test-range", o));
  }

  // Checks only visible from outside.
  step("host checks (inspect, logs, the gatekeeper's status, the outer network)");
  std::vector<std::string> containers = {main_names.space, main_names.gatekeeper};
  if (!twin_id.empty()) containers.insert(containers.end(), {twin_names.space, twin_names.gatekeeper});
  host.push_back(host_result("host.key-not-in-inspect", key_not_in_inspect(cli, containers, key)));
  host.push_back(host_result("host.key-not-in-logs", key_not_in_logs(cli, containers, main_names.gatekeeper, key)));
  host.push_back(host_result(
      "host.env-grants-hidden",
      env_grant_secrets_hidden(cli, containers, main_names.gatekeeper, eo.state_dir, id)));
  if (!eo.exhaustion) {
    host.push_back(host_result("host.log-capped", escape::not_applicable("not run: --no-exhaustion skipped the log flood")));
  } else {
    const LogMeasure m = measure_space_log(cli, main_names.space);
    host.push_back(host_result("host.log-capped", m.ok ? judge_log_size(m.bytes, flood_delivered, m.flood_seen) : escape::inconclusive(m.error)));
  }
  host.push_back(host_result("host.gatekeeper-hardening",
                             gatekeeper_hardening(cli, main_names.gatekeeper, labels, image)));
  host.push_back(host_result("host.control-channel-outer",
                             outer_network_refuses(cli, labels, run, image, main_names.outer,
                                                   container_address(cli, main_names.gatekeeper, main_names.outer))));
  if (!upstream_note.empty() || !setup_note.empty() || !resolver_note.empty()) {
    host.push_back(host_result(
        "host.controls-ready",
        escape::fail("controls not ready: " + upstream_note + " " + setup_note + resolver_note)));
  } else {
    host.push_back(host_result(
        "host.controls-ready",
        escape::pass("upstream " + *picked + ", test resolver " + resolver.endpoint() +
                     ", allowlist switched, fake grant held; listeners " + listener_note)));
  }

  for (CaseResult& h : host) {
    if (escape::selected(selection, h.id)) results.push_back(std::move(h));
  }

  EscapeReport report;
  const std::vector<escape::Fact> facts = collect_host_facts(cli, main_names.space, main_names.gatekeeper);
  escape::add_facts(context, facts);
  // SARIF and HTML also draw the boundary; the other formats carry the facts themselves.
  report.text = eo.format == escape::Format::kSarif || eo.format == escape::Format::kHtml
                    ? escape::format_report(eo.format, results, context)
                    : escape::format_report(eo.format, results, facts);
  report.context = std::move(context);
  report.exit_code = escape::exit_code(results);
  report.results = std::move(results);
  if (!eo.output.empty()) {
    std::ofstream out(eo.output, std::ios::trunc | std::ios::binary);
    out << report.text;
    if (!out) return fail(Code::kInvalidArgument, "escape-test: write " + eo.output + ": failed");
  }
  return report;
}

}  // namespace controller
