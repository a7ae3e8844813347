// The place contract suite: one parameterised GoogleTest suite written against
// the Place interface only. Every place instantiates it with INSTANTIATE_TEST_SUITE_P in its own
// test binary (the in-memory fake under label unit, Docker under label docker).
#pragma once

#include <functional>
#include <map>
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

// A place over a fake of the tests' own (a fake cluster, a fake Mac): a fresh `Fake` for each
// owner, the place `place` makes over it, and at the end the fake's own `leftovers(owner)`, read
// just before the fake goes.
template <typename Fake>
PlaceUnderTest over_fake(
    std::string name,
    std::function<std::unique_ptr<Place>(const Fake&, const std::string& owner)> place) {
  static std::map<std::string, std::unique_ptr<Fake>> fakes;
  return PlaceUnderTest{std::move(name), nullptr,
                        [place](const std::string& owner) {
                          std::unique_ptr<Fake>& fake = fakes[owner];
                          fake = std::make_unique<Fake>();
                          return place(*fake, owner);
                        },
                        [](const std::string& owner) {
                          auto it = fakes.find(owner);
                          if (it == fakes.end()) return "no fake for " + owner;
                          std::string out = it->second->leftovers(owner);
                          fakes.erase(it);
                          return out;
                        }};
}

// gtest prints a parameter in test names and failures; the name is enough.
inline void PrintTo(const PlaceUnderTest& p, std::ostream* os) { *os << p.name; }

class PlaceContractTest : public ::testing::TestWithParam<PlaceUnderTest> {};

inline std::string place_name(const ::testing::TestParamInfo<PlaceUnderTest>& info) { return info.param.name; }

}  // namespace controller::contract
