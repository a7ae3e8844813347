// The inspect readers (controller/inspect_summary.h, controller/verify.h): what a compromised or
// odd engine answers to `docker inspect`, labels included. Never crash, never throw. The first
// byte picks the reader; the rest is the document. Invariants: list shows a label value only in
// the form spacectl writes; verify never finds nothing wrong with a document that is not an
// object.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/inspect_summary.h"
#include "controller/spec.h"
#include "controller/text.h"
#include "controller/verify.h"

namespace {

using nlohmann::json;
using namespace controller;

const std::string kOwner = "fuzzowner";
const std::string kId = "0123456789ab";

SpaceSpec spec() {
  SpaceSpec s;
  s.id = kId;
  s.owner = kOwner;
  s.name = "fuzz";
  s.gatekeeper_image = "sha256:" + std::string(64, 'b');
  s.window_key = std::string(64, 'c');
  return s;
}

void check_summaries(const json& doc, const std::vector<std::string>& networks) {
  for (const SpaceSummary& s : summarise_spaces(doc, networks, kOwner)) {
    if (!is_space_id(s.id)) std::abort();
    if (!s.name.empty() && !is_display_name(s.name)) std::abort();
    if (!s.created.empty() && !is_utc_time_text(s.created)) std::abort();
    if (!s.gatekeeper_image.empty() && !is_image_id(s.gatekeeper_image)) std::abort();
    if (!s.window_url.empty() &&
        (s.window_url.rfind(kWindowBase, 0) != 0 || s.window_url.size() != kWindowBase.size() + 64))
      std::abort();
    if (s.gatekeeper_version.size() > kMaxImageLabelBytes ||
        s.gatekeeper_revision.size() > kMaxImageLabelBytes)
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return 0;
  const json& first = doc.is_array() && !doc.empty() ? doc[0] : doc;
  const std::string profile = R"({"defaultAction":"SCMP_ACT_ERRNO"})";
  std::vector<Difference> found;
  switch (data[0] % 6) {
    case 0:
      check_summaries(doc, {});
      break;
    case 1:
      check_summaries(doc, {"gk-" + kId + "-network", "gk-" + kId + "-outer-network", "gk-",
                            "gk-0123456789abXYZ"});
      break;
    case 2: {
      ContainerExpectation want = expect_gatekeeper(spec(), profile);
      want.path = "/gatekeeper";
      want.command = {"serve"};
      found = verify_container(first, want);
      break;
    }
    case 3:
      found = verify_container(first, expect_space(spec(), profile, {"PATH", "HOME"}));
      break;
    case 4: {
      NetworkExpectation want{"gk-" + kId + "-network", true,   true,
                              Role::kInnerNetwork,      kOwner, kId};
      found = verify_network(first, want,
                             [](const std::string&) { return std::optional<bool>(false); });
      for (Difference& d : verify_network_members(first, want.name, true, {"a", "b"}))
        found.push_back(std::move(d));
      break;
    }
    case 5: {
      const VolumeExpectation want{"gk-" + kId + "-home", kOwner, kId,
                                   "/var/lib/spacectl/disks/x.img"};
      found = verify_volume(first, want, [](int) { return std::optional<LoopState>(); });
      break;
    }
    default:
      break;
  }
  if ((data[0] % 6) >= 2 && !first.is_object() && found.empty()) std::abort();
  for (const Difference& d : found)
    if (d.check.empty() || d.message.empty()) std::abort();
  return 0;
}
