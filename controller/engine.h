// The engine behind a CLI-driven place: which docker-compatible CLI runs, what it is told before
// every subcommand (`-H ssh://…` for a remote Docker engine, `--runtime runc` for Podman), and what
// the controller can see of the engine's host. One place implementation (docker_place.h) drives
// all of them; the differences that matter for hardening are named here, once.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller {

enum class EngineKind : std::uint8_t {
  kDocker,     // the local Docker engine (the docker CLI's own DOCKER_HOST/DOCKER_CONTEXT aside)
  kDockerSsh,  // a Docker engine on another machine, every call `docker -H ssh://user@host[:port]`
  kPodman,     // Podman on this machine: rootful when spacectl runs as root, rootless otherwise
};

struct Engine {
  EngineKind kind = EngineKind::kDocker;
  std::string host;  // kDockerSsh: ssh://user@host[:port]
  // Measured round trip of one CLI call (`version`), 0 until measured; deadlines grow with it.
  std::chrono::milliseconds round_trip{0};
};

// "docker", "docker-ssh", "podman": the place names of the registry.
std::string_view engine_word(EngineKind kind);
std::string engine_program(const Engine& engine);                   // docker or podman
std::vector<std::string> engine_global_args(const Engine& engine);  // before every subcommand
// The engine's host is this machine: its bridges, /proc and listeners are ours to read and open.
bool engine_is_local(const Engine& engine);

// ssh://user@host[:port], nothing else: no options, no path, no shell words. The docker CLI passes
// user and host to `ssh -l USER -p PORT -- HOST`; a value starting with '-' would be an option.
bool is_ssh_host(std::string_view text);

// The place --place names, with --host (or DOCKER_HOST for docker-ssh when --host is empty).
Result<Engine> engine_for_place(std::string_view place, const std::string& host_flag,
                                const char* docker_host_env);

// A deadline for one call on this engine: the base, plus three round trips and three seconds once
// a round trip was measured over 100 ms (each docker call over SSH opens its own connection, 1-2
// s).
std::chrono::milliseconds scaled_timeout(std::chrono::milliseconds base,
                                         std::chrono::milliseconds round_trip);

}  // namespace controller
