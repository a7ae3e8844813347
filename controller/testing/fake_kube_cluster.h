// A fresh fake cluster for one test (fake_place_dir.h: a state folder for testing/fake_kubectl.cc,
// the variables that point it there, pins by digest), in the context and namespace base the
// place is given. The place under test gets the fake's path as its kubectl.
#pragma once

#include <stdlib.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/kube_place.h"
#include "controller/testing/fake_place_dir.h"

namespace controller::testing {

inline constexpr const char* kFakeContext = "spacectl-test";
inline constexpr const char* kFakeNamespaceBase = "gk";

class FakeCluster : public FakePlaceDir {
 public:
  FakeCluster() : FakePlaceDir("FAKE_KUBECTL", KUBE_TESTDATA) {
    setenv("FAKE_KUBECTL_CONTEXT", kFakeContext, 1);
    unsetenv("FAKE_KUBECTL_CNI");
    unsetenv("FAKE_KUBECTL_UNREACHABLE");
    unsetenv("FAKE_KUBECTL_DENY");
    unsetenv("FAKE_KUBECTL_WEBHOOK");
  }

  [[nodiscard]] PlaceOptions options(const std::string& owner) const {
    PlaceOptions o = FakePlaceDir::options(owner, FAKE_KUBECTL);
    o.kube_context = kFakeContext;
    o.kube_namespace = kFakeNamespaceBase;
    return o;
  }
  [[nodiscard]] std::unique_ptr<kube::KubernetesPlace> place(const std::string& owner) const {
    return std::make_unique<kube::KubernetesPlace>(options(owner));
  }
  [[nodiscard]] nlohmann::json state() const {
    return FakePlaceDir::state({{"objects", nlohmann::json::array()}});
  }
  [[nodiscard]] std::string created() const { return slurp(dir() + "/created.jsonl"); }
  // Namespaces of `owner` still in the cluster, and every argv the fake refused.
  [[nodiscard]] std::string leftovers(const std::string& owner) const {
    std::string out = refused();
    const nlohmann::json doc = state();  // held: a range-for over state()["objects"] dangles
    for (const nlohmann::json& o : doc["objects"]) {
      if (o["kind"] == "Namespace" &&
          o["metadata"]["labels"].value("spacectl.space.owner", "") == owner) {
        out += "namespace " + o["metadata"]["name"].get<std::string>() + " is left\n";
      }
    }
    return out;
  }
};

}  // namespace controller::testing
