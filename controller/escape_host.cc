#include "controller/escape_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "controller/escape_runner.h"
#include "controller/records.h"
#include "controller/spec.h"
#include "escape-suite/proc_net.h"

namespace controller {

using escape::Outcome;
using nlohmann::json;

HostListeners::~HostListeners() {
  for (const int fd : fds_) ::close(fd);
}

void HostListeners::open_all(std::string& evidence) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    evidence = "getifaddrs failed";
    return;
  }
  for (ifaddrs* a = list; a != nullptr && fds_.size() < kMaxProbeListeners; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    sockaddr_in sin = *reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text);
    // Loopback: the space's 127.0.0.1 is its own namespace's; a listener there proves nothing.
    if ((ntohl(sin.sin_addr.s_addr) >> 24) == 127) continue;
    sin.sin_port = 0;
    // CLOEXEC: the docker children we spawn must not inherit a host listener.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    socklen_t len = sizeof sin;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0 || ::listen(fd, 64) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) {
      evidence += std::string("skipped ") + text + "; ";
      ::close(fd);
      continue;
    }
    fds_.push_back(fd);
    bound_.push_back(sin);
    addresses_.push_back(std::string(text) + ":" + std::to_string(ntohs(sin.sin_port)));
  }
  ::freeifaddrs(list);
  for (const std::string& a : addresses_) evidence += a + " ";
}

Outcome HostListeners::answer_locally() const {
  if (addresses_.empty()) return escape::fail("no host listener could be opened (no non-loopback IPv4 address?)");
  std::string ev;
  for (std::size_t i = 0; i < bound_.size(); ++i) {
    const std::string& a = addresses_[i];
    const sockaddr_in sin = bound_[i];
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) return escape::fail("host listener " + a + " does not answer the host itself: the lateral cases would be blind");
    ev += a + " ";
  }
  return escape::pass("every host listener answers from the host: " + ev);
}

Result<std::string> free_test_subnet(std::string_view route_table) {
  // /proc/net/route: destination and mask in host-order hex of the network-order value.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> routes;
  bool header = true;
  for (std::string_view rest = route_table; !rest.empty();) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (header || line.find_first_not_of(" \t") == std::string_view::npos) {
      header = false;
      continue;
    }
    const policy::Result<escape::RouteRow> row = escape::parse_route_line(line);
    if (!row) return fail(Code::kPlaceUnusable, "pick a test subnet: " + row.error().message);
    routes.emplace_back(ntohl(row->destination), ntohl(row->mask));
  }
  // 198.18.0.0/15 (RFC 2544, benchmarking): never a real destination, and the test gatekeeper
  // counts it as public. The third octets below are far from the ones other tests here use.
  for (unsigned third = 231; third < 255; ++third) {
    const std::uint32_t net = (198u << 24) | (18u << 16) | (third << 8);
    bool taken = false;
    for (const auto& [dest, mask] : routes) {
      if (mask == 0) continue;  // the default route overlaps everything and owns nothing
      const std::uint32_t common = mask & 0xffffff00u;
      if ((dest & common) == (net & common)) taken = true;
    }
    if (!taken) return "198.18." + std::to_string(third) + ".0/24";
  }
  return fail(Code::kPlaceUnusable,
              "pick a test subnet: no free /24 in 198.18.231.0-198.18.254.255");
}

Result<std::string> pick_test_subnet() {
  constexpr std::size_t kMaxRouteTableBytes = 1u << 20;
  std::ifstream in("/proc/net/route", std::ios::binary);
  if (!in) {
    return fail(Code::kPlaceUnusable, "pick a test subnet: read /proc/net/route: cannot open");
  }
  std::string table(kMaxRouteTableBytes + 1, '\0');
  in.read(table.data(), static_cast<std::streamsize>(table.size()));
  table.resize(static_cast<std::size_t>(in.gcount()));
  if (table.size() > kMaxRouteTableBytes) {
    return fail(Code::kPlaceUnusable, "pick a test subnet: read /proc/net/route: larger than " +
                                          std::to_string(kMaxRouteTableBytes) + " bytes");
  }
  return free_test_subnet(table);
}

std::vector<std::string> escape_labels(const std::string& run, const std::string& owner) {
  return {"--label", std::string(kLabelEscapeRun) + "=" + run, "--label", std::string(kLabelOwner) + "=" + owner};
}

std::string container_address(const DockerCli& cli, const std::string& container, const std::string& network) {
  Result<std::string> out = cli.run({"container", "inspect", "--", container}, container);
  if (!out) return {};
  const json doc = json::parse(*out, nullptr, false);
  if (!doc.is_array() || doc.empty() || !doc[0].is_object()) return {};
  const json& nets = doc[0]["NetworkSettings"]["Networks"];
  if (!nets.is_object() || !nets.contains(network) || !nets[network].is_object()) return {};
  const json& ip = nets[network]["IPAddress"];
  return ip.is_string() ? ip.get<std::string>() : std::string();
}

Outcome gatekeeper_hardening(const DockerCli& cli, const std::string& container,
                             const std::vector<std::string>& labels, const std::string& image) {
  Result<std::string> pid = cli.run({"container", "inspect", "--format", "{{.State.Pid}}", "--", container}, container);
  if (!pid) return escape::inconclusive(pid.error().message);
  std::string p = *pid;
  while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
  if (p.empty() || p == "0" || p.find_first_not_of("0123456789") != std::string::npos) {
    return escape::inconclusive(container + " has no running pid (" + p + ")");
  }
  // The gatekeeper image has no shell or cat, so "from inside it" is its pid 1 read from the host:
  // the same kernel view (/proc/<pid>/status) a process inside would read as /proc/1/status.
  if (!engine_is_local(cli.engine())) {
    if (image.empty()) {
      return escape::inconclusive(
          "the engine's host is not this machine and no probe image was given");
    }
    std::vector<std::string> args = {"run",
                                     "--rm",
                                     "--pid",
                                     "host",
                                     "--network",
                                     "none",
                                     "--read-only",
                                     "--cap-drop",
                                     "ALL",
                                     "--security-opt",
                                     "no-new-privileges",
                                     "--user",
                                     std::string(kSpaceUser),
                                     "--pids-limit",
                                     "16",
                                     "--memory",
                                     "32m"};
    args.insert(args.end(), labels.begin(), labels.end());
    args.insert(args.end(), {"--", image, "cat", "/proc/" + p + "/comm", "/proc/" + p + "/status"});
    Result<std::string> text = cli.run(args, "status of " + container, kChangeTimeout);
    if (!text) return escape::inconclusive(text.error().message);
    const std::string name = text->substr(0, text->find('\n'));
    if (name.rfind("gatekeeper", 0) != 0) {
      return escape::inconclusive("pid " + p + " on the engine's host is '" + name +
                                  "', not the gatekeeper");
    }
    Outcome o = judge_gatekeeper_status(text->substr(std::min(text->size(), name.size() + 1)));
    o.evidence = container + " pid " + p +
                 " (read on the engine's host by a probe in its pid namespace): " + o.evidence;
    return o;
  }
  std::ifstream comm("/proc/" + p + "/comm");
  std::string name;
  std::getline(comm, name);
  if (name.empty()) {
    return escape::inconclusive("/proc/" + p + " is not visible here (a remote daemon or another pid namespace)");
  }
  if (name.rfind("gatekeeper", 0) != 0) return escape::inconclusive("pid " + p + " is '" + name + "', not the gatekeeper");
  std::ifstream in("/proc/" + p + "/status");
  std::stringstream text;
  text << in.rdbuf();
  Outcome o = judge_gatekeeper_status(text.str());
  o.evidence = container + " pid " + p + ": " + o.evidence;
  return o;
}

Outcome key_not_in_inspect(const DockerCli& cli, const std::vector<std::string>& containers, const std::string& key) {
  std::size_t bytes = 0;
  for (const std::string& c : containers) {
    Result<std::string> out = cli.run({"container", "inspect", "--", c}, c);
    if (!out) return escape::inconclusive(out.error().message);
    const json doc = json::parse(*out, nullptr, false);
    // Control: the document is the container's, so an absent key is not an empty search.
    if (!doc.is_array() || doc.size() != 1 || !doc[0].is_object() || !doc[0].contains("Config")) {
      return escape::inconclusive("docker inspect " + c + ": not one container document");
    }
    if (out->find(key) != std::string::npos) return escape::fail("the fake key is in `docker inspect " + c + "`");
    bytes += out->size();
  }
  return escape::pass("key absent from " + std::to_string(containers.size()) + " inspect documents (" +
                      std::to_string(bytes) + " bytes)");
}

Outcome key_not_in_logs(const DockerCli& cli, const std::vector<std::string>& containers,
                        const std::string& gatekeeper, const std::string& key) {
  bool control = false;
  std::uint64_t bytes = 0;
  for (const std::string& c : containers) {
    // Read as a stream to its end, both of its streams: nothing is cut off before the search.
    StreamFinder out_key(key), err_key(key), out_ready("ready"), err_ready("ready");
    std::uint64_t seen = 0;
    Result<ProcessOutcome> o = cli.run_stream({"logs", "--", c}, c, kQueryTimeout, [&](bool is_stderr, std::string_view chunk) {
      seen += chunk.size();
      (is_stderr ? err_key : out_key).feed(chunk);
      (is_stderr ? err_ready : out_ready).feed(chunk);
    });
    if (!o) return escape::inconclusive(o.error().message);
    if (!o->succeeded()) return escape::inconclusive("docker logs " + c + ": " + o->describe());
    if (out_key.found() || err_key.found()) return escape::fail("the fake key is in `docker logs " + c + "`");
    if (c == gatekeeper && (out_ready.found() || err_ready.found())) control = true;
    bytes += seen;
  }
  if (!control) return escape::inconclusive("control: the gatekeeper's 'ready' line is not in its log; the logs may be unreadable");
  return escape::pass("key absent from the logs of " + std::to_string(containers.size()) + " containers (" +
                      std::to_string(bytes) + " bytes, read to their end); the gatekeeper's ready line is there");
}

Outcome env_grant_secrets_hidden(const DockerCli& cli, const std::vector<std::string>& containers,
                                 const std::string& gatekeeper, const std::string& state_dir,
                                 const std::string& id) {
  if (state_dir.empty()) {
    return escape::not_applicable("no state directory: the space's grants are unknown here");
  }
  Result<SpaceRecord> record = read_record(state_dir, id);
  if (!record) return escape::inconclusive(record.error().message);
  const std::string record_path = state_dir + "/spaces/" + id + ".json";
  std::vector<std::pair<std::string, std::string>> values;  // variable, value
  for (const GrantRecord& g : record->grants) {
    if (g.source.kind != grants::SourceKind::kEnv) continue;
    const char* v = std::getenv(g.source.env.c_str());
    if (v != nullptr && v[0] != '\0') values.emplace_back(g.source.env, v);
  }
  if (values.empty()) {
    return escape::not_applicable(
        "no grant of this space takes its secret from a variable set in this environment");
  }
  std::ifstream in(record_path, std::ios::binary);
  const std::string record_text((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  if (record_text.find("\"" + values[0].first + "\"") == std::string::npos) {
    return escape::inconclusive("control: the record " + record_path + " does not name $" +
                                values[0].first);
  }
  std::size_t files = 0;
  for (const auto& [name, value] : values) {
    for (const Outcome& o : {key_not_in_inspect(cli, containers, value),
                             key_not_in_logs(cli, containers, gatekeeper, value)}) {
      if (o.verdict == escape::Verdict::kFail) {
        return escape::fail("the value of $" + name + ": " + o.evidence);
      }
      if (o.verdict != escape::Verdict::kPass) return o;
    }
    std::error_code ec;
    files = 0;
    for (auto it = std::filesystem::recursive_directory_iterator(state_dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::ifstream f(it->path(), std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (text.find(value) != std::string::npos) {
        return escape::fail("the value of $" + name + " is in " + it->path().string());
      }
      ++files;
    }
    if (ec) return escape::inconclusive("read " + state_dir + ": " + ec.message());
  }
  return escape::pass(
      std::to_string(values.size()) + " env-sourced grant value(s) absent from inspect, logs and " +
      std::to_string(files) + " state files; the record names the variable, never its value");
}

LogMeasure measure_space_log(const DockerCli& cli, const std::string& container) {
  LogMeasure m;
  // 4× the cap: a log that is not capped still ends the read instead of filling our memory.
  Result<ProcessOutcome> o = cli.run_raw({"logs", "--", container}, container, kQueryTimeout, {}, 4 * kLogCapBytes);
  if (!o) {
    m.error = o.error().message;
    return m;
  }
  if (o->output_too_large) {
    m.ok = true;
    m.bytes = o->out.size();
    m.flood_seen = true;
    return m;
  }
  if (!o->succeeded()) {
    m.error = "docker logs " + container + ": " + o->describe();
    return m;
  }
  m.ok = true;
  m.bytes = o->out.size() + o->err.size();
  m.flood_seen = o->out.find(std::string(64, 'L')) != std::string::npos;
  return m;
}

ProcessSampler::ProcessSampler(const DockerCli& cli, std::string container)
    : cli_(cli), container_(std::move(container)), thread_([this] { loop(); }) {}

void ProcessSampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    // `--` ends docker's flags; what follows the container name is handed to ps on the host.
    // Podman's top takes its own descriptors, in the container's pid namespace (init is pid 1).
    Result<std::string> out =
        cli_.engine().kind == EngineKind::kPodman
            ? cli_.run({"top", "--", container_, "pid", "ppid", "args"}, container_)
            : cli_.run({"top", "--", container_, "-eo", "pid,ppid,args"}, container_);
    Result<std::vector<SpaceProcess>> parsed = out ? parse_top(*out) : Result<std::vector<SpaceProcess>>(out.error());
    lock.lock();
    if (parsed) {
      samples_.push_back(std::move(*parsed));
    } else if (error_.empty()) {
      error_ = parsed.error().message;
    }
    wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_; });
  }
}

void ProcessSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// One hardened, labelled probe that tries a TCP connect and prints nothing of its own.
Result<ProcessOutcome> probe_connect(const DockerCli& cli, const std::vector<std::string>& labels,
                                     const std::string& image, const std::string& network,
                                     const std::string& address, int port) {
  std::vector<std::string> args = {"run", "--rm", "--network", network, "--read-only", "--cap-drop", "ALL",
                                   "--security-opt", "no-new-privileges", "--user", std::string(kSpaceUser),
                                   "--pids-limit", "16", "--memory", "32m"};
  args.insert(args.end(), labels.begin(), labels.end());
  const std::vector<std::string> limits = engine_run_flags(cli.engine().kind);
  args.insert(args.end(), limits.begin(), limits.end());
  // busybox nc: exit 1 with "Connection refused" when refused; connected, it ends on stdin EOF.
  args.insert(args.end(), {"--", image, "busybox", "timeout", "8", "nc", "-w", "3", address, std::to_string(port)});
  return cli.run_raw(args, "probe on " + network, kChangeTimeout);
}

bool refused(const ProcessOutcome& o) {
  return o.exited && o.exit_code != 0 && o.err.find("refused") != std::string::npos;
}

bool connected(const ProcessOutcome& o) { return o.exited && o.exit_code == 0; }

}  // namespace

Outcome outer_network_refuses(const DockerCli& cli, const std::vector<std::string>& labels, const std::string& run,
                              const std::string& image, const std::string& outer_network,
                              const std::string& gatekeeper_address) {
  if (gatekeeper_address.empty()) return escape::inconclusive("the gatekeeper has no address on " + outer_network);
  const std::string listener = "gk-escape-" + run + "-outer-listener";
  std::vector<std::string> args = {"run", "--detach", "--name", listener, "--network", outer_network, "--read-only",
                                   "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user",
                                   std::string(kSpaceUser), "--pids-limit", "16", "--memory", "32m"};
  args.insert(args.end(), labels.begin(), labels.end());
  const std::vector<std::string> limits = engine_run_flags(cli.engine().kind);
  args.insert(args.end(), limits.begin(), limits.end());
  args.insert(args.end(), {"--", image, "busybox", "httpd", "-f", "-p", "8080", "-h", "/etc"});
  if (Result<std::string> r = cli.run(args, listener, kChangeTimeout); !r) return escape::inconclusive(r.error().message);
  const std::string listener_address = container_address(cli, listener, outer_network);
  if (listener_address.empty()) return escape::inconclusive("listener " + listener + " has no address");
  Result<ProcessOutcome> control = probe_connect(cli, labels, image, outer_network, listener_address, 8080);
  if (!control) return escape::inconclusive(control.error().message);
  const std::string control_ev = "control: " + listener_address + ":8080 " +
                                 (connected(*control) ? "connected" : "did not connect (" + control->describe() + ")");
  std::string ev;
  for (const int port : {3128, 8080, 9099}) {
    Result<ProcessOutcome> o = probe_connect(cli, labels, image, outer_network, gatekeeper_address, port);
    if (!o) return escape::inconclusive(o.error().message);
    const std::string target = gatekeeper_address + ":" + std::to_string(port);
    if (connected(*o)) return escape::fail(target + " accepted a connection from the outer network");
    if (!refused(*o)) return escape::inconclusive(target + ": " + o->describe() + "; " + control_ev);
    ev += target + " refused; ";
  }
  if (!connected(*control)) return escape::inconclusive(ev + control_ev);
  return escape::pass(ev + control_ev);
}

}  // namespace controller
