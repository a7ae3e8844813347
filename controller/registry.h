// Places by name (docs/reference-behaviour.md#place-registry-and-contract): the CLI asks the
// registry, never a concrete type.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/place.h"

namespace controller {

class Registry {
 public:
  using Factory = std::function<Result<std::unique_ptr<Place>>(const PlaceOptions&)>;
  void add(std::string name, Factory factory) { factories_[std::move(name)] = std::move(factory); }
  [[nodiscard]] Result<std::unique_ptr<Place>> make(const std::string& name, const PlaceOptions& options) const;
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::map<std::string, Factory> factories_;
};

// The registry with every built-in place: docker, docker-ssh (needs options.engine.host) and
// podman.
Registry builtin_registry();

}  // namespace controller
