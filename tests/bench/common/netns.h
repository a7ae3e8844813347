// The benchmark's network: namespace gkbench<pid> joined to this namespace by a veth pair on
// 198.19.<n>.0/24 (inside 198.18.0.0/15, RFC 2544 benchmarking space, which only gatekeeper-test
// treats as public). 198.19 rather than 198.18 so that a run never shares a /24 with the
// integration tests (tests/integration/harness.h uses 198.18.<n>.0/24).
//   <prefix>.1  this side of the veth (the proxies' source address)
//   <prefix>.2  inside: the benchmark's upstream and dnsmasq on :53
// Shared by the benchmarks; at most one per process.
#pragma once

#include <string>

namespace bench {

class TestNetwork {
 public:
  TestNetwork();
  ~TestNetwork();
  TestNetwork(const TestNetwork&) = delete;
  TestNetwork& operator=(const TestNetwork&) = delete;

  // Creates the namespace and the veth; false with `error` set on failure.
  [[nodiscard]] bool create(std::string* error);
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::string inside_ip() const { return prefix_ + "2"; }
  [[nodiscard]] std::string subnet() const { return prefix_ + "0/24"; }

 private:
  std::string name_;
  std::string host_if_;
  std::string ns_if_;
  std::string prefix_;  // "198.19.<n>."
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace bench
