// `gatekeeper explain`: the decision word the corridor would journal for `CONNECT TARGET`,
// assuming the DNS answers given. Same policy code path as the corridor; touches no network.
#pragma once

#include <string>
#include <vector>

namespace appliance {

struct ExplainOutcome {
  int exit_code = 2;   // 0: a word was printed; 2: bad usage
  std::string out;     // stdout text (the word and a newline)
  std::string err;     // stderr text (usage errors)
};

// args: everything after "explain".
ExplainOutcome run_explain(const std::vector<std::string>& args);

}  // namespace appliance
