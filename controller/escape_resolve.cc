#include "controller/escape_resolve.h"

#include <algorithm>

#include "escape-suite/resolve_names.h"

namespace controller {

using escape::CaseResult;
using escape::ResolveCase;
using escape::ResolveExtra;
using escape::Verdict;
using nlohmann::json;

namespace {

bool holds(const std::vector<std::string>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "no record" : out;
}

const ResolveCase* resolve_case(std::string_view id) {
  for (const ResolveCase& r : escape::kResolveCases)
    if (id == r.id) return &r;
  return nullptr;
}

}  // namespace

void fill_test_resolver(TestResolver& resolver, const std::string& upstream_alias,
                        const std::string& upstream_ip, const std::string& gatekeeper_own_ip,
                        const std::string& host_ip) {
  resolver.set(upstream_alias, {{upstream_ip}}, {});
  for (const ResolveCase& r : escape::kResolveCases) {
    std::string extra;
    switch (r.extra) {
      case ResolveExtra::kLiteral:
        extra = r.address;
        break;
      case ResolveExtra::kGatekeeperOwn:
        extra = gatekeeper_own_ip;
        break;
      case ResolveExtra::kHost:
        extra = host_ip;
        break;
    }
    // The public answer first: with the check gone, the gatekeeper dials the test upstream.
    const bool v6 = extra.find(':') != std::string::npos;
    resolver.set(
        r.name,
        {v6 ? std::vector<std::string>{upstream_ip} : std::vector<std::string>{upstream_ip, extra}},
        v6 ? std::vector<std::string>{extra} : std::vector<std::string>{});
  }
  resolver.set(escape::kRebindName, {{upstream_ip}, {"127.0.0.2"}}, {});
}

std::vector<std::string> twin_allowlist(const std::string& upstream_alias) {
  std::vector<std::string> out = {upstream_alias, escape::kRebindName};
  for (const ResolveCase& r : escape::kResolveCases) out.emplace_back(r.name);
  return out;
}

std::map<std::string, std::vector<std::string>> corridor_decisions(const json& journal) {
  std::map<std::string, std::vector<std::string>> out;
  if (!journal.is_object() || !journal.contains("records") || !journal["records"].is_array())
    return out;
  for (const json& r : journal["records"]) {
    if (!r.is_object() || !r.contains("host") || !r["host"].is_string() ||
        !r.contains("decision") || !r["decision"].is_string())
      continue;
    if (r.value("listener", std::string()) != "corridor") continue;
    std::vector<std::string>& list = out[r["host"].get<std::string>()];
    const std::string decision = r["decision"].get<std::string>();
    if (!holds(list, decision)) list.push_back(decision);
  }
  return out;
}

bool is_resolution_case(std::string_view id) {
  return resolve_case(id) != nullptr || id == escape::kRebindCase;
}

std::string resolution_name(std::string_view id) {
  if (const ResolveCase* r = resolve_case(id); r != nullptr) return r->name;
  return id == escape::kRebindCase ? escape::kRebindName : "";
}

CaseResult judge_resolution(const CaseResult& merged, const CaseResult* twin,
                            const std::vector<std::string>& decisions,
                            std::pair<int, int> questions) {
  CaseResult out = merged;
  const std::string seen = "twin journal: " + joined(decisions) + "; twin resolver asked A " +
                           std::to_string(questions.first) + ", AAAA " +
                           std::to_string(questions.second);
  auto with = [&](Verdict v, const std::string& why) {
    out.verdict = v;
    out.evidence = escape::bound_evidence(why + seen + " || " + merged.evidence);
    return out;
  };
  if (holds(decisions, "allow") && merged.id != escape::kRebindCase)
    return with(Verdict::kFail,
                "the twin's gatekeeper allowed a name that answered a blocked address; ");
  if (merged.verdict != Verdict::kPass) return with(merged.verdict, "");
  if (questions.first + questions.second == 0)
    return with(Verdict::kInconclusive,
                "the twin's test resolver was never asked, so no address was checked; ");
  if (merged.id == escape::kRebindCase) {
    // Both answers must have been seen and judged: one dialled (echoed), one refused.
    const bool both_outcomes = twin != nullptr &&
                               twin->evidence.find("200 echoed") != std::string::npos &&
                               twin->evidence.find("403") != std::string::npos;
    if (both_outcomes && holds(decisions, "allow") && holds(decisions, "deny:blocked-address") &&
        questions.first >= 2)
      return with(Verdict::kPass, "public answer dialled and echoed, loopback answer refused; ");
    return with(Verdict::kInconclusive,
                "the rebinding was not shown (both a dialled public answer and a refused private "
                "one are needed); ");
  }
  if (!holds(decisions, "deny:blocked-address"))
    return with(Verdict::kInconclusive, "the 403 did not come from the address check; ");
  return with(Verdict::kPass, "refused by the address check; ");
}

}  // namespace controller
