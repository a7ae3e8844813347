#include <algorithm>
#include <cstdio>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {

std::string_view verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kFail: return "FAIL";
    case Verdict::kInconclusive: return "INCONCLUSIVE";
    case Verdict::kNotApplicable: return "N/A";
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

void add_case(std::vector<Case>& out, std::string id, std::string threat, std::string technique,
              std::string proof, std::function<Outcome(Context&)> run) {
  Case c;
  c.group = id.substr(0, id.find('.'));
  c.id = std::move(id);
  c.threat = std::move(threat);
  c.technique = std::move(technique);
  c.proof = std::move(proof);
  c.run = std::move(run);
  out.push_back(std::move(c));
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  add_identity_cases(cases);
  add_leak_cases(cases);  // early: the descriptor snapshot is about what the runtime handed us
  add_filesystem_cases(cases);
  add_proc_sys_cases(cases);
  add_device_cases(cases);
  add_syscall_cases(cases);
  add_network_cases(cases);
  add_dns_cases(cases);
  add_corridor_cases(cases);
  add_corridor_tls_cases(cases);
  add_window_cases(cases);
  add_surface_cases(cases);
  add_hardening_cases(cases);
  add_resource_cases(cases);  // last: exhaustion must not disturb the other cases
  return cases;
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

std::vector<CaseResult> run_cases(Context& ctx, const std::vector<Case>& cases) {
  std::vector<CaseResult> results;
  for (const Case& c : cases) {
    if (!selected(ctx.opts, c.id)) continue;
    const std::int64_t start = now_ms();
    const Outcome o = c.run(ctx);
    CaseResult r;
    r.id = c.id;
    r.group = c.group;
    r.verdict = o.verdict;
    r.evidence = bound_evidence(o.evidence);
    r.duration_ms = now_ms() - start;
    if (ctx.opts.progress) {
      std::fprintf(stderr, "case %s %s\n", r.id.c_str(),
                   std::string(verdict_word(r.verdict)).c_str());
      std::fflush(stderr);
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace escape
