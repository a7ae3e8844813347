#include "tests/support/socket_io.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <optional>

#include "policy/number.h"

namespace gk_test {

bool send_all(int fd, std::string_view bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

int decimal_word(std::string_view text) {
  const std::optional<int> value =
      policy::parse_number<int>(text.substr(0, text.find_first_of(" \r\n")));
  return value && *value >= 0 ? *value : -1;
}

}  // namespace gk_test
