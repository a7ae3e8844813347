// Pure pieces of the escape runner: the binary's report in, merged verdicts and host judgements
// out. No process, no Docker (escape_runner_test.cc covers them without an engine).
#include "controller/escape_runner.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace controller {

using escape::CaseResult;
using escape::Outcome;
using escape::Verdict;
using nlohmann::json;

namespace {

bool verdict_from_word(const std::string& word, Verdict& out) {
  for (const Verdict v : {Verdict::kPass, Verdict::kFail, Verdict::kInconclusive, Verdict::kNotApplicable}) {
    if (escape::verdict_word(v) == word) {
      out = v;
      return true;
    }
  }
  return false;
}

bool contains(std::string_view text, std::string_view word) { return text.find(word) != std::string_view::npos; }

// One "Name:\tvalue" line of /proc/<pid>/status.
std::string status_field(std::string_view status, std::string_view name) {
  const std::string key = "\n" + std::string(name) + ":";
  std::string padded = "\n" + std::string(status);
  const std::size_t at = padded.find(key);
  if (at == std::string::npos) return {};
  std::size_t i = at + key.size();
  while (i < padded.size() && (padded[i] == ' ' || padded[i] == '\t')) ++i;
  const std::size_t end = padded.find('\n', i);
  return padded.substr(i, end == std::string::npos ? std::string::npos : end - i);
}

}  // namespace

Result<std::vector<CaseResult>> parse_suite_report(std::string_view json_text) {
  if (json_text.size() > kMaxSuiteReport) return fail(Code::kOutputTooLarge, "escape-suite report: over 8 MiB");
  const json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail(Code::kInternal, "escape-suite report: not a JSON object");
  if (doc.value("suite", "") != "escape-suite" || !doc.contains("cases") || !doc["cases"].is_array())
    return fail(Code::kInternal, "escape-suite report: not an escape-suite report (no suite/cases)");
  if (doc["cases"].size() > kMaxSuiteCases) return fail(Code::kInternal, "escape-suite report: too many cases");
  std::vector<CaseResult> out;
  for (const json& c : doc["cases"]) {
    if (!c.is_object() || !c.contains("id") || !c["id"].is_string() || !c.contains("verdict") ||
        !c["verdict"].is_string() || !c.contains("evidence") || !c["evidence"].is_string())
      return fail(Code::kInternal, "escape-suite report: a case lacks id, verdict or evidence");
    CaseResult r;
    r.id = c["id"].get<std::string>();
    if (r.id.empty() || r.id.size() > 128) return fail(Code::kInternal, "escape-suite report: bad case id");
    r.group = c.value("group", r.id.substr(0, r.id.find('.')));
    if (!verdict_from_word(c["verdict"].get<std::string>(), r.verdict))
      return fail(Code::kInternal, "escape-suite report: case " + r.id + ": unknown verdict");
    r.evidence = escape::bound_evidence(c["evidence"].get<std::string>());
    if (c.contains("duration_ms") && c["duration_ms"].is_number_integer()) r.duration_ms = c["duration_ms"].get<std::int64_t>();
    out.push_back(std::move(r));
  }
  return out;
}

bool refusal_seen(std::string_view evidence) {
  // The binary's INCONCLUSIVE texts that are not "refused, but the control failed" (cases_corridor.cc).
  for (std::string_view word : {"no answer", "gatekeeper busy", "no targets", "has no address", "passed no", "bad --"})
    if (contains(evidence, word)) return false;
  return contains(evidence, " -> 403") || contains(evidence, " -> 400") || contains(evidence, " -> 404");
}

bool is_twin_case(std::string_view id) { return id.rfind("corridor.", 0) == 0 || id.rfind("window.", 0) == 0; }

CaseResult merge_twin_result(const CaseResult& release, const CaseResult* twin) {
  CaseResult m = release;
  const std::string rel = "release gatekeeper: " + release.evidence;
  if (twin == nullptr) {
    m.verdict = Verdict::kInconclusive;
    m.evidence = escape::bound_evidence("no test-gatekeeper twin ran, so no positive control: " + rel);
    return m;
  }
  const std::string tw = "test-gatekeeper twin: " + twin->evidence;
  if (release.id == "corridor.allowed-target-works") {
    // The positive control itself: only the twin can open a tunnel to a 198.18/15 upstream.
    m.verdict = twin->verdict;
    m.evidence = escape::bound_evidence(tw);
    return m;
  }
  if (release.verdict == Verdict::kFail) {
    m.evidence = escape::bound_evidence(rel);
    return m;
  }
  if (twin->verdict == Verdict::kFail) {
    m.verdict = Verdict::kFail;
    m.evidence = escape::bound_evidence(tw);
    return m;
  }
  const bool release_refused = release.verdict == Verdict::kPass ||
                               (release.verdict == Verdict::kInconclusive && refusal_seen(release.evidence));
  if (twin->verdict == Verdict::kPass && release_refused) {
    m.verdict = Verdict::kPass;
    m.evidence = escape::bound_evidence(tw + " || " + rel);
    return m;
  }
  if (twin->verdict == Verdict::kNotApplicable && release.verdict == Verdict::kNotApplicable) return m;
  m.verdict = Verdict::kInconclusive;
  m.evidence = escape::bound_evidence(rel + " || " + tw);
  return m;
}

Outcome judge_gatekeeper_status(std::string_view status) {
  const std::string seccomp = status_field(status, "Seccomp");
  const std::string nnp = status_field(status, "NoNewPrivs");
  if (seccomp.empty() || nnp.empty()) return escape::inconclusive("status has no Seccomp/NoNewPrivs line");
  std::string ev = "Seccomp " + seccomp + ", NoNewPrivs " + nnp;
  std::string bad;
  if (seccomp != "2") bad += "Seccomp is " + seccomp + " (2 = filter); ";
  if (nnp != "1") bad += "NoNewPrivs is " + nnp + "; ";
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    const std::string v = status_field(status, set);
    // CapAmb is absent on kernels before 4.3; an absent set is not a held capability.
    if (!v.empty() && v != "0000000000000000") bad += std::string(set) + " is " + v + "; ";
  }
  const std::string uid = status_field(status, "Uid");
  if (uid.rfind("65532", 0) != 0 || contains(uid, "\t0") || contains(uid, " 0")) bad += "Uid is " + uid + "; ";
  if (!bad.empty()) return escape::fail(bad + ev);
  return escape::pass(ev + ", every capability set 0, uid 65532");
}

Outcome judge_log_size(std::uint64_t log_bytes, bool flood_delivered, bool flood_seen_in_log) {
  const std::string size = std::to_string(log_bytes) + " bytes of log";
  if (log_bytes > kLogCapBytes + kLogCapSlack)
    return escape::fail(size + ", over the 10 MiB cap (Docker `local` driver, max-size=10m max-file=1)");
  if (!flood_delivered) return escape::inconclusive(size + "; control: res.log-flood-delivered did not pass, nothing to cap");
  if (!flood_seen_in_log) return escape::inconclusive(size + "; control: the flood's lines are not in the log (delivered elsewhere?)");
  return escape::pass(size + " after the flood (cap 10 MiB)");
}

CaseResult host_result(std::string id, const Outcome& outcome, std::int64_t duration_ms) {
  CaseResult r;
  r.group = id.substr(0, id.find('.'));
  r.id = std::move(id);
  r.verdict = outcome.verdict;
  r.evidence = escape::bound_evidence(outcome.evidence);
  r.duration_ms = duration_ms;
  return r;
}

std::vector<std::string> suite_argv(const SuiteControls& c) {
  std::vector<std::string> a = {"--format", "json", "--gatekeeper", "gatekeeper"};
  auto add = [&](const char* flag, const std::string& value) {
    if (!value.empty()) a.insert(a.end(), {flag, value});
  };
  add("--space-id", c.space_id);
  add("--allowed-target", c.allowed_target);
  add("--window-base", c.window_base);
  add("--window-grant", c.window_grant);
  // Digests only: argv is readable in every /proc/<pid>/cmdline of the space.
  add("--secret-sha256", c.secret_sha256);
  add("--control-sha256", c.control_sha256);
  if (c.pids_limit > 0) add("--pids-limit", std::to_string(c.pids_limit));
  if (c.memory_limit > 0) add("--memory-limit", std::to_string(c.memory_limit));
  add("--log-flood-mib", std::to_string(c.log_flood_mib));
  for (const std::string& p : c.probe_addresses) add("--probe-address", p);
  for (const std::string& p : c.other_space) add("--other-space", p);
  for (const std::string& g : c.only) add("--only", g);
  if (c.exhaustion) a.emplace_back("--allow-exhaustion");
  if (c.unsafe_privileged) a.emplace_back("--unsafe-privileged");
  if (c.gateway_unowned) a.emplace_back("--gateway-unowned");
  return a;
}

}  // namespace controller
