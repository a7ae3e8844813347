// The subnet pools of the docker tests (tests/README.md "Docker tests in parallel"). CI runs two
// docker tests at a time; a space's /29s are picked from the engine's networks and the state
// directory's records, so two spacectl processes with different state directories could pick the
// same free block at once. Tests that hold the ctest lock gk_pool_default use spacectl's default
// pool; tests that hold gk_pool_second pass this one (spacectl --subnet-pool, or
// PlaceOptions::subnet_pool for a manager in the test). It lies outside the default pool
// (10.213.0.0/16, docs/subnets.md), so the two groups never meet, and like it outside every range
// a host is known to use by default.
#pragma once

namespace gk_test {

inline constexpr const char* kSecondSubnetPool = "10.214.0.0/16";

}  // namespace gk_test
