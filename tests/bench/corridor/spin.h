// A space spinning every core, for the CONNECT→200 rows measured under load: one busy child per
// online CPU. With the space's limits (controller/spec.h) the children sit in their own cgroup with
// the space's CPU quota (half the cores, at least one) and weight 512, and the gatekeeper in another
// with weight 2048, as `spacectl space create` sets them; without limits both stay where they are.
// cgroup v1 (the cpu controller's cpu.shares, cpu.cfs_quota_us) or v2 (cpu.weight, cpu.max).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace bench {

class SpinLoad {
 public:
  SpinLoad() = default;
  SpinLoad(const SpinLoad&) = delete;
  SpinLoad& operator=(const SpinLoad&) = delete;
  ~SpinLoad() { stop(); }

  // Starts one spinner per online CPU; with_limits puts them (and `gatekeeper`) into cgroups made
  // for this run. false with *error when a cgroup could not be made or joined (nothing left over).
  bool start(pid_t gatekeeper, bool with_limits, std::string* error);
  // Kills the spinners, moves the gatekeeper back, removes the cgroups.
  void stop();
  // "2 spinners; space quota 1 CPU, weight 512; gatekeeper weight 2048" or "2 spinners, no limits".
  [[nodiscard]] const std::string& description() const { return description_; }

 private:
  std::vector<pid_t> spinners_;
  std::string space_group_, gatekeeper_group_, parent_procs_;
  pid_t gatekeeper_ = -1;
  std::string description_;
};

}  // namespace bench
