// The place contract suite, unchanged, against Docker over SSH (label docker): sshd from Debian's
// openssh-server on a loopback port with keys made for the test (testing/ssh_engine.h), and this
// machine's Docker engine at its other end. Every docker call of the place carries
// `--host ssh://root@127.0.0.1:PORT`; verify cannot see the engine's bridges from here, so host
// isolation is proved by the probe on the engine (CheckReport, and verify's own probe run).
#include <unistd.h>

#include "controller/docker_place.h"
#include "controller/place_contract_test.h"
#include "controller/process.h"
#include "controller/testing/leftovers.h"
#include "controller/testing/ssh_engine.h"
#include "tests/support/environment.h"

namespace controller::contract {
namespace {

const std::string kBin = std::string(GK_BINARY_DIR) + "/bin";

testing::SshEngine& engine() {
  static testing::SshEngine e;
  return e;
}

std::string missing() {
  if (!gk_test::docker_engine_answers()) {
    return "no Docker engine answers (the engine at the SSH end)";
  }
  for (const char* id : {"/gatekeeper-image.id", "/space-image.id"}) {
    if (access((kBin + id).c_str(), R_OK) != 0) {
      return "bin" + std::string(id) + " is missing: cmake --build <dir> --target images";
    }
  }
  static const std::string started = [] {
    const std::string why = engine().start();
    if (why.empty()) engine().put_first_in_path();
    return why;
  }();
  return started;
}

std::unique_ptr<Place> make(const std::string& owner) {
  PlaceOptions o;
  o.owner = owner;
  o.engine.kind = EngineKind::kDockerSsh;
  o.engine.host = engine().host();
  o.gatekeeper_image_file = kBin + "/gatekeeper-image.id";
  o.space_image_file = kBin + "/space-image.id";
  o.seccomp_space = kBin + "/seccomp/space.json";
  o.seccomp_gatekeeper = kBin + "/seccomp/gatekeeper.json";
  o.bridge_binary = kBin + "/spacectl-bridge";
  return std::make_unique<DockerPlace>(o);
}

// Containers, networks and volumes labelled with the owner, on the engine at the other end.
std::string leftovers(const std::string& owner) {
  return testing::labelled(owner, {"docker", "--host", engine().host()});
}

INSTANTIATE_TEST_SUITE_P(DockerSsh, PlaceContractTest,
                         ::testing::Values(PlaceUnderTest{"docker_ssh", missing, make, leftovers}),
                         place_name);

// The place check over SSH names the engine's host, measures a round trip, and proves host
// isolation with the listener on the engine's host (not this process's).
TEST(DockerSshTest, CheckProvesIsolationOnTheEnginesHostAndMeasuresTheRoundTrip) {
  const std::string why = missing();
  GK_REQUIRE(why.empty(), why);
  std::unique_ptr<Place> p = make("sshcheck" + random_hex(4));
  Result<CheckReport> r = p->check();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->place, "docker-ssh");
  EXPECT_TRUE(r->isolation_proved);
  EXPECT_TRUE(r->positive_control);
  std::string all;
  for (const std::string& f : r->findings) all += f + "\n";
  EXPECT_NE(all.find(" ms; deadlines grow"), std::string::npos) << all;
  EXPECT_NE(all.find("listener container on its host network"), std::string::npos) << all;
}

// A host that does not answer is unreachable, never an empty list.
TEST(DockerSshTest, AnUnansweringHostIsUnreachableNotEmpty) {
  const std::string why = missing();
  GK_REQUIRE(why.empty(), why);
  PlaceOptions o;
  o.owner = "sshdown";
  o.engine.kind = EngineKind::kDockerSsh;
  o.engine.host = "ssh://root@127.0.0.1:1";  // nothing listens on port 1 of loopback
  DockerPlace p(o);
  Result<std::vector<SpaceSummary>> all = p.list();
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().code, Code::kPlaceUnreachable) << all.error().message;
}

}  // namespace
}  // namespace controller::contract
