// What the fake place CLIs (fake_container.cc, fake_kubectl.cc) share: each reads its recorded
// answers from <PREFIX>_ANSWERS, keeps its state in <PREFIX>_STATE/state.json and logs every argv
// it refuses (an argv the real CLI would not take, or one the place must never send) to
// <PREFIX>_REFUSED, which the tests read back. Test-only, header-only.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace controller::testing {

inline std::string fake_env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v == nullptr ? std::string() : v;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct FakeCli {
  std::string prefix;   // FAKE_CONTAINER, FAKE_KUBECTL
  std::string program;  // how its stderr names it

  // A recorded answer (a JSON file of the answers folder).
  [[nodiscard]] nlohmann::json answer(const std::string& name) const {
    return nlohmann::json::parse(slurp(fake_env(prefix + "_ANSWERS") + "/" + name));
  }
  // Logs the argv and why it was refused; the exit status the tests look for (90).
  int refuse(const std::vector<std::string>& argv, const std::string& why) const {
    std::ofstream out(fake_env(prefix + "_REFUSED"), std::ios::app);
    for (const std::string& a : argv) out << a << ' ';
    out << " <- " << why << '\n';
    std::cerr << program << ": argv refused (" << why << ")\n";
    return 90;
  }
  [[nodiscard]] std::string state_file() const {
    return fake_env(prefix + "_STATE") + "/state.json";
  }
  // The saved state, or `fresh` when there is none yet.
  [[nodiscard]] nlohmann::json load_state(nlohmann::json fresh) const {
    const std::string text = slurp(state_file());
    return text.empty() ? fresh : nlohmann::json::parse(text);
  }
};

}  // namespace controller::testing
