#include "controller/escape_facts.h"

#include "controller/docker_place.h"

namespace controller {

std::vector<std::string> split_fields(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (out.size() < n) {
    const std::size_t bar = text.find('|', start);
    std::string field = text.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    while (!field.empty() && (field.back() == '\n' || field.back() == ' ')) field.pop_back();
    out.push_back(field.substr(0, 200));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  out.resize(n);
  return out;
}

namespace {

std::string host_file(const char* path, const char* absent) {
  Result<std::string> text = read_small_file(path, 256);
  if (!text) return absent;
  std::string v = *text;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

// Podman names rlimits as the kernel does ("RLIMIT_CORE"); the facts use Docker's names ("core")
// so a report reads the same on every place.
std::string docker_ulimit_names(std::string text) {
  for (std::size_t at = text.find("\"RLIMIT_"); at != std::string::npos;
       at = text.find("\"RLIMIT_", at + 1)) {
    text.erase(at + 1, 7);
    for (std::size_t i = at + 1; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] >= 'A' && text[i] <= 'Z') text[i] = static_cast<char>(text[i] - 'A' + 'a');
    }
  }
  return text;
}

}  // namespace

std::vector<escape::Fact> collect_host_facts(const DockerCli& cli, const std::string& space,
                                             const std::string& gatekeeper) {
  std::vector<escape::Fact> facts;
  const bool podman = cli.engine().kind == EngineKind::kPodman;
  const char* kInfo = podman ? "{{.Version.Version}}|{{.Host.OCIRuntime.Name}} "
                               "({{.Host.OCIRuntime.Package}})|{{.Host.Kernel}}|{{.Host."
                               "CgroupsVersion}}|{{.Host.CgroupManager}}|"
                               "{{json "
                               ".Host.Security}}|{{.Host.CPUs}}|{{.Host.Distribution.Distribution}}"
                               "|{{.Host.Security.Rootless}}"
                             : "{{.ServerVersion}}|{{.RuncCommit.ID}}|{{.KernelVersion}}|{{."
                               "CgroupVersion}}|{{.CgroupDriver}}|"
                               "{{json .SecurityOptions}}|{{.NCPU}}|{{.OperatingSystem}}|false";
  Result<std::string> info = cli.run({"info", "--format", kInfo}, "(host facts)");
  const std::vector<std::string> i = split_fields(info ? *info : std::string(), 9);
  const std::string unknown = info ? "unknown" : "unreadable: " + info.error().message.substr(0, 120);
  auto or_unknown = [&](const std::string& v) { return v.empty() ? unknown : v; };
  facts.push_back({"engine", or_unknown(i[0])});
  facts.push_back({"runc", or_unknown(i[1])});
  facts.push_back({"kernel", or_unknown(i[2])});
  // Docker says "1", Podman "v1".
  const std::string cgroup_version = i[3].rfind('v', 0) == 0 ? i[3] : "v" + i[3];
  facts.push_back({"cgroup", i[3].empty() ? unknown : cgroup_version + " (" + i[4] + " driver)"});
  facts.push_back({"engine_security_options", or_unknown(i[5])});
  facts.push_back({"cpus", or_unknown(i[6])});
  facts.push_back({"os", or_unknown(i[7])});
  facts.push_back(
      {"place", std::string(engine_word(cli.engine().kind)) +
                    (cli.engine().kind == EngineKind::kDockerSsh ? " (" + cli.engine().host + ")"
                                                                 : std::string())});
  if (podman && i[8] == "true") {
    facts.push_back(
        {"rootless",
         "yes: uid 0 and the space's uid exist only in a user namespace of the user running Podman "
         "(its "
         "subordinate ids); a container breakout lands as that user, not as root; networks are "
         "netavark in that user's network namespace; limits need cgroup v2 delegation "
         "(controller/README.md)"});
  } else if (podman) {
    facts.push_back({"rootless",
                     "no: rootful Podman; the host guard drops what arrives on the inner bridge "
                     "(host_guard.h)"});
  }
  if (podman) {
    // What Podman adds to a space that Docker does not, and why the suite accepts it (it is told
    // --engine podman --resolver none; spec.h).
    facts.push_back(
        {"podman.names",
         "no DNS server for the space (inner network --disable-dns, no resolv.conf): /etc/hosts "
         "names the gatekeeper; Podman also writes the host's own /etc/hosts lines and "
         "host.containers.internal (the host's address, which the host guard drops) into it"});
    facts.push_back({"podman.mounts",
                     "/run/podman-init (catatonit, the --init process, read-only) and "
                     "/run/.containerenv (read-only, empty for a rootful unprivileged container)"});
  }
  if (engine_is_local(cli.engine())) {
    // The host's own view: the engine's host is this machine.
    facts.push_back(
        {"ptrace_scope",
         host_file("/proc/sys/kernel/yama/ptrace_scope",
                   "no Yama (ptrace limited by the seccomp profile and missing CAP_SYS_PTRACE)")});
    facts.push_back({"apparmor", host_file("/sys/module/apparmor/parameters/enabled",
                                           "not enabled on this kernel")});
    facts.push_back({"core_pattern", host_file("/proc/sys/kernel/core_pattern", "unreadable")});
  } else {
    for (const char* key : {"ptrace_scope", "apparmor", "core_pattern"}) {
      facts.push_back({key, "not read: the engine's host is not this machine"});
    }
  }
  const char* kLimits =
      "{{.Config.User}}|{{.HostConfig.NanoCpus}}|{{.HostConfig.CpuShares}}|{{.HostConfig.Memory}}|"
      "{{.HostConfig.MemorySwap}}|{{.HostConfig.PidsLimit}}|{{json .HostConfig.Ulimits}}|{{json .HostConfig.SecurityOpt}}|"
      "{{.HostConfig.BlkioWeight}}";
  Result<std::string> s = cli.run({"container", "inspect", "--format", kLimits, space}, space);
  const std::vector<std::string> l = split_fields(s ? *s : std::string(), 9);
  if (s) {
    facts.push_back({"space.uid", l[0]});
    facts.push_back({"space.cpus", l[1] + " nano CPUs, weight " + l[2]});
    facts.push_back({"space.memory", l[3] + " bytes, memory+swap " + l[4]});
    facts.push_back({"space.pids", l[5]});
    facts.push_back({"space.ulimits", podman ? docker_ulimit_names(l[6]) : l[6]});
    // The profile JSON itself is long; whether it is ours is host.verify's job.
    // A remote engine's host: verify read it there; this machine's controller says nothing of it.
    const std::optional<bool> weighted =
        engine_is_local(cli.engine()) ? host_io_weight_supported() : std::nullopt;
    facts.push_back({"space.io-weight", l[8] + (l[8] == "0" || l[8].empty() ? " (discarded by the engine: " : " (") +
                                            (weighted ? (*weighted ? "the host weights block IO" : "this kernel has no weighting IO scheduler")
                                                      : "the host's IO controller is not visible here") + ")"});
    facts.push_back({"space.seccomp", l[7].find("seccomp=") != std::string::npos ? "a custom profile (seccomp-profiles/space.json, checked by verify)" : "engine default or none"});
  } else {
    facts.push_back({"space.limits", "unreadable: " + s.error().message.substr(0, 120)});
  }
  Result<std::string> g = cli.run({"container", "inspect", "--format", "{{.Config.User}}|{{.HostConfig.CpuShares}}|{{json .HostConfig.Ulimits}}", gatekeeper}, gatekeeper);
  const std::vector<std::string> k = split_fields(g ? *g : std::string(), 3);
  facts.push_back({"gatekeeper.limits", g ? "uid " + k[0] + ", CPU weight " + k[1] + ", ulimits " + k[2] : "unreadable"});
  // Each volume: its size label and the filesystem the engine mounts (loop_disk.h).
  const std::string base = space.size() > 6 && space.ends_with("-space") ? space.substr(0, space.size() - 6) : space;
  for (const char* which : {"home", "work"}) {
    const std::string volume = base + "-volume-" + which;
    Result<std::string> v = cli.run({"volume", "inspect", "--format",
                                     "{{index .Labels \"" + std::string(kLabelDisk) + "\"}} bytes, {{json .Options}}", "--", volume}, volume);
    facts.push_back({std::string("space.disk-") + which, v ? v->substr(0, v->find('\n')) : "unreadable: " + v.error().message.substr(0, 120)});
  }
  for (escape::Fact& f : residual_facts()) facts.push_back(std::move(f));
  return facts;
}

std::vector<escape::Fact> residual_facts() {
  return {
      {"residual.allowed-names", "each allowlisted name reaches whatever answers on its address at 443: anything else on its CDN or host, and any relay the agent finds there"},
      {"residual.tmp-exec", "/tmp is mounted exec (agents run the tools they build); memfd_create and execveat stay allowed for JITs"},
      {"residual.disk", "the $HOME and /spaces/<id> volumes are each a fixed-size ext4 image (space create --disk, default 10 GiB); the images are sparse, so the host disk must have room for what a space fills; /tmp (256 MiB) and the log (10 MiB) are bounded too"},
      {"residual.io", "the space's IO weight is 10 (the minimum); a kernel without a weighting IO scheduler makes the engine discard it (space.io-weight says which), and then a space's IO competes with the host's at equal weight"},
      {"residual.shared-uid", "every space runs as uid 70000: per-uid kernel accounting is shared between spaces, not with host accounts"},
      {"residual.core-pipe", "a core_pattern starting with | runs its helper even at RLIMIT_CORE 0 (the limit is passed as %c)"},
  };
}

}  // namespace controller
