// `spacectl --version` and the version warnings of `place check`. The version and git revision are
// baked in at build time (cmake/Version.cmake); the image IDs are read from the pin files spacectl
// uses, so what it prints is what it would run.
#pragma once

#include <string>
#include <vector>

#include "controller/place.h"

namespace controller {

struct VersionInfo {
  std::string version;   // PROJECT_VERSION
  std::string revision;  // full git commit, or "unknown"
  bool revision_known = false;
};

VersionInfo own_version();

// The text of --version: version, revision (or why it is unknown), and each pin with its file.
std::string version_text(const VersionInfo& v, const PlaceOptions& pins, const std::string& test_pin_file);

// One warning per running gatekeeper whose image is not the pinned one, naming both images and
// the version and revision the running one's labels claim. An empty or unreadable pin: no warning
// (check reports the missing pin itself).
std::vector<std::string> gatekeeper_version_warnings(const std::vector<SpaceSummary>& spaces,
                                                     const std::string& pinned_image, const VersionInfo& own);

// The pinned ID in a pin file ("sha256:<64 hex>\n"); empty when missing or malformed.
std::string read_pin(const std::string& file);

}  // namespace controller
