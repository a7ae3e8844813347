// Blocking socket helpers shared by the integration harness and the benchmarks' set-up steps
// (each caller sets its own deadlines on the socket).
#pragma once

#include <string_view>

namespace gk_test {

// Sends every byte (retrying on EINTR, no SIGPIPE); false on an error or a closed peer.
bool send_all(int fd, std::string_view bytes);

// The number that is `text`'s first word (up to a space, CR or LF, or the end): a status code, a
// port in a ready line. -1 when that word is not wholly a decimal number that fits an int: "2x0"
// is no status and "-1" no port (atoi read them as 2 and -1).
int decimal_word(std::string_view text);

}  // namespace gk_test
