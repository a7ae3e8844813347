// Places by name (docs/reference-behaviour.md#place-registry-and-contract): the CLI asks the
// registry, never a concrete type.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "controller/place.h"

namespace controller {

// How far a place has been proved: whether its contract suite has run against the real runtime.
inline constexpr std::string_view kRunLive =
    "run live: the contract suite runs against the real runtime in CI";
inline constexpr std::string_view kNotRunLive =
    "built against the documented interface, not yet run live (docs/places.md says what a first "
    "live run must check)";

class Registry {
 public:
  using Factory = std::function<Result<std::unique_ptr<Place>>(const PlaceOptions&)>;
  void add(std::string name, Factory factory, std::string proved = std::string(kRunLive)) {
    proved_[name] = std::move(proved);
    factories_[std::move(name)] = std::move(factory);
  }
  [[nodiscard]] Result<std::unique_ptr<Place>> make(const std::string& name, const PlaceOptions& options) const;
  [[nodiscard]] std::vector<std::string> names() const;
  // kRunLive, kNotRunLive or a test's own words; empty for an unknown name.
  [[nodiscard]] std::string proved(const std::string& name) const {
    auto it = proved_.find(name);
    return it == proved_.end() ? std::string() : it->second;
  }

 private:
  std::map<std::string, Factory> factories_;
  std::map<std::string, std::string> proved_;
};

// The registry with every built-in place: docker, docker-ssh (needs options.engine.host),
// podman, kubernetes (needs options.kube_context and options.kube_namespace) and apple-container.
Registry builtin_registry();

}  // namespace controller
