// Pure pieces of the escape runner: the binary's report in, merged verdicts and host judgements
// out. No process, no Docker (escape_runner_test.cc covers them without an engine).
#include "controller/escape_runner.h"

#include <charconv>
#include <map>
#include <set>

#include "escape-suite/report.h"
#include "policy/number.h"

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
  // Everything here comes out of the space: any surprise refuses the whole report (a refused
  // report is a FAIL of host.suite-report, never `internal`).
  auto refuse = [](const std::string& why) { return fail(Code::kCommandFailed, "escape-suite report refused: " + why); };
  if (json_text.size() > kMaxSuiteReport) return refuse("over 8 MiB");
  const json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return refuse("not a JSON object");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "suite" && it.key() != "version" && it.key() != "summary" &&
        it.key() != "cases") {
      return refuse("unknown member " + escape::printable(it.key().substr(0, 40)));
    }
  }
  if (!doc.contains("suite") || !doc["suite"].is_string() ||
      doc["suite"].get<std::string>() != "escape-suite") {
    return refuse("not an escape-suite report (suite)");
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer() ||
      doc["version"].get<std::int64_t>() != 1) {
    return refuse("version is not 1");
  }
  if (doc.contains("summary") && !doc["summary"].is_object()) return refuse("summary is not an object");
  if (!doc.contains("cases") || !doc["cases"].is_array()) return refuse("no cases array");
  if (doc["cases"].size() > kMaxSuiteCases) return refuse("too many cases");
  std::vector<CaseResult> out;
  for (const json& c : doc["cases"]) {
    if (!c.is_object()) return refuse("a case is not an object");
    for (auto it = c.begin(); it != c.end(); ++it) {
      if (it.key() != "id" && it.key() != "group" && it.key() != "verdict" &&
          it.key() != "evidence" && it.key() != "duration_ms") {
        return refuse("a case has an unknown member " + escape::printable(it.key().substr(0, 40)));
      }
    }
    if (!c.contains("id") || !c["id"].is_string() || !c.contains("verdict") ||
        !c["verdict"].is_string() || !c.contains("evidence") || !c["evidence"].is_string() ||
        (c.contains("group") && !c["group"].is_string()) ||
        (c.contains("duration_ms") && !c["duration_ms"].is_number_integer())) {
      return refuse("a case lacks id, verdict or evidence, or a field has the wrong type");
    }
    CaseResult r;
    r.id = c["id"].get<std::string>();
    if (!is_case_id(r.id)) return refuse("case id " + escape::printable(r.id.substr(0, 60)) + " is not a case id");
    const std::string group = r.id.substr(0, r.id.find('.'));
    if (c.contains("group") && c["group"].get<std::string>() != group) return refuse("case " + r.id + ": group differs from its id");
    r.group = group;
    if (!verdict_from_word(c["verdict"].get<std::string>(), r.verdict)) return refuse("case " + r.id + ": unknown verdict");
    r.evidence = escape::bound_evidence(c["evidence"].get<std::string>());
    if (c.contains("duration_ms")) r.duration_ms = c["duration_ms"].get<std::int64_t>();
    out.push_back(std::move(r));
  }
  return out;
}

bool is_case_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.find('.') == std::string_view::npos || id.front() == '.') return false;
  for (const char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_')) return false;
  }
  return true;
}

std::vector<std::string> listed_ids(std::string_view list_text) {
  // format_list: each case starts a line with its id; its details are indented; the last line
  // counts them ("N cases").
  std::vector<std::string> ids;
  std::size_t start = 0;
  while (start < list_text.size()) {
    std::size_t end = list_text.find('\n', start);
    if (end == std::string_view::npos) end = list_text.size();
    const std::string_view line = list_text.substr(start, end - start);
    if (is_case_id(line)) ids.emplace_back(line);
    start = end + 1;
  }
  return ids;
}

Result<void> check_reported_ids(const std::vector<CaseResult>& reported, const std::vector<std::string>& expected) {
  // The host ran the same binary with --list: the report must name exactly those cases, once each.
  std::set<std::string> want(expected.begin(), expected.end()), seen;
  for (const CaseResult& r : reported) {
    if (want.count(r.id) == 0) return fail(Code::kCommandFailed, "escape-suite report refused: case " + r.id + " is not one the binary lists");
    if (!seen.insert(r.id).second) return fail(Code::kCommandFailed, "escape-suite report refused: case " + r.id + " reported twice");
  }
  if (seen.size() != want.size()) {
    return fail(Code::kCommandFailed, "escape-suite report refused: " + std::to_string(seen.size()) + " cases reported, the binary lists " +
                                          std::to_string(want.size()));
  }
  return {};
}

bool refusal_seen(std::string_view evidence) {
  // The binary's INCONCLUSIVE texts that are not "refused, but the control failed" (cases_corridor.cc).
  for (std::string_view word :
       {"no answer", "gatekeeper busy", "no targets", "has no address", "passed no", "bad --"}) {
    if (contains(evidence, word)) return false;
  }
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
  if (log_bytes > kLogCapBytes + kLogCapSlack) {
    return escape::fail(size + ", over the 10 MiB cap (Docker `local` driver, max-size=10m max-file=1)");
  }
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

void StreamFinder::feed(std::string_view bytes) {
  if (found_ || needle_.empty()) {
    found_ = true;
    return;
  }
  std::string window = carry_;
  window.append(bytes);
  if (window.find(needle_) != std::string::npos) {
    found_ = true;
    return;
  }
  const std::size_t keep = needle_.size() - 1;
  carry_ = window.size() > keep ? window.substr(window.size() - keep) : window;
}

Result<std::vector<SpaceProcess>> parse_top(std::string_view text) {
  std::vector<SpaceProcess> out;
  std::size_t start = text.find('\n');  // the header line
  if (start == std::string_view::npos) return fail(Code::kCommandFailed, "docker top: no header line");
  ++start;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    SpaceProcess p;
    std::size_t i = 0;
    auto field = [&](long& value) {
      while (i < line.size() && line[i] == ' ') ++i;
      const std::size_t b = i;
      while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
      if (i == b || i - b > 9) return false;
      const std::optional<long> parsed = policy::parse_number<long>(line.substr(b, i - b));
      if (!parsed) return false;
      value = *parsed;
      return i < line.size() && line[i] == ' ';
    };
    if (!field(p.pid) || !field(p.ppid)) return fail(Code::kCommandFailed, "docker top: a line without pid and ppid");
    while (i < line.size() && line[i] == ' ') ++i;
    p.args = std::string(line.substr(i, 200));
    while (!p.args.empty() && p.args.back() == ' ') {
      p.args.pop_back();  // Podman pads its last column
    }
    if (out.size() == kMaxTopProcesses) return fail(Code::kCommandFailed, "docker top: more than 4096 processes");
    out.push_back(std::move(p));
  }
  return out;
}

Outcome judge_quiet(const std::vector<std::vector<SpaceProcess>>& samples, std::string_view suite_path, long init_pid,
                    std::string_view main_args) {
  if (samples.empty()) return escape::inconclusive("no process list of the space was taken during the run");
  std::set<long> main_pids;  // the command as the first sample saw it
  for (const SpaceProcess& p : samples.front()) {
    if (p.ppid == init_pid && p.args == main_args) main_pids.insert(p.pid);
  }
  std::map<long, std::string> others;
  for (const std::vector<SpaceProcess>& sample : samples) {
    std::map<long, const SpaceProcess*> by_pid;
    for (const SpaceProcess& p : sample) by_pid[p.pid] = &p;
    for (const SpaceProcess& p : sample) {
      if (p.pid == init_pid || main_pids.count(p.pid) > 0) continue;
      // Walk up to the root inside the container: ours when it is an exec'd suite process.
      const SpaceProcess* top = &p;
      for (std::size_t hops = 0; hops < sample.size(); ++hops) {
        auto up = by_pid.find(top->ppid);
        if (up == by_pid.end()) break;
        top = up->second;
      }
      const bool exec_root = by_pid.count(top->ppid) == 0 && top->pid != init_pid;
      const bool suite = exec_root && top->args.rfind(std::string(suite_path), 0) == 0 &&
                         (top->args.size() == suite_path.size() || top->args[suite_path.size()] == ' ');
      if (!suite) others.emplace(p.pid, p.args);
    }
  }
  std::string ev = std::to_string(samples.size()) + " process lists taken from the host during the run";
  if (others.empty()) {
    return escape::pass(ev + "; beside the suite only the init (pid " + std::to_string(init_pid) + ") and its command '" +
                        std::string(main_args) + "' ran");
  }
  std::string names;
  for (const auto& [pid, args] : others) {
    if (names.size() > 300) {
      names += " ...";
      break;
    }
    names += " pid " + std::to_string(pid) + " '" + args + "';";
  }
  return escape::inconclusive(std::to_string(others.size()) + " other process(es) ran in the space during the run, so its "
                              "verdicts are not about a space nobody else acts in:" + names + " (" + ev + ")");
}

escape::Boundary boundary_from_policy(const std::string& space_id, const std::string& gatekeeper,
                                      const std::string& inner_network, const std::string& outer_network,
                                      std::string_view policy_json) {
  escape::Boundary b;
  b.space = space_id;
  b.gatekeeper = gatekeeper;
  b.inner_network = inner_network;
  b.outer_network = outer_network;
  if (policy_json.size() > kMaxSuiteReport) return b;
  const json doc = json::parse(policy_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return b;
  if (doc.contains("mode") && doc["mode"].is_string()) {
    const std::string mode = doc["mode"].get<std::string>();
    if (mode == "allowlist" || mode == "open") b.mode = mode;
  }
  auto strings = [&doc](const char* key, std::vector<std::string>& out) {
    if (!doc.contains(key) || !doc[key].is_array()) return;
    for (const json& v : doc[key]) {
      if (v.is_string() && out.size() < escape::kMaxContextItems) out.push_back(v.get<std::string>().substr(0, escape::kMaxContextText));
    }
  };
  strings("domains", b.allowed);
  strings("grants", b.grants);
  return b;
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
  if (c.cpu_limit > 0) add("--cpu-limit", std::to_string(c.cpu_limit));
  if (c.home_quota > 0) add("--home-quota", std::to_string(c.home_quota));
  add("--log-flood-mib", std::to_string(c.log_flood_mib));
  for (const std::string& p : c.probe_addresses) add("--probe-address", p);
  for (const std::string& p : c.other_space) add("--other-space", p);
  for (const std::string& g : c.only) add("--only", g);
  if (c.exhaustion) a.emplace_back("--allow-exhaustion");
  if (c.unsafe_privileged) a.emplace_back("--unsafe-privileged");
  if (c.gateway_unowned) a.emplace_back("--gateway-unowned");
  if (c.progress) a.emplace_back("--progress");
  return a;
}

void ProgressLines::feed(
    std::string_view bytes,
    const std::function<void(const std::string& id, const std::string& verdict)>& seen) {
  for (const char c : bytes) {
    if (c != '\n') {
      if (carry_.size() <= kMaxProgressLine) carry_ += c;
      continue;
    }
    const std::string line = std::move(carry_);
    carry_.clear();
    if (line.size() > kMaxProgressLine || line.rfind("case ", 0) != 0) continue;
    const std::size_t space = line.find(' ', 5);
    if (space == std::string::npos) continue;
    const std::string id = line.substr(5, space - 5), verdict = line.substr(space + 1);
    if (!is_case_id(id) || expected_.count(id) == 0 || reported_.count(id) != 0) continue;
    if (verdict != "PASS" && verdict != "FAIL" && verdict != "INCONCLUSIVE" && verdict != "N/A") {
      continue;
    }
    reported_.insert(id);
    seen(id, verdict);
  }
}

}  // namespace controller
