// The gatekeeper under test, as a child of the benchmark: `gatekeeper-test serve --bind 127.0.0.1`
// with every port 0 (the ready line names the ports really bound), run as uid/gid 65532 as in the
// image (serve refuses root), stderr to a file in the benchmark's temp dir. gatekeeper-test, never
// gatekeeper: only the test build treats the namespace's 198.18.0.0/15 upstream as public.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

inline constexpr int kStartSeconds = 15;
inline constexpr int kGatekeeperUid = 65532;  // the image's user and group (appliance refuses root)

struct GatekeeperChild {
  pid_t pid = -1;
  std::uint16_t corridor = 0, window = 0, control = 0;  // on 127.0.0.1
  std::string error;                                     // why it did not start
};

// Starts `binary serve --bind 127.0.0.1 --corridor-port 0 --window-port 0 --control-port 0
// <extra>` and waits (kStartSeconds) for its ready line. On error the child may still run:
// the caller stops `pid` either way.
GatekeeperChild start_gatekeeper_child(const std::string& binary, const std::vector<std::string>& extra,
                                       const std::string& stderr_path);

// POSTs body to the control channel on 127.0.0.1:port; the HTTP status, or 0 without an answer.
int control_post(std::uint16_t port, const std::string& path, const std::string& body);

// gatekeeper-test next to the running benchmark (both are built into bin/).
std::string gatekeeper_next_to_self();

}  // namespace bench
