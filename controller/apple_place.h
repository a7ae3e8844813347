// The Apple `container` place (docs/places.md#apple-container): macOS's container CLI, one
// lightweight VM per container. The same contract as every place: an internal (host-only) inner
// network, the gatekeeper on it and on a NAT outer network, the space on the inner one only, two
// sized volumes, limits, exec. Built against the documented CLI (its command reference and the
// JSON its inspect prints); not yet run on a Mac.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/place.h"
#include "controller/spec.h"

namespace controller::apple {

inline constexpr std::chrono::milliseconds kAppleQueryTimeout{30000};
inline constexpr std::chrono::milliseconds kAppleChangeTimeout{120000};
inline constexpr std::chrono::milliseconds kApplePullTimeout{
    1200000};  // a first pull exceeded 300 s

struct AppleSpec {
  std::string id, owner, name, created;
  std::string gatekeeper_image, space_image;  // registry digest references
  std::int64_t memory_bytes = kDefaultSpaceMemory;
  std::int64_t cpus = 1;  // whole cores: the CLI's --cpus takes an integer
  std::int64_t disk_bytes = 0;
  std::string window_key;
  std::vector<std::string> command;
  std::string inner_subnet;        // read from `network inspect` once the inner network exists
  std::string gatekeeper_address;  // its inner address: the space resolves no names (no DNS there)
};

// The argv of each step, after the program name (tests compare them exactly).
std::vector<std::string> network_create_argv(const AppleSpec& spec,
                                             Role role);  // kInnerNetwork or kOuterNetwork
std::vector<std::string> volume_create_argv(const AppleSpec& spec,
                                            Role role);          // kHomeVolume or kWorkVolume
std::vector<std::string> setup_run_argv(const AppleSpec& spec);  // chown of the fresh volumes
std::vector<std::string> gatekeeper_create_argv(const AppleSpec& spec);
std::vector<std::string> space_create_argv(const AppleSpec& spec);
std::vector<std::string> space_environment(const AppleSpec& spec);

// Shared by apple_place.cc, apple_check.cc and apple_verify.cc.
namespace detail {
SpaceSpec label_spec(const AppleSpec& s);  // what labels_for needs
void add_labels(std::vector<std::string>& argv, const AppleSpec& spec, Role role);
// o[key], or null when o is not an object or lacks it (never throws, never inserts).
const nlohmann::json& member(const nlohmann::json& o, const char* key);
std::string address_only(const std::string& cidr);  // "192.168.64.2/24" -> "192.168.64.2"
}  // namespace detail

// Differences between one container's `container inspect` entry and what we made.
std::vector<Difference> verify_container(const nlohmann::json& entry, const AppleSpec& spec,
                                         Role role);

class AppleContainerPlace final : public Place {
 public:
  explicit AppleContainerPlace(PlaceOptions options);
  Result<CheckReport> check() override;
  Result<SpaceSummary> create(const CreateRequest& request) override;
  Result<std::vector<SpaceSummary>> list() override;
  Result<ExecOutput> exec(const std::string& id, ExecTarget target,
                          const std::vector<std::string>& argv, const std::string& stdin_bytes,
                          std::chrono::milliseconds timeout) override;
  Result<std::vector<std::string>> exec_argv(const std::string& id) override;
  Result<std::vector<std::string>> interactive_exec_argv(const std::string& id,
                                                         bool terminal) override;
  Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) override;
  Result<void> stop(const std::string& id) override;
  Result<void> start(const std::string& id) override;
  Result<void> remove(const std::string& id) override;
  Result<std::vector<Difference>> verify(const std::string& id) override;

 private:
  Result<std::string> run(const std::vector<std::string>& args, const std::string& what,
                          std::chrono::milliseconds timeout = kAppleQueryTimeout,
                          const std::string& stdin_bytes = {});
  Result<nlohmann::json> run_json(const std::vector<std::string>& args, const std::string& what);
  // This owner's containers, networks and volumes of space `id` (labels checked), by role.
  Result<nlohmann::json> owned(const std::string& id);
  Result<nlohmann::json> container(const std::string& id, Role role);  // kSpaceNotFound when absent
  Result<AppleSpec> spec_of(const std::string& id, const nlohmann::json& space);
  Result<void> start_gatekeeper(const std::string& id, const std::string& key);
  Result<void> remove_everything(const std::string& id);
  [[nodiscard]] std::string program() const {
    return options_.place_program.empty() ? "container" : options_.place_program;
  }

  PlaceOptions options_;
};

}  // namespace controller::apple
