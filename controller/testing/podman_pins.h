// Live Podman tests: is a rootful Podman usable here, and the pinned images as the place finds
// them: the pins with their archives next to them (`cmake --build <dir> --target images` writes
// both into bin/), so the place's own image step (ensure_pinned_image, image_ensure.h) `podman
// load`s each archive and refuses one whose ID is not the pin: no `docker save`, no other channel.
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

// The build's bin/ when it holds gatekeeper-image.id, space-image.id and gatekeeper-test-image.id
// each next to its archive (<pin>.tar, which the images target copies there); "" otherwise.
inline std::string staged_pins(const std::string& binary_dir) {
  const std::string bin = binary_dir + "/bin";
  for (const char* pin : {"gatekeeper-image", "space-image", "gatekeeper-test-image"})
    for (const char* ext : {".id", ".tar"})
      if (access((bin + "/" + pin + ext).c_str(), R_OK) != 0) return {};
  return bin;
}

}  // namespace controller::testing
