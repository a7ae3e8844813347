// Live Podman tests: is a rootful Podman usable here, and the pinned images as the place finds
// them. The pins are staged next to the archives `cmake --build <dir> --target images` wrote
// (image/out/*.tar), so the place's own image step (DockerPlace::pinned_image) `podman load`s each
// archive and refuses one whose ID is not the pin: no `docker save`, no other channel.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "controller/process.h"

namespace controller::testing {

inline bool podman_answers() {
  ProcessRequest r;
  r.argv = {"podman", "--runtime", "runc", "info", "--format", "{{.Host.Security.Rootless}}"};
  r.timeout = std::chrono::seconds(60);
  const ProcessOutcome o = run_process(r);
  return o.succeeded() && o.out.rfind("false", 0) == 0;
}

// A directory holding gatekeeper-image.id, space-image.id and gatekeeper-test-image.id (copies of
// bin/'s pins) each next to its archive (a symlink to image/out/<name>.tar); "" when the build
// has not written them. Made once per test process.
inline std::string staged_pins(const std::string& binary_dir) {
  // Removed when the test process ends (copies and symlinks only; the archives stay).
  struct Staged {
    std::string dir;
    ~Staged() {
      std::error_code ignored;
      if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
    }
  };
  static Staged staged{[&]() -> std::string {
    char tmpl[] = "/tmp/spacectl-pins-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return {};
    const std::string d = tmpl;
    for (const auto& [pin, archive] : {std::pair{"gatekeeper-image", "gatekeeper"}, std::pair{"space-image", "space-default"},
                                       std::pair{"gatekeeper-test-image", "gatekeeper-test"}}) {
      const std::string from = binary_dir + "/bin/" + pin + ".id", tar = binary_dir + "/image/out/" + archive + ".tar";
      if (access(from.c_str(), R_OK) != 0 || access(tar.c_str(), R_OK) != 0) return {};
      ProcessRequest cp;
      cp.argv = {"cp", from, d + "/" + pin + ".id"};
      if (!run_process(cp).succeeded()) return {};
      if (symlink(tar.c_str(), (d + "/" + pin + ".tar").c_str()) != 0) return {};
    }
    return d;
  }()};
  return staged.dir;
}

}  // namespace controller::testing
