// An in-memory place for tests: it keeps spaces in a map and answers the place contract without a
// runtime. It interprets only the commands the contract suite runs (`cat`, `true`, `false`, and
// the gatekeeper's `control GET /health`); anything else exits 127 like a missing program.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/place.h"

namespace controller::testing {

class MemoryPlace final : public Place {
 public:
  Result<CheckReport> check() override;
  Result<SpaceSummary> create(const CreateRequest& request) override;
  Result<std::vector<SpaceSummary>> list() override;
  Result<ExecOutput> exec(const std::string& id, ExecTarget target, const std::vector<std::string>& argv,
                          const std::string& stdin_bytes, std::chrono::milliseconds timeout) override;
  Result<std::vector<std::string>> exec_argv(const std::string& id) override;
  Result<std::vector<std::string>> interactive_exec_argv(const std::string& id,
                                                         bool terminal) override;
  Result<std::vector<std::string>> connect(const std::string& id, std::uint16_t port) override;
  Result<void> stop(const std::string& id) override;
  Result<void> start(const std::string& id) override;
  Result<void> remove(const std::string& id) override;
  Result<std::vector<Difference>> verify(const std::string& id) override;

 private:
  Result<SpaceSummary*> find(const std::string& id);
  std::map<std::string, SpaceSummary> spaces_;
};

}  // namespace controller::testing
