// The place contract suite against the local Docker place (label docker): the real engine, the
// pinned images from `cmake --build <dir> --target images` and the built seccomp profiles.
#include <unistd.h>

#include "controller/docker_place.h"
#include "controller/place_contract_test.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "tests/support/environment.h"

namespace controller::contract {
namespace {

using testing::kLiveBin;

std::string missing() {
  if (!gk_test::docker_engine_answers()) return "no Docker engine answers";
  for (const char* id : {"/gatekeeper-image.id", "/space-image.id"}) {
    if (!testing::readable(kLiveBin + id)) {
      return "bin" + std::string(id) + " is missing: cmake --build <dir> --target images";
    }
  }
  if (testing::profile("space.json").empty() || testing::profile("gatekeeper.json").empty()) {
    return "seccomp profiles are missing";
  }
  return {};
}

// This build's pins, profiles and bridge (testing/live_space.h).
std::unique_ptr<Place> make(const std::string& owner) {
  return std::make_unique<DockerPlace>(testing::live_place_options(owner));
}

// What is left labelled with the owner; a listing that fails is itself reported (as left), so an
// engine that stopped answering cannot pass as "nothing left".
std::string leftovers(const std::string& owner) {
  if (!gk_test::docker_engine_answers()) {
    return "the engine does not answer: cannot prove nothing is left";
  }
  return testing::labelled(owner);
}

INSTANTIATE_TEST_SUITE_P(Docker, PlaceContractTest, ::testing::Values(PlaceUnderTest{"docker", missing, make, leftovers}),
                         place_name);

}  // namespace
}  // namespace controller::contract
