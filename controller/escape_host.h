// Host-side pieces of `spacectl escape-test` (escape_runner.h): the controls made outside the space
// and the checks only visible from outside. Docker-specific: each is a `docker` argv through
// DockerCli, never a shell.
#pragma once

#include <netinet/in.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "controller/docker_cli.h"
#include "controller/escape_runner.h"
#include "escape-suite/case.h"

namespace controller {

// TCP listeners on every non-loopback IPv4 address of the host, on an ephemeral port each. They
// never accept: the kernel completes a handshake into the backlog, so a space that reaches one
// sees a connect succeed (a FAIL), and nothing it sends is ever read.
class HostListeners {
 public:
  HostListeners() = default;
  HostListeners(const HostListeners&) = delete;
  HostListeners& operator=(const HostListeners&) = delete;
  ~HostListeners();
  // Opens them; `evidence` says what was found and skipped.
  void open_all(std::string& evidence);
  [[nodiscard]] const std::vector<std::string>& addresses() const { return addresses_; }  // "a.b.c.d:port"
  // Positive control: each listener accepts a connection from the host itself.
  [[nodiscard]] escape::Outcome answer_locally() const;

 private:
  std::vector<int> fds_;
  std::vector<std::string> addresses_;  // "a.b.c.d:port", the text of bound_[i]
  std::vector<sockaddr_in> bound_;
};

// A /24 inside 198.18.0.0/15 (RFC 2544) that no route of `route_table` (the text of
// /proc/net/route) overlaps. An error when the table holds a line the kernel would not print (a
// misread route could overlap the pick) or when no /24 is free.
Result<std::string> free_test_subnet(std::string_view route_table);
// free_test_subnet of this host's /proc/net/route.
Result<std::string> pick_test_subnet();

// Labels of everything a run creates (removed by label at the end).
std::vector<std::string> escape_labels(const std::string& run, const std::string& owner);

// The container's first IPv4 address on `network` ("" when not attached).
std::string container_address(const DockerCli& cli, const std::string& container, const std::string& network);

// /proc/<pid>/status of the container's pid 1, read on the engine's host: here for a local engine;
// for a remote one by a probe container in the host's pid namespace (as unprivileged as a space,
// no network, `cat` of two world-readable files), labelled with `labels`.
escape::Outcome gatekeeper_hardening(const DockerCli& cli, const std::string& container,
                                     const std::vector<std::string>& labels = {},
                                     const std::string& image = {});

// The key appears in no `docker inspect` document of `containers`.
escape::Outcome key_not_in_inspect(const DockerCli& cli, const std::vector<std::string>& containers,
                                   const std::string& key);

// The key appears in no `docker logs` of `containers`; the gatekeeper's "ready" line is the
// control that the logs were read at all.
escape::Outcome key_not_in_logs(const DockerCli& cli, const std::vector<std::string>& containers,
                                const std::string& gatekeeper, const std::string& key);

// The values of the space's grants whose secret comes from the host's environment (the record
// names each variable; the value is read from this process's environment) appear in no `docker
// inspect` or `docker logs` of `containers` and in no file of the state directory. N/A when the
// space has no such grant set here; the control is that the space's record names the variable.
escape::Outcome env_grant_secrets_hidden(const DockerCli& cli,
                                         const std::vector<std::string>& containers,
                                         const std::string& gatekeeper,
                                         const std::string& state_dir, const std::string& id);

// Bytes of `docker logs --stdout` of the space, and whether the flood's lines are in it.
struct LogMeasure {
  bool ok = false;
  std::uint64_t bytes = 0;
  bool flood_seen = false;
  std::string error;
};
LogMeasure measure_space_log(const DockerCli& cli, const std::string& container);

// `docker top` of a container every half second on its own thread, from construction to stop():
// the host's view of every process in the space (the space cannot hide one from it).
class ProcessSampler {
 public:
  ProcessSampler(const DockerCli& cli, std::string container);
  ProcessSampler(const ProcessSampler&) = delete;
  ProcessSampler& operator=(const ProcessSampler&) = delete;
  ~ProcessSampler() { stop(); }
  void stop();
  // Valid after stop().
  [[nodiscard]] const std::vector<std::vector<SpaceProcess>>& samples() const { return samples_; }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  void loop();
  const DockerCli& cli_;
  std::string container_;
  std::vector<std::vector<SpaceProcess>> samples_;
  std::string error_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// From a probe container on the gatekeeper's outer network: wget to the gatekeeper's outer
// address on 3128, 8080 and 9099 must be refused, while a listener container we start on the same
// network answers (positive control).
escape::Outcome outer_network_refuses(const DockerCli& cli, const std::vector<std::string>& labels,
                                      const std::string& run, const std::string& image,
                                      const std::string& outer_network, const std::string& gatekeeper_address);

}  // namespace controller
