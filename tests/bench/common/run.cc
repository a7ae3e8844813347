#include "tests/bench/common/run.h"
#include "policy/number.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include "tests/bench/common/gatekeeper.h"
#include "tests/bench/common/process.h"

namespace bench {

bool CommonOptions::wants(const std::string& name) const {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

std::string CommonOptions::gatekeeper_binary() const {
  return gatekeeper.empty() ? gatekeeper_next_to_self() : gatekeeper;
}

bool parse_options(int argc, char** argv, const std::vector<std::string>& only_names, CommonOptions* common,
                   const CountOption& count) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (name == "--gatekeeper") {
      common->gatekeeper = value;
      continue;
    }
    if (name == "--only") {
      if (std::find(only_names.begin(), only_names.end(), value) == only_names.end()) return false;
      common->only.push_back(value);
      continue;
    }
    const std::optional<long> n = policy::parse_number<long>(value);
    if (!n || *n <= 0 || *n > kMaxOptionValue || !count(name, *n)) return false;
  }
  return true;
}

int bench_main(const char* program, bool parsed, const char* usage, const std::function<int()>& run) {
  if (!parsed) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "%s: needs root (ip netns, veth); nothing was started\n", program);
    return 2;
  }
  install_cleanup_handlers();
  return run();
}

WorkDir::WorkDir() {
  char path[] = "/tmp/gk-bench-XXXXXX";
  if (mkdtemp(path) == nullptr) return;
  chmod(path, 0755);
  path_ = path;
}

WorkDir::~WorkDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace bench
