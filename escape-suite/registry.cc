#include <algorithm>
#include <cstdio>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {

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
