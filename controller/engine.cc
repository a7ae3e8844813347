#include "controller/engine.h"

namespace controller {

std::string_view engine_word(EngineKind kind) {
  switch (kind) {
    case EngineKind::kDocker:
      return "docker";
    case EngineKind::kDockerSsh:
      return "docker-ssh";
    case EngineKind::kPodman:
      return "podman";
  }
  return "docker";
}

std::string engine_program(const Engine& engine) {
  switch (engine.kind) {
    case EngineKind::kDocker:
    case EngineKind::kDockerSsh:
      return "docker";
    case EngineKind::kPodman:
      return "podman";
  }
  return "docker";
}

std::vector<std::string> engine_global_args(const Engine& engine) {
  switch (engine.kind) {
    case EngineKind::kDocker:
      return {};
    case EngineKind::kDockerSsh:
      return {"--host", engine.host};
    // runc, which verify requires of every container; Podman's default crun cannot run on hosts
    // with a hybrid cgroup layout ("cgroups in hybrid mode not supported").
    case EngineKind::kPodman:
      return {"--runtime", "runc"};
  }
  return {};
}

bool engine_is_local(const Engine& engine) {
  switch (engine.kind) {
    case EngineKind::kDocker:
    case EngineKind::kPodman:
      return true;
    case EngineKind::kDockerSsh:
      return false;
  }
  return false;
}

bool is_ssh_host(std::string_view text) {
  constexpr std::string_view kScheme = "ssh://";
  if (text.size() > 255 || text.substr(0, kScheme.size()) != kScheme) return false;
  std::string_view rest = text.substr(kScheme.size());
  const std::size_t at = rest.find('@');
  std::string_view user = at == std::string_view::npos ? std::string_view() : rest.substr(0, at);
  std::string_view hostport = at == std::string_view::npos ? rest : rest.substr(at + 1);
  auto word = [](std::string_view w, bool allow_dot) {
    if (w.empty() || w.size() > 64 || w.front() == '-' || w.front() == '.') return false;
    for (const char c : w) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || (allow_dot && c == '.');
      if (!ok) return false;
    }
    return true;
  };
  if (at != std::string_view::npos && !word(user, true)) return false;
  std::string_view host = hostport, port;
  if (const std::size_t colon = hostport.rfind(':'); colon != std::string_view::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    unsigned value = 0;
    for (const char c : port) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value == 0 || value > 65535) return false;
  }
  return word(host, true);
}

Result<Engine> engine_for_place(std::string_view place, const std::string& host_flag,
                                const char* docker_host_env) {
  Engine e;
  if (place == "docker" || place == "podman") {
    if (!host_flag.empty())
      return fail(Code::kUsage, "--host " + host_flag + ": only --place docker-ssh takes a host");
    e.kind = place == "docker" ? EngineKind::kDocker : EngineKind::kPodman;
    return e;
  }
  if (place != "docker-ssh")
    return fail(Code::kPlaceNotFound, "place " + std::string(place) + ": no such place");
  e.kind = EngineKind::kDockerSsh;
  e.host = !host_flag.empty()           ? host_flag
           : docker_host_env != nullptr ? std::string(docker_host_env)
                                        : std::string();
  if (e.host.empty())
    return fail(Code::kUsage,
                "place docker-ssh: needs --host ssh://user@host[:port] (or DOCKER_HOST=ssh://…)");
  if (!is_ssh_host(e.host))
    return fail(Code::kUsage, "place docker-ssh: host '" + e.host.substr(0, 80) +
                                  "' is not ssh://user@host[:port]");
  return e;
}

std::chrono::milliseconds scaled_timeout(std::chrono::milliseconds base,
                                         std::chrono::milliseconds round_trip) {
  if (round_trip <= std::chrono::milliseconds(100)) return base;
  return base + 3 * round_trip + std::chrono::milliseconds(3000);
}

}  // namespace controller
