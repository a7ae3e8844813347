// The local Docker place (docs/reference-behaviour.md#docker-place): every operation is a `docker`
// CLI call with an argv, a deadline and an output cap (docker_cli.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/docker_cli.h"
#include "controller/ids.h"
#include "controller/image_ensure.h"
#include "controller/place.h"
#include "controller/remote_disk.h"
#include "controller/spec.h"
#include "controller/temp_dir.h"

namespace controller {

// Every `docker exec` carries SPACECTL_EXEC=<random tag> (not a secret) so a killed exec's
// processes inside can be found from the host.
inline constexpr std::string_view kExecTagEnv = "SPACECTL_EXEC";

// What create asks of the engine first (DockerPlace::engine_facts).
struct EngineFacts {
  int major = 0;
  std::int64_t cpus = 0;
};

class DockerPlace final : public Place, public PrivilegedExec {
 public:
  // The CLI is the engine's of options.engine (engine.h).
  explicit DockerPlace(PlaceOptions options);

  Result<CheckReport> check() override;  // docker_check.cc
  Result<SpaceSummary> create(const CreateRequest& request) override;
  Result<std::vector<SpaceSummary>> list() override;
  Result<ExecOutput> exec(const std::string& id, ExecTarget target, const std::vector<std::string>& argv,
                          const std::string& stdin_bytes, std::chrono::milliseconds timeout) override;
  Result<std::vector<std::string>> exec_argv(const std::string& id) override;
  Result<std::vector<std::string>> interactive_exec_argv(const std::string& id,
                                                         bool terminal) override;
  Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) override;
  Result<void> stop(const std::string& id) override;
  Result<void> start(const std::string& id) override;
  Result<void> remove(const std::string& id) override;
  Result<std::vector<Difference>> verify(const std::string& id) override;
  Result<std::vector<LabelledId>> labelled_ids() override;
  [[nodiscard]] std::string subnet_pool() const override { return options_.subnet_pool; }
  Result<std::vector<std::string>> network_ids() override;  // docker_subnets.cc
  Result<std::vector<NetworkSubnets>> network_subnets(const std::vector<std::string>& ids) override;

  // verify, plus the IDs of the two containers it inspected (start starts exactly these).
  struct Verified {
    std::vector<Difference> differences;
    std::string space_id, gatekeeper_id;
  };
  // `space_image` (may be empty): the image ID the space should run, whose environment is then
  // read at the same time as the inspects, or taken from `space_image_env` when create read it
  // already (either used only if the space runs exactly that image).
  Result<Verified> verify_ids(const std::string& id, const std::string& space_image = {},
                              const std::optional<std::set<std::string>>& space_image_env = {});

  // Docker only, outside the place contract: uid 0 in the space, which keeps --cap-drop ALL and
  // no-new-privileges. The escape runner places its binary with it in a root-owned directory, so
  // the space user cannot replace the program whose report the host trusts.
  Result<ExecOutput> exec_as_root(const std::string& id, const std::vector<std::string>& argv,
                                  const std::string& stdin_bytes,
                                  std::chrono::milliseconds timeout) override;

  // Docker only: exec in the space as its user, stderr handed to on_stderr as it arrives, stdout
  // kept up to `cap` bytes (more is kOutputTooLarge once it ended; the deadline bounds the time).
  // The escape runner reads the suite's per-case progress this way.
  Result<ExecOutput> exec_watched(const std::string& id, const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout, std::size_t cap,
                                  const std::function<void(std::string_view)>& on_stderr) override;
  PrivilegedExec* privileged_exec() override { return this; }

  // Tests replace the host-address proof (verify.h).
  void set_host_address_probe(HostAddressProbe probe) { probe_ = std::move(probe); }
  void set_loop_probe(LoopProbe probe) { loop_probe_ = std::move(probe); }
  void set_io_weight_probe(IoWeightProbe probe) { io_probe_ = std::move(probe); }

 private:
  [[nodiscard]] bool podman() const { return options_.engine.kind == EngineKind::kPodman; }
  Result<int> engine_major();
  // The engine's major version and its host's cores for create: Docker answers both in one
  // `docker info`; Podman (whose client is its engine) in its version and info calls, at once.
  Result<EngineFacts> engine_facts();
  // The engine's answer for an image (pin, tag or ID) as sha256:<hex> (Podman prints bare hex).
  Result<std::string> image_id(const std::string& image);
  // `network inspect` in Docker's shape (podman_inspect.h); for Podman with the containers on it.
  Result<nlohmann::json> inspect_network(const std::string& name);
  // `container inspect` of one or more containers in Docker's shape (podman_inspect.h).
  Result<nlohmann::json> inspect_containers(const std::vector<std::string>& names_or_ids,
                                            const std::string& what);
  Result<std::int64_t> host_cpus();  // the place's cores (docker info NCPU)
  // A remote engine's host's own addresses that the gatekeeper's table would call public, as
  // /32 and /128 ranges for `serve --block` (what host_public_ranges is for a local engine).
  Result<std::vector<std::string>> remote_host_public_ranges(const std::string& image);
  Result<std::string> read_pin(const std::string& file) const;
  // read_pin, and the image present in the engine (ensure_pinned_image, image_ensure.h): pulled by
  // the digest recorded next to the pin, or the archive next to it loaded; what arrives must be
  // the pinned image (image_mismatch otherwise).
  Result<std::string> pinned_image(const std::string& file);
  // pinned_image, with what ensure_pinned_image read of the image (its environment's names).
  Result<EnsuredImage> ensured_image(const std::string& file);
  // engine_pull_flags (image_ensure.h) for the digest recorded next to `file`.
  [[nodiscard]] std::vector<std::string> pull_flags_for(const std::string& file) const;
  Result<nlohmann::json> inspect(const std::vector<std::string>& args, const std::string& what);
  // The container of this owner and space, or kSpaceNotFound (a name proves nothing; labels do).
  Result<nlohmann::json> owned_container(const std::string& id, Role role);
  Result<std::set<std::string>> image_env_names(const std::string& image);
  Result<CheckReport> probe_isolation(CheckReport report, const std::string& image);  // docker_check.cc
  // docker_create.cc: starts the gatekeeper by the container ID verify inspected, then the space
  // by its ID while the gatekeeper gets ready and takes the window key.
  // `space_running` (may be empty) is called once the space's container runs, while the
  // gatekeeper's two execs go on.
  Result<void> start_verified(const std::string& id, const Verified& verified,
                              const std::string& window_key,
                              const std::function<void()>& space_running = {});
  Result<void> remove_everything(const std::string& id, bool also_by_name);
  // Kills the processes inside `container` whose environment holds the exec tag (local engine).
  std::string end_exec_inside(const std::string& container, const std::string& tag);
  Result<ExecOutput> exec_as(const std::string& id, Role role, std::string_view user, const std::vector<std::string>& argv,
                             const std::string& stdin_bytes, std::chrono::milliseconds timeout);
  // One `docker exec` in `container` (an ID); `name` is for messages.
  Result<ExecOutput> exec_in(const std::string& container, const std::string& name,
                             std::string_view user, const std::vector<std::string>& argv,
                             const std::string& stdin_bytes, std::chrono::milliseconds timeout);
  // docker_exec.cc: the container IDs this place found ours (owned_container) or started itself,
  // by space and role; execs go to them without another inspect (exec_as says what stands in for
  // the inspect). stop and remove forget them.
  [[nodiscard]] std::string known_container(const std::string& id, Role role) const;
  void remember_container(const std::string& id, Role role, const std::string& container_id);
  void forget_containers(const std::string& id);
  struct KnownContainers {
    std::mutex mutex;
    std::map<std::pair<std::string, Role>, std::string> ids;
  };
  // Shared by copies of this place (the same engine and owner); the creates' parallel steps exec
  // at once.
  std::shared_ptr<KnownContainers> known_ = std::make_shared<KnownContainers>();

  // A remote engine's bridges are not visible here: verify takes the host isolation probe's word
  // (run once per process, by the first verify that needs it; false: not proved).
  std::optional<bool> host_isolation_by_probe();
  std::optional<bool> remote_isolation_;
  // docker_bridge.cc: the bridge's path inside this start of the container, placed on first use
  // (one placement per container start for the whole process, however many DockerPlace values
  // ask: serve makes one per call).
  Result<std::string> ensure_bridge(const std::string& id, const std::string& container, const std::string& start_key);
  // docker_disk.cc: the volumes' disk images and loop devices (loop_disk.h).
  [[nodiscard]] std::string disk_dir() const;
  Result<void> make_disks(SpaceSpec& spec);      // images made and attached; spec gets the loops
  Result<void> attach_disks(const std::string& id);  // after a reboot, before verify
  std::string release_disks(const std::string& id);  // "" or the failures, for messages
  // A remote engine's host (remote_disk.h): the same disks, made and read there by helper
  // containers through the engine's own channel.
  [[nodiscard]] bool disks_remote() const { return options_.engine.kind == EngineKind::kDockerSsh; }
  Result<std::string> run_disk_helper(const std::vector<std::string>& script_args, bool privileged,
                                      const std::string& what);
  RemoteDiskView remote_disk_view(const std::vector<int>& indices);  // unseen devices absent

  PlaceOptions options_;
  DockerCli cli_;
  HostAddressProbe probe_;
  LoopProbe loop_probe_;
  IoWeightProbe io_probe_;
};

Result<std::string> read_small_file(const std::string& path, std::size_t cap = 1u << 20);
// The major version in an engine's version answer ("20.10.24", Podman's "4.3.1"); an answer that
// is not major.minor... is an error naming `command` (a version read as 0 would pick the options
// of the oldest engine silently).
Result<int> engine_major_of(std::string_view version, std::string_view command);
// A CPU count as an engine prints it (1 to 99999, a trailing line break allowed); an error names
// `command`.
Result<std::int64_t> cpu_count_of(std::string_view text, std::string_view command);
// `docker info --format '{{.ServerVersion}} {{.NCPU}}'`: "<major.minor...> <cores>", two words;
// anything else is an error naming `command`.
Result<EngineFacts> engine_facts_of(std::string_view text, std::string_view command);
// The IPv4 addresses a host delivers to itself (/proc/net/fib_trie's "/32 host LOCAL" entries),
// loopback left out: what a remote engine's host answers on (docker_check.cc).
std::vector<std::string> local_addresses_from_fib_trie(std::string_view text);
// The addresses of /proc/net/if_inet6 (32 hex digits a line) in colon form.
std::vector<std::string> ipv6_addresses_from_if_inet6(std::string_view text);
// The addresses policy::classify calls public, as /32 or /128 ranges (at most kMaxOperatorRanges).
std::vector<std::string> public_ranges_of(const std::vector<std::string>& addresses);
// Why a rootless Podman engine is refused (CheckReport::unsupported, create).
std::string rootless_podman_refusal();

// A `docker --env-file` in a fresh 0700 directory, file 0600; both removed when it goes.
class EnvFile {
 public:
  static Result<EnvFile> write(const std::vector<std::string>& lines);
  EnvFile(EnvFile&& other) noexcept : dir_(std::move(other.dir_)) { other.dir_.reset(); }
  EnvFile& operator=(EnvFile&&) = delete;
  EnvFile(const EnvFile&) = delete;
  EnvFile& operator=(const EnvFile&) = delete;
  ~EnvFile();
  [[nodiscard]] std::string path() const { return dir_ ? dir_->path() + "/env" : std::string(); }

 private:
  EnvFile() = default;
  std::optional<OwnedTempDir> dir_;  // removed with the file in it
};
// The non-empty lines of a docker CLI's output.
std::vector<std::string> output_lines(const std::string& text);
// Whether docker's stderr says the object (container, volume, network) does not exist.
bool docker_no_such_object(const std::string& err);
// Whether an exec's stderr holds a line the engine or its runtime writes when it refused to run
// the command (the container stopped, gone, or the exec could not start).
bool engine_refusal_text(std::string_view err);
// A container inspect's State.Status ("running", "exited", ...), "missing" for a non-object.
std::string container_state(const nlohmann::json& container);

}  // namespace controller
