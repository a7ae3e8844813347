// The place contract suite against the in-memory fake (label unit): the suite itself is tested on
// every build, without a runtime.
#include "controller/place_contract_test.h"
#include "controller/testing/memory_place.h"

namespace controller::contract {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Memory, PlaceContractTest,
    ::testing::Values(PlaceUnderTest{
        "memory", nullptr, [](const std::string&) -> std::unique_ptr<Place> { return std::make_unique<testing::MemoryPlace>(); },
        nullptr}),
    place_name);

}  // namespace
}  // namespace controller::contract
