// `space list` on the Docker place against the recording fake `docker` (testing/fake_docker.cc):
// three engine calls whatever the number of spaces, and the inspect names only the space
// containers (the CLI asks the engine once per name; ps answers for all containers in one
// request); what ps prints is held to the same rules as an inspect answer.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/testing/fake_docker_fixture.h"

namespace controller {
namespace {

using nlohmann::json;

std::string space_id(int i) {
  char id[13];
  std::snprintf(id, sizeof id, "%012x", static_cast<unsigned>(i));
  return id;
}

// ps's line for one container, as the list's --format prints it.
std::string ps_line(const std::string& id, const std::string& role, const std::string& state,
                    const std::string& name = "t") {
  const json labels = {{"spacectl.space", "true"},
                       {"spacectl.space.id", id},
                       {"spacectl.space.role", role},
                       {"spacectl.space.owner", "testowner"},
                       {"spacectl.space.name", name},
                       {"spacectl.space.created", "2026-01-01T00:00:00Z"},
                       {"org.opencontainers.image.version", role == "gatekeeper" ? "0.1.0" : ""},
                       {"org.opencontainers.image.revision", ""}};
  return json({{"ID", std::string(64 - id.size(), role == "space" ? 'c' : 'd') + id},
               {"State", state},
               {"Image", "sha256:" + std::string(64, role == "space" ? 'a' : 'b')},
               {"Labels", labels}})
      .dump();
}

class DockerListTest : public FakeDockerTest {
 protected:
  void set_ps(const std::vector<std::string>& lines) {
    std::ofstream out(dir_ + "/ps", std::ios::trunc);
    for (const std::string& l : lines) out << l << "\n";
  }
  // The testdata's inspect answers on one line, as the list's --format prints them.
  void SetUp() override {
    FakeDockerTest::SetUp();
    std::filesystem::create_directories(dir_ + "/answers");
    for (const char* name : {"container-inspect.json", "container-inspect-gatekeeper.json"}) {
      std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/" + name);
      std::ofstream(dir_ + "/answers/" + name) << json::parse(in).dump() << "\n";
    }
  }
  ProcessOutcome list() {
    std::filesystem::remove(dir_ + "/log");
    return spacectl({"space", "list"}, {},
                    {"env", "FAKE_DOCKER_PS_LINES=" + dir_ + "/ps",
                     "FAKE_DOCKER_ANSWERS=" + dir_ + "/answers"});
  }
  struct Reads {
    std::size_t calls = 0, requests = 0;
  };
  // Engine calls, and engine requests (an inspect asks once per name it is given).
  Reads reads() {
    Reads r;
    for (const Call& c : calls()) {
      ++r.calls;
      const bool inspect = c.argv.size() > 1 && c.argv[1] == "inspect";
      const auto dash = std::find(c.argv.begin(), c.argv.end(), "--");
      r.requests +=
          inspect && dash != c.argv.end() ? static_cast<std::size_t>(c.argv.end() - dash) - 1 : 1;
    }
    return r;
  }
};

TEST_F(DockerListTest, ListCostsThreeCallsAndOneRequestPerSpaceWhateverTheCount) {
  std::vector<Reads> seen;
  for (const int n : {1, 100}) {
    std::vector<std::string> lines;
    for (int i = 0; i < n; ++i) {
      lines.push_back(ps_line(space_id(i), "space", "running"));
      lines.push_back(ps_line(space_id(i), "gatekeeper", "running"));
    }
    set_ps(lines);
    const ProcessOutcome o = list();
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    seen.push_back(reads());
    // Only the spaces are inspected, all in one call.
    std::size_t inspected = 0;
    for (const Call& c : calls()) {
      if (c.argv.size() > 1 && c.argv[0] == "container" && c.argv[1] == "inspect") {
        inspected +=
            static_cast<std::size_t>(c.argv.end() - std::find(c.argv.begin(), c.argv.end(), "--")) -
            1;
      }
    }
    EXPECT_EQ(inspected, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(seen[0].calls, 3U);  // ps, network ls, container inspect
  EXPECT_EQ(seen[1].calls, 3U);
  EXPECT_EQ(seen[0].requests, 1U + 2U);
  EXPECT_EQ(seen[1].requests, 100U + 2U) << "a gatekeeper was inspected, or a call per space";
}

TEST_F(DockerListTest, TheGatekeeperIsReadFromPsAndItsLabelsAreCheckedAsAnInspects) {
  // The space of the testdata inspect answer (0123456789ab), its gatekeeper stopped, and the
  // gatekeeper of another space whose name label no spacectl writes.
  set_ps({ps_line("0123456789ab", "space", "running"),
          ps_line("0123456789ab", "gatekeeper", "exited"),
          ps_line("00000000000b", "gatekeeper", "running", std::string("x\x1b[2J", 5))});
  const ProcessOutcome o = list();
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json doc = json::parse(o.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << o.out;
  std::map<std::string, json> by_id;
  for (const json& s : doc["spaces"]) by_id[s.value("id", "")] = s;
  ASSERT_EQ(by_id.size(), 2U) << o.out;
  EXPECT_EQ(by_id["0123456789ab"]["space"], "running");
  EXPECT_EQ(by_id["0123456789ab"]["gatekeeper"], "exited");
  EXPECT_EQ(by_id["00000000000b"]["gatekeeper"], "running");
  EXPECT_EQ(by_id["00000000000b"]["space"], "missing");
  EXPECT_EQ(by_id["00000000000b"]["refused_labels"], json::array({"spacectl.space.name"})) << o.out;
  // Another owner's container, or one whose id label is no space id, is not listed.
  std::string foreign = ps_line("00000000000c", "gatekeeper", "running");
  foreign.replace(foreign.find("testowner"), 9, "someoneel");
  set_ps({foreign, ps_line("--help", "gatekeeper", "running")});
  const ProcessOutcome none = list();
  ASSERT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_EQ(json::parse(none.out, nullptr, false)["spaces"], json::array()) << none.out;
}

TEST_F(DockerListTest, APsLineThatIsNoSummaryIsANamedError) {
  for (const std::string& bad :
       {std::string("0123456789abcdef"), std::string(R"({"ID":"x","Labels":7})"),
        std::string("[1]"), std::string("{\"ID\":")}) {
    SCOPED_TRACE(bad);
    set_ps({bad});
    const ProcessOutcome o = list();
    EXPECT_TRUE(o.exited) << o.describe();
    EXPECT_NE(o.exit_code, 0) << o.out;
    EXPECT_NE(o.out.find("ps (label filter): a line is not a container's summary"),
              std::string::npos)
        << o.out;
  }
}

}  // namespace
}  // namespace controller
