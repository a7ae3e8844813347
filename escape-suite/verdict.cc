// The verdict vocabulary and the case selection (case.h): shared by the suite, the host runner and
// the report writers, none of which needs a case to use them.
#include <algorithm>

#include "escape-suite/case.h"

namespace escape {

std::string_view verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kInconclusive:
      return "INCONCLUSIVE";
    case Verdict::kNotApplicable:
      return "N/A";
  }
  return "INCONCLUSIVE";  // unreachable: the switch is exhaustive (-Wswitch-enum)
}

std::string bound_evidence(std::string_view text) {
  if (text.size() <= kMaxEvidenceBytes) return std::string(text);
  constexpr std::string_view kMark = " ...[truncated]";
  return std::string(text.substr(0, kMaxEvidenceBytes - kMark.size())) + std::string(kMark);
}

Outcome pass(std::string evidence) { return {Verdict::kPass, bound_evidence(evidence)}; }
Outcome fail(std::string evidence) { return {Verdict::kFail, bound_evidence(evidence)}; }
Outcome inconclusive(std::string evidence) {
  return {Verdict::kInconclusive, bound_evidence(evidence)};
}
Outcome not_applicable(std::string reason) {
  return {Verdict::kNotApplicable, bound_evidence(reason)};
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with one backtrack point: linear in practice, no recursion on hostile input.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool selected(const Options& opts, std::string_view id) {
  if (opts.only.empty()) return true;
  return std::any_of(opts.only.begin(), opts.only.end(),
                     [&](const std::string& g) { return glob_match(g, id); });
}

}  // namespace escape
