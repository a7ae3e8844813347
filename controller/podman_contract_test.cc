// The place contract suite, unchanged, against rootful Podman on this machine (label docker: it
// shares the engines' lock and the host's nftables with the Docker tests). The place loads the
// pinned images from their archives itself (testing/podman_pins.h).
#include <pwd.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/place_contract_test.h"
#include "controller/process.h"
#include "controller/testing/leftovers.h"
#include "controller/testing/podman_pins.h"
#include "tests/support/environment.h"

namespace controller::contract {
namespace {

std::string profile(const std::string& name) {
  return std::string(GK_BINARY_DIR) + "/bin/seccomp/" + name;
}

std::string missing() {
  if (!testing::podman_answers()) {
    return "no rootful Podman answers (podman --runtime runc info; .ci/setup installs it)";
  }
  if (testing::staged_pins(GK_BINARY_DIR).empty()) {
    return "bin/*-image.id or bin/*-image.tar missing: cmake --build <dir> --target images";
  }
  if (access(profile("space.json").c_str(), R_OK) != 0) return "seccomp profiles are missing";
  return {};
}

std::unique_ptr<Place> make(const std::string& owner) {
  PlaceOptions o;
  o.owner = owner;
  o.engine.kind = EngineKind::kPodman;
  const std::string pins = testing::staged_pins(GK_BINARY_DIR);
  o.gatekeeper_image_file = pins + "/gatekeeper-image.id";
  o.space_image_file = pins + "/space-image.id";
  o.seccomp_space = profile("space.json");
  o.seccomp_gatekeeper = profile("gatekeeper.json");
  o.bridge_binary = std::string(GK_BINARY_DIR) + "/bin/spacectl-bridge";
  return std::make_unique<DockerPlace>(o);
}

// Containers, networks and volumes labelled with the owner, and host guards of its spaces.
std::string leftovers(const std::string& owner) { return testing::labelled(owner, {"podman"}); }

INSTANTIATE_TEST_SUITE_P(Podman, PlaceContractTest,
                         ::testing::Values(PlaceUnderTest{"podman", missing, make, leftovers}),
                         place_name);

// Every guard this suite's spaces and probes added is gone again (host_guard.h tags them
// spacectl:<id> and spacectl:probe-<id>): a removed space leaves no rule in the host's INPUT chain.
TEST(PodmanGuardTest, RemovedSpacesAndProbesLeaveNoHostRule) {
  const std::string why = missing();
  GK_REQUIRE(why.empty(), why);
  std::unique_ptr<Place> p = make("guardtest" + random_hex(4));
  Result<CheckReport> checked = p->check();
  ASSERT_TRUE(checked.ok()) << checked.error().message;
  EXPECT_TRUE(checked->isolation_proved);
  CreateRequest request;
  request.memory_bytes = 256ll << 20;
  Result<SpaceSummary> made = p->create(request);
  ASSERT_TRUE(made.ok()) << made.error().message;
  ProcessRequest rules;
  rules.argv = {"iptables", "-w", "10", "-S", "INPUT"};
  EXPECT_NE(run_process(rules).out.find("spacectl:" + made->id), std::string::npos)
      << "the space's guard is in place";
  ASSERT_TRUE(p->remove(made->id).ok());
  for (const char* tool : {"iptables", "ip6tables"}) {
    rules.argv[0] = tool;
    const std::string text = run_process(rules).out;
    EXPECT_EQ(text.find("spacectl:" + made->id), std::string::npos) << tool << ": " << text;
    EXPECT_EQ(text.find("spacectl:probe-"), std::string::npos) << tool << ": " << text;
  }
}

// Rootless Podman (the test user .ci/setup makes) is refused by place check with its reason, not
// half-run: on this project's CI machine its limits would be ignored (cgroup v1) and the host guard
// cannot act in the user's network namespace.
TEST(PodmanRootlessTest, PlaceCheckAsAnUnprivilegedUserRefusesWithTheReason) {
  GK_REQUIRE(getpwnam("gkrootless") != nullptr, "no user gkrootless (.ci/setup adds it)");
  GK_REQUIRE(access("/usr/bin/podman", X_OK) == 0,
             "podman is not installed (.ci/setup installs it)");
  char tmpl[] = "/tmp/spacectl-rootless-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string state = tmpl;
  const passwd* user = getpwnam("gkrootless");
  ASSERT_EQ(chown(state.c_str(), user->pw_uid, user->pw_gid), 0);
  ProcessRequest r;
  r.argv = {"runuser", "-u",           "gkrootless",
            "--",      "/usr/bin/env", "HOME=" + std::string(user->pw_dir),
            SPACECTL,  "--json",       "--place",
            "podman",  "--state-dir",  state,
            "--owner", "rootlesstest", "place",
            "check"};
  r.timeout = std::chrono::minutes(3);
  const ProcessOutcome o = run_process(r);
  std::filesystem::remove_all(state);
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  const nlohmann::json doc = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << o.out << o.err;
  EXPECT_EQ(doc["error"].value("code", ""), "place_unusable") << o.out;
  EXPECT_EQ(doc["result"].value("rootless", false), true) << o.out;
  EXPECT_EQ(doc["result"].value("usable", true), false) << o.out;
  EXPECT_NE(o.out.find("rootless Podman is not supported by this place"), std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace controller::contract
