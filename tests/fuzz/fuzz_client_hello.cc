// The corridor's ClientHello parser: never crashes, stays inside its caps, is a pure function of
// the hello's own bytes (what follows them changes nothing), and allows only a hello without ECH
// whose server name normalises to the approved name.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/client_hello.h"
#include "policy/name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const policy::ClientHello hello = policy::parse_client_hello(bytes);
  const policy::Decision decision = policy::decide_client_hello(hello, "example.com");
  if (hello.status != policy::HelloStatus::kComplete) {
    if (decision.allowed()) std::abort();
    return 0;
  }
  if (hello.wire_length == 0 || hello.wire_length > size ||
      hello.wire_length > policy::kMaxClientHelloWireBytes) {
    std::abort();
  }
  if (hello.server_name && (hello.server_name->empty() || hello.server_name->size() > policy::kMaxNameLength)) {
    std::abort();
  }
  const policy::ClientHello again = policy::parse_client_hello(bytes.substr(0, hello.wire_length));
  if (again.status != hello.status || again.server_name != hello.server_name || again.ech != hello.ech) {
    std::abort();
  }
  if (decision.allowed() &&
      (hello.ech || !hello.server_name || policy::checked_name(*hello.server_name) != "example.com")) {
    std::abort();
  }
  return 0;
}
