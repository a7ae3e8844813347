// A fresh fake cluster for one test: a state folder for testing/fake_kubectl.cc, the variables
// that point it there, and pins whose digest records name images in a registry (a cluster
// pulls by digest). The place under test gets the fake's path as its kubectl.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/kube_place.h"

namespace controller::testing {

inline constexpr const char* kFakeContext = "spacectl-test";
inline constexpr const char* kFakeNamespaceBase = "gk";

inline std::string slurp_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class FakeCluster {
 public:
  FakeCluster() {
    char tmpl[] = "/tmp/spacectl-fake-kube-XXXXXX";
    dir_ = mkdtemp(tmpl);
    setenv("FAKE_KUBECTL_STATE", dir_.c_str(), 1);
    setenv("FAKE_KUBECTL_LOG", (dir_ + "/log").c_str(), 1);
    setenv("FAKE_KUBECTL_REFUSED", (dir_ + "/refused").c_str(), 1);
    setenv("FAKE_KUBECTL_ANSWERS", KUBE_TESTDATA, 1);
    setenv("FAKE_KUBECTL_CONTEXT", kFakeContext, 1);
    unsetenv("FAKE_KUBECTL_CNI");
    unsetenv("FAKE_KUBECTL_UNREACHABLE");
    unsetenv("FAKE_KUBECTL_DENY");
    unsetenv("FAKE_KUBECTL_WEBHOOK");
    for (const char* name : {"gatekeeper", "space"}) {
      std::ofstream(dir_ + "/" + name + "-image.id")
          << "sha256:" << std::string(64, name[0] == 'g' ? 'b' : 'a') << "\n";
      std::ofstream(dir_ + "/" + name + "-image.digest")
          << "registry.test:5000/spaces/" << name
          << "@sha256:" << std::string(64, name[0] == 'g' ? 'd' : 'e') << "\n";
    }
  }
  ~FakeCluster() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  FakeCluster(const FakeCluster&) = delete;
  FakeCluster& operator=(const FakeCluster&) = delete;

  [[nodiscard]] PlaceOptions options(const std::string& owner) const {
    PlaceOptions o;
    o.owner = owner;
    o.gatekeeper_image_file = dir_ + "/gatekeeper-image.id";
    o.space_image_file = dir_ + "/space-image.id";
    o.kube_context = kFakeContext;
    o.kube_namespace = kFakeNamespaceBase;
    o.place_program = FAKE_KUBECTL;
    return o;
  }
  [[nodiscard]] std::unique_ptr<kube::KubernetesPlace> place(const std::string& owner) const {
    return std::make_unique<kube::KubernetesPlace>(options(owner));
  }
  [[nodiscard]] nlohmann::json state() const {
    const std::string text = slurp_file(dir_ + "/state.json");
    return text.empty() ? nlohmann::json{{"objects", nlohmann::json::array()}}
                        : nlohmann::json::parse(text);
  }
  void set_state(const nlohmann::json& doc) const {
    std::ofstream(dir_ + "/state.json") << doc.dump(1);
  }
  [[nodiscard]] std::string refused() const { return slurp_file(dir_ + "/refused"); }
  [[nodiscard]] std::string log() const { return slurp_file(dir_ + "/log"); }
  [[nodiscard]] std::string created() const { return slurp_file(dir_ + "/created.jsonl"); }
  // Namespaces of `owner` still in the cluster, and every argv the fake refused.
  [[nodiscard]] std::string leftovers(const std::string& owner) const {
    std::string out = refused();
    const nlohmann::json doc = state();  // held: a range-for over state()["objects"] dangles
    for (const nlohmann::json& o : doc["objects"])
      if (o["kind"] == "Namespace" &&
          o["metadata"]["labels"].value("spacectl.space.owner", "") == owner)
        out += "namespace " + o["metadata"]["name"].get<std::string>() + " is left\n";
    return out;
  }
  [[nodiscard]] const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace controller::testing
