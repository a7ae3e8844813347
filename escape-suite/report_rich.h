// Rich reports (SARIF, HTML) and what they show besides the results: the boundary of the space
// the run tested, facts about the host, and residual risks. Every string here may come from the space
// (ids, names, evidence echoed back) and is escaped by each writer like evidence is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "escape-suite/case.h"
#include "escape-suite/report.h"

namespace escape {

// The space's boundary as the run saw it: drawn in the HTML report, a run property in SARIF.
// Empty strings and lists mean "not known to this writer" (the binary inside the space knows less
// than the host runner); nothing is drawn for a part that is unknown.
struct Boundary {
  std::string space;          // space id (or container name)
  std::string gatekeeper;     // the gatekeeper as the space reaches it (name or address)
  std::string inner_network;  // internal network: space <-> gatekeeper only
  std::string outer_network;  // the gatekeeper's way out
  std::uint16_t corridor_port = 3128;
  std::uint16_t window_port = 8080;
  std::uint16_t control_port = 9099;  // 127.0.0.1 inside the gatekeeper only
  std::string mode;                   // "allowlist" or "open"; empty: unknown
  std::vector<std::string> allowed;   // corridor allowlist (exact names)
  std::vector<std::string> grants;    // window grant ids (never a secret)
};

struct ReportContext {
  bool has_boundary = false;
  Boundary boundary;
  std::vector<std::pair<std::string, std::string>> host_facts;  // name, value (in order)
  std::vector<std::string> residuals;  // risks the run cannot rule out, one sentence each
  std::string tool_version;            // version of the tool that wrote the report
};

// Bounds applied by every rich writer: a hostile or broken context cannot make a report huge.
inline constexpr std::size_t kMaxContextItems = 64;     // facts, residuals, names, grants
inline constexpr std::size_t kMaxContextText = 256;     // bytes of one fact, name or sentence

// The context a run inside the space knows from its own flags (space id, gatekeeper, ports,
// allowed target); the host runner builds a fuller one.
ReportContext context_from_options(const Options& opts);

// The runner's host facts (report.h Fact) into a context: `residual.*` keys become residual
// risks ("name: sentence"), every other key a host fact, in order.
void add_facts(ReportContext& context, const std::vector<Fact>& facts);

// SARIF 2.1.0 (report_sarif.cc): one rule per case in the run, one result per FAIL (level error)
// and per INCONCLUSIVE (level warning: nothing was proved), the summary, the boundary and the host
// facts as run properties. Pure ASCII JSON.
std::string format_sarif(const std::vector<CaseResult>& results, const ReportContext& context);

// One self-contained HTML page (report_html.cc): no script, no external resource (a
// Content-Security-Policy of default-src 'none' says so to the browser), every text from the run
// HTML-escaped. Summary, the boundary drawn as inline SVG, host facts, residuals, then one
// section per group with its counts and every case with its evidence.
std::string format_html(const std::vector<CaseResult>& results, const ReportContext& context);

// Text and attribute escaping for HTML and inline SVG of printable(text): pure ASCII.
std::string html_escape(std::string_view text);

}  // namespace escape
