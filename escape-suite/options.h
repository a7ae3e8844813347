// Flags of the escape-suite binary. The host runner (`spacectl escape-test`) sets up the controls
// outside the space and passes what the cases need to know here; nothing secret travels on argv
// (argv is readable in /proc/*/cmdline): the fake model key arrives only as its sha256.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/result.h"

namespace escape {

enum class Format : std::uint8_t { kText, kJson, kTap, kJunit, kSarif, kHtml };

// The engine that runs the space (--engine): what the runtime itself mounts differs. Docker
// bind-mounts its init at /sbin/docker-init; Podman its init (catatonit) at /run/podman-init and
// an empty /run/.containerenv (rootful, not privileged). Both read-only; nothing else is excused.
enum class Engine : std::uint8_t { kDocker, kPodman };

// --resolver none: the place runs no DNS server for the space at all (Podman: the inner network
// has DNS disabled and the space no resolv.conf) and names the gatekeeper in /etc/hosts.
inline constexpr std::string_view kNoResolver = "none";

struct Options {
  Format format = Format::kText;
  std::string output;                      // --output FILE; empty: stdout
  bool list = false;                       // --list
  std::vector<std::string> only;           // --only GLOB[,GLOB...] (repeatable)
  std::string space_id;                    // --space-id: the work volume is /spaces/<id>
  std::string gatekeeper = "gatekeeper";   // --gatekeeper NAME_OR_ADDR
  std::uint16_t corridor_port = 3128;      // --corridor-port
  std::uint16_t window_port = 8080;        // --window-port (used when --window-base is absent)
  std::uint16_t control_port = 9099;       // --control-port: must be unreachable from the space
  std::string window_base;                 // --window-base URL (http://gatekeeper:8080/k/<key>)
  std::string window_grant;                // --window-grant ID: a grant that answers (window control)
  std::string allowed_target;              // --allowed-target host:443 (corridor positive control)
  std::vector<std::string> probe_addresses;  // --probe-address ADDR[:PORT] (host listeners)
  std::vector<std::string> other_space_addresses;  // --other-space ADDR[:PORT] (lateral)
  std::string secret_sha256;            // --secret-sha256 HEX: the fake grant key's digest
  std::string control_sha256;           // --control-sha256 HEX: a bait the runner planted
  std::string resolver = "127.0.0.11";  // --resolver ADDR: Docker's embedded DNS, or `none`
  Engine engine = Engine::kDocker;      // --engine docker|podman
  std::uint64_t pids_limit = 0;         // --pids-limit N (0: unknown)
  std::uint64_t memory_limit = 0;       // --memory-limit BYTES (0: unknown)
  std::uint64_t cpu_limit = 0;          // --cpu-limit NANOCPUS: the space's CPU quota (0: unknown)
  std::uint64_t home_quota = 0;         // --home-quota BYTES: fill $HOME only up to this bound
  std::uint64_t log_flood_mib = 50;     // --log-flood-mib N
  bool unsafe_privileged = false;       // --unsafe-privileged: run even as root with capabilities
  bool progress = false;          // --progress: "case <id> <VERDICT>" on stderr after each case
  bool allow_exhaustion = false;  // --allow-exhaustion: fork bomb, OOM, disk, log flood
  // --gateway-unowned: the runner proved from the host that the inner network's gateway address is
  // held by no host interface (verify's network_host_isolation), so a default route via it goes
  // nowhere (Docker Engine 20.10 installs one even on --internal networks).
  bool gateway_unowned = false;
  int seccomp_errno = 95;                  // --seccomp-errno N (space.json: EOPNOTSUPP)
  std::uint32_t expect_uid = 70000;        // --expect-uid N (controller kSpaceUser)
  int timeout_ms = 3000;                   // --timeout-ms: per network operation
};

inline constexpr std::size_t kMaxRepeatedFlag = 64;  // probe/other-space/only entries

// True when --resolver is `none`: names come from /etc/hosts and no DNS server may answer.
inline bool hosts_file_names(const Options& o) { return o.resolver == kNoResolver; }

// Parses argv[1..]. Errors name the flag.
policy::Result<Options> parse_options(const std::vector<std::string_view>& args);

std::string_view usage();

}  // namespace escape
