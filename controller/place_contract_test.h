// The place contract suite: one parameterised GoogleTest suite written against
// the Place interface only. Every place instantiates it with INSTANTIATE_TEST_SUITE_P in its own
// test binary (the in-memory fake under label unit, Docker under label docker).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "controller/place.h"

namespace controller::contract {

struct PlaceUnderTest {
  std::string name;                      // the test-name suffix
  std::function<std::string()> missing;  // empty: usable here; else why not (skipped, failed under CI)
  // A place whose every label and record is scoped to `owner` (a fresh one per test).
  std::function<std::unique_ptr<Place>(const std::string& owner)> make;
  // What the place still holds for `owner` after a test; empty when nothing is left.
  std::function<std::string(const std::string& owner)> leftovers;
};

// gtest prints a parameter in test names and failures; the name is enough.
inline void PrintTo(const PlaceUnderTest& p, std::ostream* os) { *os << p.name; }

class PlaceContractTest : public ::testing::TestWithParam<PlaceUnderTest> {};

inline std::string place_name(const ::testing::TestParamInfo<PlaceUnderTest>& info) { return info.param.name; }

}  // namespace controller::contract
