#include "tests/bench/common/netns.h"

#include <fcntl.h>
#include <unistd.h>

#include "tests/bench/common/process.h"

namespace bench {
namespace {
constexpr const char* kIp = "/usr/sbin/ip";
}  // namespace

TestNetwork::TestNetwork()
    : name_("gkbench" + std::to_string(getpid())),
      host_if_("gkbh" + std::to_string(getpid())),
      ns_if_("gkbn" + std::to_string(getpid())),
      prefix_("198.19." + std::to_string(1 + getpid() % 250) + ".") {}

bool TestNetwork::create(std::string* error) {
  run({kIp, "netns", "del", name_});  // a leftover from a killed run with the same pid
  if (run({kIp, "netns", "add", name_}) != 0) {
    *error = "ip netns add " + name_ + " failed (root and iproute2 needed)";
    return false;
  }
  created_ = true;
  register_netns(name_);
  const std::vector<std::vector<std::string>> steps = {
      {kIp, "link", "add", host_if_, "type", "veth", "peer", "name", ns_if_, "netns", name_},
      {kIp, "addr", "add", prefix_ + "1/24", "dev", host_if_},
      {kIp, "link", "set", host_if_, "up"},
      {kIp, "-n", name_, "addr", "add", prefix_ + "2/24", "dev", ns_if_},
      {kIp, "-n", name_, "link", "set", ns_if_, "up"},
      {kIp, "-n", name_, "link", "set", "lo", "up"},
  };
  for (const auto& step : steps) {
    if (run(step) != 0) {
      *error = "ip";
      for (std::size_t i = 1; i < step.size(); ++i) *error += " " + step[i];
      *error += ": failed";
      return false;
    }
  }
  fd_ = open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    *error = "open /var/run/netns/" + name_ + " failed";
    return false;
  }
  return true;
}

TestNetwork::~TestNetwork() {
  if (fd_ >= 0) close(fd_);
  if (created_) {
    // Deleting the namespace removes its end of the veth, and with it ours.
    run({kIp, "netns", "del", name_});
    run({kIp, "link", "del", host_if_});
    unregister_netns();
  }
}

}  // namespace bench
