// Environment-dependent tests (root, network namespaces, Docker) skip with a reason on a laptop,
// but under CI=true such a skip is a failure (docs/decisions.md#skips-fail-under-ci, bubblewrap's
// BWRAP_MUST_WORK).
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace gk_test {

// True when the environment variable CI is exactly "true".
bool running_in_ci();
bool running_as_root();
// True when this process may create network namespaces (root and `ip netns` works).
bool can_use_network_namespaces();
// True when a Docker engine answers `docker info`.
bool docker_engine_answers();

}  // namespace gk_test

// GK_REQUIRE(condition, "reason"): when the condition is false, skip the test with the reason, or
// fail it under CI=true. Use at the top of a test body.
#define GK_REQUIRE(condition, reason)                                              \
  do {                                                                             \
    if (!(condition)) {                                                            \
      if (::gk_test::running_in_ci()) {                                            \
        GTEST_FAIL() << "required under CI=true but unavailable: " << (reason);    \
      } else {                                                                     \
        GTEST_SKIP() << "skipped: " << (reason);                                   \
      }                                                                            \
    }                                                                              \
  } while (0)
