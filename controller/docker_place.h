// The local Docker place (docs/reference-behaviour.md#docker-place): every operation is a `docker`
// CLI call with an argv, a deadline and an output cap (docker_cli.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/docker_cli.h"
#include "controller/place.h"
#include "controller/spec.h"

namespace controller {

class DockerPlace final : public Place {
 public:
  explicit DockerPlace(PlaceOptions options, DockerCli cli = DockerCli());

  Result<CheckReport> check() override;  // docker_check.cc
  Result<SpaceSummary> create(const CreateRequest& request) override;
  Result<std::vector<SpaceSummary>> list() override;
  Result<ExecOutput> exec(const std::string& id, ExecTarget target, const std::vector<std::string>& argv,
                          const std::string& stdin_bytes, std::chrono::milliseconds timeout) override;
  Result<std::vector<std::string>> exec_argv(const std::string& id) override;
  Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) override;
  Result<void> stop(const std::string& id) override;
  Result<void> start(const std::string& id) override;
  Result<void> remove(const std::string& id) override;
  Result<std::vector<Difference>> verify(const std::string& id) override;

  // Tests replace the host-address proof (verify.h).
  void set_host_address_probe(HostAddressProbe probe) { probe_ = std::move(probe); }

 private:
  Result<int> engine_major();
  Result<std::string> read_pin(const std::string& file) const;
  Result<nlohmann::json> inspect(const std::vector<std::string>& args, const std::string& what);
  // The container of this owner and space, or kSpaceNotFound (a name proves nothing; labels do).
  Result<nlohmann::json> owned_container(const std::string& id, Role role);
  Result<std::set<std::string>> image_env_names(const std::string& image);
  Result<CheckReport> probe_isolation(CheckReport report, const std::string& image);  // docker_check.cc
  Result<void> start_gatekeeper_and_key(const std::string& id, const std::string& window_key);
  Result<void> remove_everything(const std::string& id, bool also_by_name);

  PlaceOptions options_;
  DockerCli cli_;
  HostAddressProbe probe_;
};

Result<std::string> read_small_file(const std::string& path, std::size_t cap = 1u << 20);
std::string random_hex(std::size_t bytes);

}  // namespace controller
