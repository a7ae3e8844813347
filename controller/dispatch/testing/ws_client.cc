// Test and demo tool (never installed): one WebSocket round trip through `spacectl serve`'s
// dispatcher. Connects to serve's unix socket, upgrades TARGET, sends MESSAGE as one masked text
// frame, and prints the status line and the frame that comes back. Exit 0 only when the answer
// was 101 and the echo equals MESSAGE.
//
//   dispatch-ws-client SOCKET /api/spaces/<id>/terminal/ws MESSAGE
#include <cstdio>
#include <string>

#include "controller/dispatch/testing/harness.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: dispatch-ws-client SOCKET TARGET MESSAGE\n");
    return 2;
  }
  const std::string message = argv[3];
  controller::dispatch::testing::Client client{std::string(argv[1])};
  if (!client.connected()) {
    std::fprintf(stderr, "dispatch-ws-client: connect %s: failed\n", argv[1]);
    return 1;
  }
  if (!client.send(controller::dispatch::testing::ws_upgrade(argv[2]))) return 1;
  const controller::dispatch::testing::Answer head = client.read_upgrade(30000);
  std::printf("handshake: %d %s\n", head.status,
              head.status == 101 ? "Switching Protocols" : head.body.c_str());
  if (head.status != 101) return 1;
  if (!client.send(controller::dispatch::testing::ws_frame(1, message))) return 1;
  const controller::dispatch::testing::Frame echo =
      controller::dispatch::testing::read_frame(client, 30000);
  if (!echo.ok) {
    std::fprintf(stderr, "dispatch-ws-client: no frame came back\n");
    return 1;
  }
  std::printf("sent:      text frame \"%s\"\nreceived:  %s frame \"%s\"\n", message.c_str(),
              echo.opcode == 1 ? "text" : "other", echo.payload.c_str());
  (void)client.send(
      controller::dispatch::testing::ws_frame(8, std::string("\x03\xe8", 2)));  // close 1000
  return echo.opcode == 1 && echo.payload == message ? 0 : 1;
}
