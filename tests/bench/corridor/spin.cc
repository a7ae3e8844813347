#include "tests/bench/corridor/spin.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "controller/spec.h"

namespace bench {
namespace {

constexpr const char* kV1 = "/sys/fs/cgroup/cpu";  // cgroup v1's cpu controller
constexpr const char* kV2 = "/sys/fs/cgroup";
constexpr long kPeriodUs = 100000;

bool write_file(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (!out) {
    *error = "write " + path + " (" + text + "): " + std::strerror(errno);
    return false;
  }
  return true;
}

bool v1() {
  struct stat st {};
  return ::stat((std::string(kV1) + "/cpu.shares").c_str(), &st) == 0;
}

// runc's conversion of cpu.shares to cgroup v2's cpu.weight.
long weight_of_shares(long shares) { return 1 + ((shares - 2) * 9999) / 262142; }

// The cgroup directory (under the cpu hierarchy's root) that `pid` is in now.
std::string cgroup_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  const bool want_v1 = v1();
  for (std::string line; std::getline(in, line);) {
    const std::size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::stringstream list(controllers);
    bool cpu = false;
    for (std::string c; std::getline(list, c, ',');) cpu = cpu || c == "cpu";
    if ((want_v1 && cpu) || (!want_v1 && line.rfind("0::", 0) == 0)) return (want_v1 ? kV1 : kV2) + line.substr(b + 1);
  }
  return want_v1 ? kV1 : kV2;
}

bool make_group(const std::string& path, long shares, long quota_cpus, std::string* error) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "mkdir " + path + ": " + std::strerror(errno);
    return false;
  }
  if (v1()) {
    if (!write_file(path + "/cpu.shares", std::to_string(shares), error)) return false;
    if (quota_cpus > 0 && (!write_file(path + "/cpu.cfs_period_us", std::to_string(kPeriodUs), error) ||
                           !write_file(path + "/cpu.cfs_quota_us", std::to_string(quota_cpus * kPeriodUs), error)))
      return false;
    return true;
  }
  if (!write_file(path + "/cpu.weight", std::to_string(weight_of_shares(shares)), error)) return false;
  if (quota_cpus > 0 && !write_file(path + "/cpu.max", std::to_string(quota_cpus * kPeriodUs) + " " + std::to_string(kPeriodUs), error))
    return false;
  return true;
}

bool join(const std::string& group, pid_t pid, std::string* error) {
  return write_file(group + (v1() ? "/tasks" : "/cgroup.procs"), std::to_string(pid), error);
}

}  // namespace

bool SpinLoad::start(pid_t gatekeeper, bool with_limits, std::string* error) {
  const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  gatekeeper_ = gatekeeper;
  if (with_limits) {
    // spacectl's default quota: half the place's cores, at least one (controller/spec.cc).
    const long quota = std::max(1L, cpus / 2);
    const std::string base = v1() ? kV1 : kV2;
    if (!v1() && !write_file(base + "/cgroup.subtree_control", "+cpu", error)) return false;
    space_group_ = base + "/gk-bench-" + std::to_string(::getpid()) + "-space";
    gatekeeper_group_ = base + "/gk-bench-" + std::to_string(::getpid()) + "-gatekeeper";
    parent_procs_ = cgroup_of(gatekeeper);
    if (!make_group(space_group_, controller::kSpaceCpuShares, quota, error) ||
        !make_group(gatekeeper_group_, controller::kGatekeeperCpuShares, 0, error) || !join(gatekeeper_group_, gatekeeper, error)) {
      stop();
      return false;
    }
    description_ = std::to_string(cpus) + " spinners; space quota " + std::to_string(quota) + " CPU, weight " +
                   std::to_string(controller::kSpaceCpuShares) + "; gatekeeper weight " +
                   std::to_string(controller::kGatekeeperCpuShares);
  } else {
    description_ = std::to_string(cpus) + " spinners, no limits";
  }
  for (long i = 0; i < cpus; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      *error = std::string("fork a spinner: ") + std::strerror(errno);
      stop();
      return false;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    spinners_.push_back(pid);
    if (with_limits && !join(space_group_, pid, error)) {
      stop();
      return false;
    }
  }
  return true;
}

void SpinLoad::stop() {
  for (pid_t pid : spinners_) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  spinners_.clear();
  std::string ignored;
  if (!parent_procs_.empty() && gatekeeper_ > 0) (void)join(parent_procs_, gatekeeper_, &ignored);
  for (const std::string& group : {space_group_, gatekeeper_group_})
    if (!group.empty()) ::rmdir(group.c_str());
  space_group_.clear();
  gatekeeper_group_.clear();
  parent_procs_.clear();
}

}  // namespace bench
