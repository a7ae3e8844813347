// What an engine still holds of a test's owner: the containers, networks and volumes labelled
// `spacectl.space.owner=<owner>`, listed through the engine's own CLI (docker, podman, docker over
// SSH). The leftover check of every live test (live_space.h) and of the place contract suites on
// real engines. Test-only, header-only.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/process.h"

namespace controller::testing {

// What the engine behind `cli` (its argv: {"docker"}, {"podman"}, {"docker", "-H", host}) lists
// of one kind ({"ps", "-a"}, {"network", "ls"}, {"volume", "ls"}) labelled with `owner`: one id a
// line, and a line saying so when the listing failed.
inline std::string labelled_kind(const std::string& owner, const std::vector<std::string>& kind,
                                 const std::vector<std::string>& cli = {"docker"}) {
  ProcessRequest r;
  r.argv = cli;
  r.argv.insert(r.argv.end(), kind.begin(), kind.end());
  r.argv.insert(r.argv.end(), {"-q", "--filter", "label=spacectl.space.owner=" + owner});
  r.timeout = std::chrono::minutes(2);
  const ProcessOutcome o = run_process(r);
  // A listing that failed is no proof that nothing is left: it says so where the ids would be.
  if (!o.succeeded()) return o.out + cli[0] + " " + kind[0] + " failed: " + o.describe() + "\n";
  return o.out;
}
inline const std::vector<std::vector<std::string>> kLabelledKinds = {
    {"ps", "-a"}, {"network", "ls"}, {"volume", "ls"}};
// Every container, network and volume labelled with `owner`, containers first.
inline std::string labelled(const std::string& owner,
                            const std::vector<std::string>& cli = {"docker"}) {
  std::string out;
  for (const std::vector<std::string>& kind : kLabelledKinds)
    out += labelled_kind(owner, kind, cli);
  return out;
}
// Fails the test for each kind of object labelled with `owner` that the engine still holds.
inline void expect_nothing_left(const std::string& owner,
                                const std::vector<std::string>& cli = {"docker"}) {
  for (const std::vector<std::string>& kind : kLabelledKinds) {
    EXPECT_EQ(labelled_kind(owner, kind, cli), "")
        << "left behind (" << kind[0] << ") for owner " << owner;
  }
}

}  // namespace controller::testing
