// Blocking socket helpers shared by the integration harness and the benchmarks' set-up steps
// (each caller sets its own deadlines on the socket).
#pragma once

#include <string_view>

namespace gk_test {

// Sends every byte (retrying on EINTR, no SIGPIPE); false on an error or a closed peer.
bool send_all(int fd, std::string_view bytes);

}  // namespace gk_test
