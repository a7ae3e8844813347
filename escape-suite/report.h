// Reports from one result list: human text, JSON, TAP 13 and JUnit XML (SARIF and HTML:
// report_rich.h). Evidence is hostile-ish (paths, answers from the gatekeeper, readlink targets of
// other processes' descriptors): every format escapes it so a report is always valid in its
// format and pure ASCII.
#pragma once

#include <string>
#include <vector>

#include "escape-suite/case.h"

namespace escape {

std::string format_text(const std::vector<CaseResult>& results);
std::string format_json(const std::vector<CaseResult>& results);
std::string format_tap(const std::vector<CaseResult>& results);
std::string format_junit(const std::vector<CaseResult>& results);
// SARIF and HTML (report_rich.h) show the context too; the overload without one shows none.
struct ReportContext;
std::string format_report(Format format, const std::vector<CaseResult>& results);
std::string format_report(Format format, const std::vector<CaseResult>& results, const ReportContext& context);

// One line of the report's host facts section: what the run stood on (engine, runc, kernel,
// cgroup version, seccomp/AppArmor, ptrace scope, the space's limits as applied) and its residuals
// (what the boundary still lets through). Keys are [a-z0-9_.-]; values are escaped per format.
struct Fact {
  std::string key, value;
};
// The same report with a host facts section: text and TAP lead with it, JSON carries
// "host_facts":{key:value}, JUnit carries <properties>.
std::string format_report(Format format, const std::vector<CaseResult>& results,
                          const std::vector<Fact>& facts);

// `--list`: one block per case with its threat, technique and proof.
std::string format_list(const std::vector<Case>& cases, const Options& opts);

// 0 when every result is PASS, or N/A with a reason; 1 otherwise (or when there are no results).
int exit_code(const std::vector<CaseResult>& results);

// Visible ASCII only: control and non-ASCII bytes become \xNN (used by text, TAP and XML).
std::string printable(std::string_view text);
// Markup text/attribute escaping of printable(text): & < > " and the apostrophe as `apostrophe`.
std::string markup_escape(std::string_view text, std::string_view apostrophe);
// XML 1.0 text/attribute escaping of printable(text).
inline std::string xml_escape(std::string_view text) { return markup_escape(text, "&apos;"); }

}  // namespace escape
