// The place contract suite against the local Docker place (label docker): the real engine, the
// pinned images from `cmake --build <dir> --target images` and the built seccomp profiles.
#include <unistd.h>

#include "controller/docker_place.h"
#include "controller/place_contract_test.h"
#include "controller/process.h"
#include "tests/support/environment.h"

namespace controller::contract {
namespace {

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";

bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

std::string profile(const std::string& name) {
  for (const std::string& p : {kBin + "/seccomp/" + name, std::string(GK_SOURCE_DIR) + "/seccomp-profiles/" + name})
    if (readable(p)) return p;
  return {};
}

std::string missing() {
  if (!gk_test::docker_engine_answers()) return "no Docker engine answers";
  for (const char* id : {"/gatekeeper-image.id", "/space-image.id"})
    if (!readable(kBin + id)) return "bin" + std::string(id) + " is missing: cmake --build <dir> --target images";
  if (profile("space.json").empty() || profile("gatekeeper.json").empty()) return "seccomp profiles are missing";
  return {};
}

std::unique_ptr<Place> make(const std::string& owner) {
  PlaceOptions o;
  o.owner = owner;
  o.gatekeeper_image_file = kBin + "/gatekeeper-image.id";
  o.space_image_file = kBin + "/space-image.id";
  o.seccomp_space = profile("space.json");
  o.seccomp_gatekeeper = profile("gatekeeper.json");
  o.bridge_binary = kBin + "/spacectl-bridge";
  return std::make_unique<DockerPlace>(o);
}

// What is left labelled with the owner; a listing that fails is itself reported (as left), so an
// engine that stopped answering cannot pass as "nothing left".
std::string leftovers(const std::string& owner) {
  if (!gk_test::docker_engine_answers()) return "the engine does not answer: cannot prove nothing is left";
  std::string out;
  for (const std::vector<std::string>& kind : {std::vector<std::string>{"ps", "-a"}, {"network", "ls"}, {"volume", "ls"}}) {
    ProcessRequest r;
    r.argv = {"docker"};
    r.argv.insert(r.argv.end(), kind.begin(), kind.end());
    r.argv.insert(r.argv.end(), {"-q", "--filter", "label=spacectl.space.owner=" + owner});
    const ProcessOutcome o = run_process(r);
    if (!o.succeeded()) out += "docker " + kind[0] + " failed: " + o.describe() + "\n";
    out += o.out;
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Docker, PlaceContractTest, ::testing::Values(PlaceUnderTest{"docker", missing, make, leftovers}),
                         place_name);

}  // namespace
}  // namespace controller::contract
