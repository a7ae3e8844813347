// Provider presets of `grant add --provider`: the upstream and the header of each model provider
// we know, from one table (presets.cc) where every line names where its values come from. A grant
// built from a preset is an ordinary grant: the window strips what the space sent and adds the
// header (`authorization` becomes `Bearer <secret>`, policy/window.cc).
#pragma once

#include <span>
#include <string_view>

#include "controller/errors.h"

namespace controller::grants {

struct Preset {
  std::string_view provider;  // also the default grant id
  std::string_view upstream;  // the provider SDK's default base URL
  std::string_view header;    // x-api-key, x-goog-api-key or authorization (sent as Bearer)
  std::string_view source;    // where upstream and header come from
};

// A provider we refuse, with the reason (each one signs requests or reads credentials in a way a
// header with a key cannot carry).
struct Refused {
  std::string_view provider;
  std::string_view reason;
};

std::span<const Preset> presets();
std::span<const Refused> refused_providers();

// The preset of `provider`; kProviderNotSupported with the reason for a refused one, or with the
// list of known ones for anything else.
Result<Preset> find_preset(std::string_view provider);

}  // namespace controller::grants
