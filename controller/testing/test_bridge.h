// For a live test whose upstream runs in the test process (the window, a TLS upstream, a grant's
// upstream): a test bridge, an `--internal` Docker bridge on a /24 of 198.18.0.0/15 that no host
// route overlaps (pick_test_subnet, as `escape-test` picks its own), labelled with the test's
// owner so the leftover check sees it, and a socket listening on the host's address on it. The
// test removes the bridge itself, after the space and the upstream that use it. Header-only; the
// target links controller_escape (pick_test_subnet).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "controller/errors.h"
#include "controller/escape_host.h"
#include "controller/testing/live_space.h"

namespace controller::testing {

// Creates the bridge `name` on a free /24 and answers the host's address on it (the /24's .1).
// Five tries: a test running beside this one may take the /24 first.
inline Result<std::string> make_test_bridge(const std::string& name, const std::string& owner) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const Result<std::string> picked = pick_test_subnet();
    if (!picked) return picked.error();
    const std::string& subnet = *picked;
    if (docker({"network", "create", "--driver", "bridge", "--internal", "--subnet", subnet,
                "--label", "spacectl.space.owner=" + owner, name})
            .succeeded()) {
      return subnet.substr(0, subnet.rfind('.')) + ".1";
    }
  }
  return fail(Code::kPlaceUnusable, "no test bridge on a free /24 of 198.18.0.0/15");
}

// A TCP socket listening on `address`:0 (IPv4), its port in `port`; -1 with errno kept when not.
inline int listen_on(const std::string& address, std::uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  socklen_t length = sizeof sin;
  if (inet_pton(AF_INET, address.c_str(), &sin.sin_addr) != 1) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &length) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  port = ntohs(sin.sin_port);
  return fd;
}

}  // namespace controller::testing
