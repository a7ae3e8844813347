// SARIF 2.1.0 writer (OASIS Static Analysis Results Interchange Format). A case is a rule: it
// names a boundary the space must hold. A result exists only where the boundary was not proved:
// FAIL is level "error", INCONCLUSIVE level "warning" (the attempt was not shown to be refused,
// which a reviewer must treat as open). PASS and N/A leave no result; their counts are in the
// run's properties. Strings go through the JSON quoting of policy/ (\u escapes for everything
// outside printable ASCII, U+FFFD for invalid UTF-8), so the file is ASCII and always valid JSON.
#include <map>
#include <string_view>

#include "escape-suite/catalogue.h"
#include "escape-suite/report.h"
#include "escape-suite/report_rich.h"
#include "policy/json.h"

namespace escape {
namespace {

// The schema the file claims: the OASIS 2.1.0 schema (with errata 01).
constexpr std::string_view kSarifSchema =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

std::string quoted(std::string_view s) {
  std::string out;
  policy::json::append_quoted(out, s.substr(0, kMaxEvidenceBytes + 64));
  return out;
}

std::string text_message(std::string_view s) { return "{\"text\":" + quoted(s) + "}"; }

// Cases the binary defines carry threat, technique and proof; host-side checks of the runner and
// ids the registry does not know (an older binary) get a plain description.
struct RuleText {
  std::string short_text, full_text, help_text;
};

RuleText rule_text(const std::string& id) {
  if (const CaseText* c = find_case_text(id); c != nullptr) {
    return {std::string(c->threat), std::string(c->technique),
            "Proof of \"cannot\": " + std::string(c->proof)};
  }
  if (id.rfind("host.", 0) == 0) {
    return {"Host-side check of " + id, "Run by spacectl escape-test from outside the space.",
            "The evidence says what the host saw."};
  }
  return {"Escape case " + id, "A case this version of the report writer does not describe.",
          "See the evidence."};
}

std::string string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size() && i < kMaxContextItems; ++i) {
    if (i > 0) out += ",";
    out += quoted(items[i].substr(0, kMaxContextText));
  }
  return out + "]";
}

std::string boundary_object(const Boundary& b) {
  return "{\"space\":" + quoted(b.space.substr(0, kMaxContextText)) +
         ",\"gatekeeper\":" + quoted(b.gatekeeper.substr(0, kMaxContextText)) +
         ",\"innerNetwork\":" + quoted(b.inner_network.substr(0, kMaxContextText)) +
         ",\"outerNetwork\":" + quoted(b.outer_network.substr(0, kMaxContextText)) +
         ",\"corridorPort\":" + std::to_string(b.corridor_port) +
         ",\"windowPort\":" + std::to_string(b.window_port) +
         ",\"controlPort\":" + std::to_string(b.control_port) +
         ",\"mode\":" + quoted(b.mode.substr(0, kMaxContextText)) +
         ",\"allowed\":" + string_array(b.allowed) + ",\"grants\":" + string_array(b.grants) + "}";
}

}  // namespace

std::string format_sarif(const std::vector<CaseResult>& results, const ReportContext& context) {
  std::size_t pass = 0, failed = 0, inconclusive = 0, not_applicable = 0;
  std::string rules, found;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    const RuleText t = rule_text(r.id);
    if (i > 0) rules += ",";
    rules += "{\"id\":" + quoted(r.id) + ",\"shortDescription\":" + text_message(t.short_text) +
             ",\"fullDescription\":" + text_message(t.full_text) + ",\"help\":" + text_message(t.help_text) +
             ",\"properties\":{\"group\":" + quoted(r.group) + "}}";
    std::string level;
    switch (r.verdict) {
      case Verdict::kPass: ++pass; continue;
      case Verdict::kNotApplicable: ++not_applicable; continue;
      case Verdict::kFail: ++failed; level = "error"; break;
      case Verdict::kInconclusive: ++inconclusive; level = "warning"; break;
    }
    if (!found.empty()) found += ",";
    const std::string where = context.boundary.space.empty() ? std::string("space") : "space " + context.boundary.space;
    found += "{\"ruleId\":" + quoted(r.id) + ",\"ruleIndex\":" + std::to_string(i) + ",\"kind\":\"fail\",\"level\":\"" +
             level + "\",\"message\":" + text_message(std::string(verdict_word(r.verdict)) + ": " + r.evidence) +
             ",\"locations\":[{\"logicalLocations\":[{\"name\":" + quoted(r.id) + ",\"fullyQualifiedName\":" +
             quoted(where.substr(0, kMaxContextText) + "/" + r.id) + ",\"kind\":\"test\"}]}]" +
             ",\"properties\":{\"verdict\":" + quoted(verdict_word(r.verdict)) + ",\"group\":" + quoted(r.group) +
             ",\"durationMs\":" + std::to_string(r.duration_ms) + "}}";
  }

  std::string properties = "{\"summary\":{\"total\":" + std::to_string(results.size()) +
                           ",\"pass\":" + std::to_string(pass) + ",\"fail\":" + std::to_string(failed) +
                           ",\"inconclusive\":" + std::to_string(inconclusive) +
                           ",\"notApplicable\":" + std::to_string(not_applicable) + "}";
  if (context.has_boundary) properties += ",\"boundary\":" + boundary_object(context.boundary);
  if (!context.host_facts.empty()) {
    properties += ",\"hostFacts\":{";
    std::map<std::string, bool> seen;  // a JSON object keeps one value per name: the first wins
    bool first = true;
    for (std::size_t i = 0; i < context.host_facts.size() && i < kMaxContextItems; ++i) {
      const std::string name = context.host_facts[i].first.substr(0, kMaxContextText);
      if (!seen.emplace(name, true).second) continue;
      if (!first) properties += ",";
      first = false;
      properties += quoted(name) + ":" + quoted(context.host_facts[i].second.substr(0, kMaxContextText));
    }
    properties += "}";
  }
  if (!context.residuals.empty()) properties += ",\"residuals\":" + string_array(context.residuals);
  properties += "}";

  std::string driver = "{\"name\":\"escape-suite\"";
  if (!context.tool_version.empty()) driver += ",\"version\":" + quoted(context.tool_version.substr(0, kMaxContextText));
  driver += ",\"rules\":[" + rules + "]}";

  std::string out = "{\"version\":\"2.1.0\",\"$schema\":\"" + std::string(kSarifSchema) + "\",\"runs\":[{";
  out += "\"tool\":{\"driver\":" + driver + "}";
  // The run happened; whether the space held is in the results, not in executionSuccessful.
  out += ",\"invocations\":[{\"executionSuccessful\":" + std::string(results.empty() ? "false" : "true") + "}]";
  out += ",\"results\":[" + found + "]";
  out += ",\"properties\":" + properties + "}]}\n";
  return out;
}

}  // namespace escape
