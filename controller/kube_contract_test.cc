// The place contract suite, unchanged, against the Kubernetes place driving the fake kubectl
// (testing/fake_kubectl.cc): one fresh fake cluster per test, every argv checked by the fake.
#include "controller/place_contract_test.h"
#include "controller/testing/fake_kube_cluster.h"

namespace controller::contract {
namespace {

// What is left: namespaces of the owner, and any argv the fake refused (a shape the place may not
// send).
INSTANTIATE_TEST_SUITE_P(KubernetesFake, PlaceContractTest,
                         ::testing::Values(over_fake<testing::FakeCluster>(
                             "kubernetes_fake",
                             [](const testing::FakeCluster& cluster, const std::string& owner)
                                 -> std::unique_ptr<Place> { return cluster.place(owner); })),
                         place_name);

}  // namespace
}  // namespace controller::contract
