#include "controller/version.h"

#include <fstream>

#include "gk_version.h"

namespace controller {
namespace {

bool is_image_id(const std::string& s) {
  if (s.size() != 71 || s.rfind("sha256:", 0) != 0) return false;
  for (std::size_t i = 7; i < s.size(); ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

}  // namespace

VersionInfo own_version() { return VersionInfo{GK_VERSION, GK_GIT_REVISION, GK_GIT_KNOWN != 0}; }

std::string read_pin(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return is_image_id(line) ? line : std::string();
}

std::string version_text(const VersionInfo& v, const PlaceOptions& pins, const std::string& test_pin_file) {
  std::string out = "spacectl " + v.version + "\n";
  out += v.revision_known ? "revision " + v.revision + "\n" : "revision unknown (built from a source tree without git)\n";
  auto pin_line = [&out](const char* what, const std::string& file) {
    const std::string id = read_pin(file);
    out += std::string(what) + " " + (id.empty() ? "not pinned (no valid pin file)" : id) + "  (" + file + ")\n";
  };
  pin_line("gatekeeper image", pins.gatekeeper_image_file);
  pin_line("space image", pins.space_image_file);
  if (!read_pin(test_pin_file).empty()) pin_line("gatekeeper-test image", test_pin_file);
  return out;
}

std::vector<std::string> gatekeeper_version_warnings(const std::vector<SpaceSummary>& spaces,
                                                     const std::string& pinned_image, const VersionInfo& own) {
  std::vector<std::string> out;
  if (!is_image_id(pinned_image)) return out;
  for (const SpaceSummary& s : spaces) {
    if (s.gatekeeper_state != "running" || s.gatekeeper_image.empty() || s.gatekeeper_image == pinned_image) continue;
    out.push_back("warning: space " + s.id + ": its running gatekeeper is image " + s.gatekeeper_image + " (version " +
                  or_unknown(s.gatekeeper_version) + ", revision " + or_unknown(s.gatekeeper_revision) +
                  "), not the pinned " + pinned_image + " (spacectl " + own.version + ", revision " + own.revision +
                  "); remove and create the space again to run the pinned gatekeeper");
  }
  return out;
}

}  // namespace controller
