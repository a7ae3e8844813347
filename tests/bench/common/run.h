// The frame of a benchmark run: the command line (every option takes one value), the root check
// before anything starts, the cleanup handlers, and the temp dir for configs, keys and logs.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace bench {

inline constexpr long kMaxOptionValue = 10'000'000;

struct CommonOptions {
  std::string gatekeeper;         // --gatekeeper PATH; empty: gatekeeper-test next to the benchmark
  std::vector<std::string> only;  // --only NAME, repeatable; empty: everything
  [[nodiscard]] bool wants(const std::string& name) const;
  [[nodiscard]] std::string gatekeeper_binary() const;
};

// Whether the benchmark knows option `name` with this value (1..kMaxOptionValue) and took it.
using CountOption = std::function<bool(const std::string& name, long value)>;
// Reads "--name value" pairs: --gatekeeper and --only (one of only_names) into *common, every
// other name with a whole number through `count`. False on anything else.
bool parse_options(int argc, char** argv, const std::vector<std::string>& only_names, CommonOptions* common,
                   const CountOption& count);

// The body of main(): exit 2 with `usage` on stderr when !parsed, exit 2 when not root (nothing
// was started); otherwise installs the cleanup handlers and returns run().
int bench_main(const char* program, bool parsed, const char* usage, const std::function<int()>& run);

// A new /tmp/gk-bench-XXXXXX, mode 0755 (the gatekeeper, uid 65532, reads from it), removed with
// its contents when this goes; path() is empty when it could not be made.
class WorkDir {
 public:
  WorkDir();
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace bench
