// Blocking socket helpers shared by the integration harness and the benchmarks' set-up steps
// (each caller sets its own deadlines on the socket).
#pragma once

#include <string_view>

namespace gk_test {

// Sends every byte (retrying on EINTR, no SIGPIPE); false on an error or a closed peer.
bool send_all(int fd, std::string_view bytes);

// The decimal number `text` starts with (a status code, a port in a ready line); -1 when it does
// not start with a digit or the number does not fit an int (std::from_chars: no locale, no
// silent 0 like atoi's).
int leading_decimal(std::string_view text);

}  // namespace gk_test
