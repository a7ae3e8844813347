// Podman's inspect documents in the shape verify reads (Docker's): pure, so unit tests feed
// documents recorded from Podman 4.3 (testdata/podman-*.json). Each mapping says what Podman
// reports instead and what it proves; where Podman reports less than Docker, the mapping is
// conservative (nothing becomes "hardened" without Podman saying so) and controller/README.md
// lists what verify cannot see on Podman.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace controller {

struct PodmanInspectContext {
  std::string primary_network;  // Podman says NetworkMode "bridge"; Docker names the first network
  // Podman records the seccomp profile by the path it was given, not by content: the profile
  // files the place passed, path -> text (a path not listed stays a path and fails verify).
  std::map<std::string, std::string> seccomp_profiles;
};

nlohmann::json podman_container_as_docker(const nlohmann::json& podman,
                                          const PodmanInspectContext& context);

// `podman network inspect` (lowercase members) as `docker network inspect`; the bridge's
// interface name becomes com.docker.network.bridge.name, dns_enabled becomes podman.dns_enabled.
nlohmann::json podman_network_as_docker(const nlohmann::json& podman);

}  // namespace controller
