#include "tests/bench/common/gatekeeper.h"
#include "tests/support/socket_io.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "tests/bench/common/process.h"
#include "tests/bench/common/socket.h"

namespace bench {

GatekeeperChild start_gatekeeper_child(const std::string& binary, const std::vector<std::string>& extra,
                                       const std::string& stderr_path) {
  GatekeeperChild g;
  SpawnOptions options;
  options.capture_stdout = true;
  options.stderr_path = stderr_path;
  options.uid = kGatekeeperUid;
  options.gid = kGatekeeperUid;
  std::vector<std::string> argv = {binary,          "serve", "--bind", "127.0.0.1", "--corridor-port", "0",
                                   "--window-port", "0",     "--control-port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const Child child = spawn(argv, options);
  g.pid = child.pid;
  if (child.pid < 0) {
    g.error = "cannot start " + binary;
    return g;
  }
  const std::string line = read_line(child.stdout_fd, kStartSeconds * 1000);
  close(child.stdout_fd);
  // gatekeeper: ready corridor=127.0.0.1:P window=127.0.0.1:P control=127.0.0.1:P
  auto port_of = [&](const std::string& key) -> std::uint16_t {
    const auto at = line.find(key + "=127.0.0.1:");
    if (at == std::string::npos) return 0;
    const int port = gk_test::decimal_word(std::string_view(line).substr(at + key.size() + 11));
    return port > 0 && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
  };
  g.corridor = port_of("corridor");
  g.window = port_of("window");
  g.control = port_of("control");
  if (g.corridor == 0 || g.window == 0 || g.control == 0) {
    g.error = "gatekeeper gave no ready line (see " + stderr_path + "): '" + line + "'";
  }
  return g;
}

int control_post(std::uint16_t port, const std::string& path, const std::string& body) {
  const int fd = connect_loopback(port);
  if (fd < 0) return 0;
  send_all(fd, "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) +
                   "\r\nConnection: close\r\n\r\n" + body);
  const std::string head = read_head(fd);
  close(fd);
  return http_status(head);
}

std::string gatekeeper_next_to_self() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string() + "/gatekeeper-test";
}

}  // namespace bench
