// The place contract suite, unchanged, against the Kubernetes place driving the fake kubectl
// (testing/fake_kubectl.cc): one fresh fake cluster per test, every argv checked by the fake.
#include <map>

#include "controller/place_contract_test.h"
#include "controller/testing/fake_kube_cluster.h"

namespace controller::contract {
namespace {

std::map<std::string, std::unique_ptr<testing::FakeCluster>>& clusters() {
  static std::map<std::string, std::unique_ptr<testing::FakeCluster>> c;
  return c;
}

std::unique_ptr<Place> make(const std::string& owner) {
  auto& c = clusters()[owner];
  c = std::make_unique<testing::FakeCluster>();
  return c->place(owner);
}

// Namespaces left for the owner, and any argv the fake refused (a shape the place may not send).
std::string leftovers(const std::string& owner) {
  auto it = clusters().find(owner);
  if (it == clusters().end()) return "no fake cluster for " + owner;
  std::string out = it->second->leftovers(owner);
  clusters().erase(it);
  return out;
}

INSTANTIATE_TEST_SUITE_P(KubernetesFake, PlaceContractTest,
                         ::testing::Values(PlaceUnderTest{"kubernetes_fake", nullptr, make,
                                                          leftovers}),
                         place_name);

}  // namespace
}  // namespace controller::contract
