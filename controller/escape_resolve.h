// The escape runner's resolution cases (escape-suite/resolve_names.h): what the test resolver
// answers for the twin, the twin's allowlist, and the host-side judgement that turns a twin's 403
// into a PASS only when the check the case names was reached: the twin's resolver was asked for
// the name and the twin's journal refused it as deny:blocked-address (never allow). A 403 for any
// other reason (unresolved, not on the allowlist) proves nothing about the address check, so the
// case is INCONCLUSIVE; an allow in the journal is a FAIL.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/escape_dns.h"
#include "escape-suite/report.h"

namespace controller {

// Every name of resolve_names.h, the rebinding name, and `upstream_alias` → the test upstream.
void fill_test_resolver(TestResolver& resolver, const std::string& upstream_alias,
                        const std::string& upstream_ip, const std::string& gatekeeper_own_ip,
                        const std::string& host_ip);

// The twin's allowlist: the upstream's alias and every name above.
std::vector<std::string> twin_allowlist(const std::string& upstream_alias);

// The journal's corridor decisions per host (GET /journal's "records").
std::map<std::string, std::vector<std::string>> corridor_decisions(const nlohmann::json& journal);

bool is_resolution_case(std::string_view id);
// The name a resolution case CONNECTs to ("" for any other id).
std::string resolution_name(std::string_view id);

// `merged`: the release/twin merge of the case; `twin`: the twin's own result (null: none ran).
escape::CaseResult judge_resolution(const escape::CaseResult& merged,
                                    const escape::CaseResult* twin,
                                    const std::vector<std::string>& decisions,
                                    std::pair<int, int> questions);

}  // namespace controller
