// Whether a host's cgroups let the engine weight a container's block IO (verify.h's
// host_io_weight_supported), read under any cgroup root so tests can lay one out.
#pragma once

#include <optional>
#include <string>

namespace controller {

// "/sys/fs/cgroup" for the host. nullopt: neither cgroup v1's blkio nor v2's controller list.
std::optional<bool> io_weight_supported_in(const std::string& cgroup_root);

}  // namespace controller
