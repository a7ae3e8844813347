// The tests' side of a fake place CLI (fake_cli.h is the fake's side): a fresh folder for the
// fake's state, the variables that point the fake there (<PREFIX>_STATE, _LOG, _REFUSED,
// _ANSWERS), and pins whose digest records name images in a registry (a cluster or a Mac pulls by
// digest). FakeCluster (fake_kube_cluster.h) and the Apple tests' FakeMac build on it.
// Test-only, header-only.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "controller/place.h"
#include "controller/testing/fake_cli.h"

namespace controller::testing {

class FakePlaceDir {
 public:
  // `prefix`: the fake's variables (FAKE_KUBECTL, FAKE_CONTAINER); `answers`: its recorded
  // answers' folder.
  FakePlaceDir(const std::string& prefix, const std::string& answers) {
    char tmpl[] = "/tmp/spacectl-fake-place-XXXXXX";
    const char* made = mkdtemp(tmpl);
    dir_ = made != nullptr ? made : "";
    setenv((prefix + "_STATE").c_str(), dir_.c_str(), 1);
    setenv((prefix + "_LOG").c_str(), (dir_ + "/log").c_str(), 1);
    setenv((prefix + "_REFUSED").c_str(), (dir_ + "/refused").c_str(), 1);
    setenv((prefix + "_ANSWERS").c_str(), answers.c_str(), 1);
    for (const char* name : {"gatekeeper", "space"}) {
      std::ofstream(dir_ + "/" + name + "-image.id")
          << "sha256:" << std::string(64, name[0] == 'g' ? 'b' : 'a') << "\n";
      std::ofstream(dir_ + "/" + name + "-image.digest")
          << "registry.test:5000/spaces/" << name
          << "@sha256:" << std::string(64, name[0] == 'g' ? 'd' : 'e') << "\n";
    }
  }
  ~FakePlaceDir() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  FakePlaceDir(const FakePlaceDir&) = delete;
  FakePlaceDir& operator=(const FakePlaceDir&) = delete;

  // The owner, the pins, and the fake (`program`) as the place's CLI.
  [[nodiscard]] PlaceOptions options(const std::string& owner, const std::string& program) const {
    PlaceOptions o;
    o.owner = owner;
    o.gatekeeper_image_file = dir_ + "/gatekeeper-image.id";
    o.space_image_file = dir_ + "/space-image.id";
    o.place_program = program;
    return o;
  }
  // The fake's state.json, or `empty` before the fake wrote one.
  [[nodiscard]] nlohmann::json state(const nlohmann::json& empty) const {
    const std::string text = slurp(dir_ + "/state.json");
    return text.empty() ? empty : nlohmann::json::parse(text);
  }
  void set_state(const nlohmann::json& doc) const {
    std::ofstream(dir_ + "/state.json") << doc.dump(1);
  }
  // Every argv the fake refused (an argv the real CLI would not take, or one the place must never
  // send), one a line.
  [[nodiscard]] std::string refused() const { return slurp(dir_ + "/refused"); }
  [[nodiscard]] std::string log() const { return slurp(dir_ + "/log"); }
  [[nodiscard]] const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace controller::testing
