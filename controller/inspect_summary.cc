#include "controller/inspect_summary.h"

#include <algorithm>
#include <map>
#include <set>

#include "controller/ids.h"
#include "controller/inspect_json.h"
#include "controller/spec.h"
#include "controller/text.h"

namespace controller {

using inspect::member;
using inspect::str;
using nlohmann::json;

namespace {

std::string state_word(const json& container) {
  const json& status = member(member(container, "State"), "Status");
  return status.is_string() ? status.get<std::string>() : "unknown";
}

bool is_lower_hex(std::string_view text) {
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_printable_ascii(std::string_view text, std::size_t max) {
  if (text.size() > max) return false;
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// The window URL from the space's environment: kWindowBase and a 64-hex key, else nothing.
std::string window_url(const json& container, std::vector<std::string>& refused) {
  const json& env = member(member(container, "Config"), "Env");
  if (!env.is_array()) return {};
  const std::string prefix = std::string(kWindowEnv) + "=";
  for (const json& e : env) {
    const std::string text = str(e);
    if (text.rfind(prefix, 0) != 0) continue;
    const std::string url = text.substr(prefix.size());
    const std::string_view key =
        std::string_view(url).substr(std::min(url.size(), kWindowBase.size()));
    if (url.rfind(kWindowBase, 0) == 0 && key.size() == 64 && is_lower_hex(key)) return url;
    refused.push_back(std::string(kWindowEnv));
    return {};
  }
  return {};
}

// A label value kept only when it is what spacectl (or the image build) writes.
std::string checked(const json& labels, std::string_view key, bool (*ok)(std::string_view),
                    std::vector<std::string>& refused) {
  const json& value = member(labels, key);
  if (value.is_null()) return {};
  const std::string text = str(value);
  if (ok(text)) return text;
  refused.push_back(std::string(key));
  return {};
}

}  // namespace

bool is_utc_time_text(std::string_view text) {
  if (text.size() != 20) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char want = i == 4 || i == 7     ? '-'
                      : i == 10            ? 'T'
                      : i == 13 || i == 16 ? ':'
                      : i == 19            ? 'Z'
                                           : '0';
    if (want == '0' ? !(c >= '0' && c <= '9') : c != want) return false;
  }
  return true;
}

std::vector<SpaceSummary> summarise_spaces(const json& containers,
                                           const std::vector<std::string>& network_names,
                                           const std::string& owner) {
  std::map<std::string, SpaceSummary> spaces;
  auto entry = [&](const std::string& id) -> SpaceSummary& {
    SpaceSummary& s = spaces[id];
    if (s.id.empty()) {
      s.id = id;
      s.space_state = "missing";
      s.gatekeeper_state = "missing";
    }
    return s;
  };
  if (containers.is_array()) {
    for (const json& c : containers) {
      const json& labels = member(member(c, "Config"), "Labels");
      // The filter is re-checked on inspect: labels from the ps column prove nothing.
      const std::string id = str(member(labels, kLabelId));
      if (str(member(labels, kLabelOwner)) != owner || !is_space_id(id)) continue;
      // `place check` probes carry our labels with role probe; they are not spaces.
      const std::string role = str(member(labels, kLabelRole));
      if (role != role_word(Role::kSpace) && role != role_word(Role::kGatekeeper)) continue;
      SpaceSummary& s = entry(id);
      std::vector<std::string> refused;
      // Both containers carry the name and time; a refused one never blanks the other's.
      if (std::string v = checked(
              labels, kLabelName, [](std::string_view t) { return is_display_name(t); }, refused);
          !v.empty()) {
        s.name = std::move(v);
      }
      if (std::string v = checked(labels, kLabelCreated, is_utc_time_text, refused); !v.empty()) {
        s.created = std::move(v);
      }
      if (role == role_word(Role::kSpace)) {
        s.space_state = state_word(c);
        s.window_url = window_url(c, refused);
        const json& exit_code = member(member(c, "State"), "ExitCode");
        if (exit_code.is_number_integer() && exit_code.get<std::int64_t>() >= 0 &&
            exit_code.get<std::int64_t>() <= 255) {
          s.space_exit_code = static_cast<int>(exit_code.get<std::int64_t>());
        }
      } else {
        s.gatekeeper_state = state_word(c);
        // A container's labels include its image's: the OCI version and revision it was built from.
        const std::string image = str(member(c, "Image"));
        s.gatekeeper_image = is_image_id(image) ? image : std::string();
        if (!image.empty() && s.gatekeeper_image.empty()) refused.push_back("Image");
        auto version_ok = [](std::string_view t) {
          return is_printable_ascii(t, kMaxImageLabelBytes);
        };
        s.gatekeeper_version =
            checked(labels, "org.opencontainers.image.version", version_ok, refused);
        s.gatekeeper_revision =
            checked(labels, "org.opencontainers.image.revision", version_ok, refused);
      }
      for (std::string& r : refused) {
        if (std::find(s.refused_labels.begin(), s.refused_labels.end(), r) ==
            s.refused_labels.end()) {
          s.refused_labels.push_back(std::move(r));
        }
      }
    }
  }
  const std::set<std::string> names(network_names.begin(), network_names.end());
  for (const std::string& name : names) {
    // gk-<12 hex>-network / -outer-network
    if (name.size() > 16 && name.rfind("gk-", 0) == 0 && is_space_id(name.substr(3, 12))) {
      entry(name.substr(3, 12));
    }
  }
  std::vector<SpaceSummary> out;
  for (auto& [id, s] : spaces) {
    const Names n = names_for(id);
    if (s.space_state == "missing") s.missing.push_back(n.space);
    if (s.gatekeeper_state == "missing") s.missing.push_back(n.gatekeeper);
    if (names.count(n.inner) == 0) s.missing.push_back(n.inner);
    if (names.count(n.outer) == 0) s.missing.push_back(n.outer);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace controller
