// The place contract (docs/architecture.md#the-place-contract): one
// interface every place implements, so the manager and the CLI never name a runtime.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "controller/engine.h"
#include "controller/engine_networks.h"
#include "controller/errors.h"
#include "controller/subnets.h"
#include "controller/verify.h"

namespace controller {

// Where spacectl finds what it pins; defaults are next to its own executable.
struct PlaceOptions {
  std::string owner;
  std::string gatekeeper_image_file;  // holds "sha256:<hex>\n"
  std::string space_image_file;
  std::string seccomp_space;          // profile paths
  std::string seccomp_gatekeeper;
  Engine engine;  // which CLI-driven engine (the registry sets its kind from the place name)
  // spacectl-bridge (controller/dispatch/inside/bridge.cc), the static program `connect` places
  // into a space; empty: connect is refused with kPlaceUnusable.
  std::string bridge_binary;
  std::string disk_dir;  // the volumes' disk images on a local engine's host (empty: kDefaultDiskDir)
  // TEST ONLY, set by `escape-test` for its twin and never from the command line: the
  // gatekeeper's resolver (`serve --dns-server ADDRESS:PORT`, the runner's test resolver) and
  // ranges it refuses beyond the host's public addresses (the host's address on the runner's
  // test bridge, which the test image's table calls public). Neither lets a space reach more.
  std::string unsafe_test_dns_server;
  std::vector<std::string> unsafe_test_blocked_ranges;
  // Where the spaces' networks take their subnets (controller/subnets.h; --subnet-pool).
  std::string subnet_pool = std::string(kDefaultSubnetPool);
  // The Kubernetes place: the kubeconfig context and the namespace base, both always explicit
  // (never the kubeconfig's current ones); each space gets the namespace <base>-<id>.
  std::string kube_context, kube_namespace;
  // The nodes carry seccomp-profiles/ under the kubelet's seccomp root (place check proves it):
  // pods use them as Localhost profiles instead of RuntimeDefault.
  bool seccomp_localhost = false;
  // The place's CLI (kubectl, container); empty: found in PATH. Tests name their fake here.
  std::string place_program;
};

struct CheckReport {
  std::string engine_version;
  std::string os_arch;
  bool seccomp = false;
  bool isolation_proved = false;   // the probe on an isolated network did not reach the host
  bool positive_control = false;   // a probe on a normal bridge did reach it
  std::string place;               // the registry name (docker, docker-ssh, podman)
  bool rootless = false;  // the engine runs containers in a user namespace of a non-root user
  // Empty: the place can hold the hardening spec. Else why not (rootless Podman, docker_check.cc):
  // such a place is unusable, whatever the probes say.
  std::string unsupported;
  std::vector<std::string> findings;  // one sentence per step
};

// Called with a step word as create reaches each step (progress events of `spacectl serve`, the
// CLI's progress lines, the sweep tests that stop a create at a step).
using Progress = std::function<void(std::string_view step)>;

struct CreateRequest {
  std::string id;                     // empty: the place picks a fresh one (12 lowercase hex)
  std::string name = "space";
  std::string space_image;            // empty: the pinned default image
  std::int64_t memory_bytes = 0;      // 0: default
  std::int64_t nano_cpus = 0;         // 0: default_space_nano_cpus(the place's cores)
  std::int64_t disk_bytes = 0;        // each volume's size; 0: kDefaultDiskBytes
  std::vector<std::string> command;   // empty: a long sleep for the default image, else the image's own
  // The networks' subnets the manager allocated (controller/subnets.h); empty: the place's choice.
  std::string inner_subnet, outer_subnet;
  // Set by the manager for a place with a subnet_pool(): the allocation, which reads the engine's
  // networks and records two blocks in the space's record. Such a place calls it once, before it
  // makes anything and while its own first engine queries run, and uses its answer in place of
  // inner_subnet and outer_subnet; until it has returned, the place writes no record (the
  // progress callback does).
  std::function<Result<SpaceSubnets>()> allocate_subnets;
  Progress progress;                  // may be empty
  // May be empty. A place that can calls it once the space's container runs, on another thread,
  // while the rest of its start goes on (the gatekeeper's readiness and key), and has it returned
  // before create returns; a place that does not leaves it to the caller after create.
  std::function<void()> space_running;
};

struct SpaceSummary {
  std::string id, name, created;
  std::string space_state;       // running, exited, created, missing
  std::string gatekeeper_state;
  std::vector<std::string> missing;  // resources that should exist and do not
  std::string window_url;            // from the space's environment
  int space_exit_code = 0;           // of an exited space container (75: it stopped itself when idle)
  std::string gatekeeper_image;      // image ID the gatekeeper container runs
  std::string gatekeeper_version, gatekeeper_revision;  // its image's OCI labels
  // Labels (and the window variable) whose value no spacectl writes: shown empty and named here.
  std::vector<std::string> refused_labels;
};

// One id that objects of this owner carry, with the time the oldest of them was made (0: unknown).
struct LabelledId {
  std::string id;
  std::int64_t created_unix = 0;
};

enum class ExecTarget : std::uint8_t { kSpace, kGatekeeper };

struct ExecOutput {
  int exit_code = 0;
  std::string out, err;
};

// What `spacectl escape-test` needs of a place beyond the contract: an exec in the space as uid 0
// (still without capabilities, under no-new-privileges), so the space user cannot replace the
// program whose report the host trusts, and an exec whose stderr arrives as it is written (the
// suite's per-case progress). A place offers it through Place::privileged_exec or not at all.
class PrivilegedExec {
 public:
  virtual Result<ExecOutput> exec_as_root(const std::string& id,
                                          const std::vector<std::string>& argv,
                                          const std::string& stdin_bytes,
                                          std::chrono::milliseconds timeout) = 0;
  // stderr handed to on_stderr as it arrives, stdout kept up to `cap` bytes (more is
  // kOutputTooLarge once it ended; the deadline bounds the time).
  virtual Result<ExecOutput> exec_watched(
      const std::string& id, const std::vector<std::string>& argv,
      std::chrono::milliseconds timeout, std::size_t cap,
      const std::function<void(std::string_view)>& on_stderr) = 0;

 protected:
  ~PrivilegedExec() = default;
};

class Place {
 public:
  virtual ~Place() = default;
  virtual Result<CheckReport> check() = 0;
  // Create → verify → start. A failure at any step removes everything created so far.
  virtual Result<SpaceSummary> create(const CreateRequest& request) = 0;
  // Never an empty list for an unreachable place: that is kPlaceUnreachable.
  virtual Result<std::vector<SpaceSummary>> list() = 0;
  // stdin carries secrets, never argv.
  virtual Result<ExecOutput> exec(const std::string& id, ExecTarget target, const std::vector<std::string>& argv,
                                  const std::string& stdin_bytes, std::chrono::milliseconds timeout) = 0;
  // The argv prefix a caller (git ext::, an interactive exec) spawns itself; space only.
  virtual Result<std::vector<std::string>> exec_argv(const std::string& id) = 0;
  // The argv prefix of `spacectl space exec` (the caller appends the command and passes its own
  // stdio through): exec_argv, with a terminal allocated when `terminal` (the caller's stdin is
  // one). Where the flag goes in the place's CLI is the place's business.
  virtual Result<std::vector<std::string>> interactive_exec_argv(const std::string& id,
                                                                 bool terminal) = 0;
  // The escape runner's extra execs; null: this place cannot run the escape suite.
  virtual PrivilegedExec* privileged_exec() { return nullptr; }
  // argv of a byte stream to 127.0.0.1:port inside the space: its stdin and stdout are the
  // stream. Needs nothing from the space's image but what the place itself uses to write a file
  // (Docker: dd or tee, run as uid 0 without capabilities); the program at the other end is our
  // own static bridge. Blocking (it may place the bridge first); safe from several threads.
  virtual Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) = 0;
  virtual Result<void> stop(const std::string& id) = 0;
  virtual Result<void> start(const std::string& id) = 0;
  virtual Result<void> remove(const std::string& id) = 0;
  virtual Result<std::vector<Difference>> verify(const std::string& id) = 0;
  // Every id any object of this owner carries (spaces, their volumes and networks, probes), for
  // sweep. The default answers list()'s ids with their created time (controller/sweep.cc).
  virtual Result<std::vector<LabelledId>> labelled_ids();
  // The pool the manager allocates this place's space networks from (controller/subnets.h);
  // empty: the place has no networks to allocate.
  [[nodiscard]] virtual std::string subnet_pool() const { return {}; }
  // What the allocation reads of the place's networks, anyone's (controller/engine_networks.h
  // keeps what it read, so the cost does not grow with the number of spaces): the IDs of every
  // network now, in one engine call, and the subnets of the given networks, in one engine call
  // whatever their number (a network removed meanwhile is left out of the answer). Both strictly
  // parsed and bounded (kMaxEngineNetworks, kMaxSubnetsPerNetwork).
  virtual Result<std::vector<std::string>> network_ids() { return std::vector<std::string>{}; }
  virtual Result<std::vector<NetworkSubnets>> network_subnets(const std::vector<std::string>& ids) {
    (void)ids;
    return std::vector<NetworkSubnets>{};
  }
};

}  // namespace controller
