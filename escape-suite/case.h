// The vocabulary of the escape suite: a case, its verdict and the run context it reads.
// A case is an attack tried from inside a live space. It passes only when the attempt fails in the
// way its `proof` names; a refusal that could also come from a broken set-up (no network at all,
// no corridor) needs a positive control in the same run, and without one the case is INCONCLUSIVE,
// never PASS (docs/reference-behaviour.md#escape-suite-cases, apple/container#2062).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escape-suite/net.h"
#include "escape-suite/options.h"

namespace escape {

// The first enumerator is the zero value: a verdict nobody set proves nothing (smokescreen's
// `Allow = iota` hazard, where the zero value of a decision was the permissive one).
enum class Verdict : std::uint8_t { kInconclusive, kPass, kFail, kNotApplicable };

std::string_view verdict_word(Verdict v);  // PASS, FAIL, INCONCLUSIVE, N/A

// Evidence is hostile-ish text (paths, answers from the corridor, readlink targets): bounded so a
// report line stays readable and a huge answer cannot blow up the report.
inline constexpr std::size_t kMaxEvidenceBytes = 480;

struct Outcome {
  Verdict verdict = Verdict::kInconclusive;  // zero value: nothing was proved
  std::string evidence;
};

Outcome pass(std::string evidence);
Outcome fail(std::string evidence);
Outcome inconclusive(std::string evidence);
Outcome not_applicable(std::string reason);

// Cuts `text` to kMaxEvidenceBytes (marking the cut); bytes are kept, formats escape them.
std::string bound_evidence(std::string_view text);

struct Context;

struct Case {
  std::string id;         // stable: `group.what`, used by --only and by reports
  std::string group;      // identity, filesystem, proc-sys, devices, syscalls, network, dns, ...
  std::string threat;     // what the attacker wants
  std::string technique;  // what the case does
  std::string proof;      // what outcome proves "cannot"
  std::function<Outcome(Context&)> run;
};

struct CaseResult {
  std::string id;
  std::string group;
  Verdict verdict = Verdict::kInconclusive;
  std::string evidence;
  std::int64_t duration_ms = 0;
};

// A positive control computed once per run and shared by the cases that lean on it.
struct Control {
  bool works = false;
  std::string evidence;
};

struct Context {
  Options opts;
  // Descriptors open when main() started (before the suite opened anything): fd -> readlink.
  std::vector<std::pair<int, std::string>> startup_fds;
  // Lazily computed controls (see controls.cc).
  std::optional<Control> corridor_control;   // CONNECT --allowed-target answered 200
  std::optional<Control> tcp_control;        // TCP to the corridor port connected
  std::optional<Control> dns_control;        // the embedded resolver answers `gatekeeper`
  std::optional<std::string> gatekeeper_ip;  // empty string: could not be resolved
  // Verdicts of the off-link probes (cases_network.cc), run together once: "tcp 1.2.3.4:443" -> verdict.
  std::optional<std::map<std::string, ProbeVerdict>> offlink;
};

// Controls (controls.cc). Each returns the cached result after the first call.
const Control& corridor_control(Context& ctx);
const Control& tcp_control(Context& ctx);
const Control& dns_control(Context& ctx);
// The gatekeeper's inner address as text ("" when --gatekeeper is a name that did not resolve).
const std::string& gatekeeper_ip(Context& ctx);
// Sends `CONNECT <authority> HTTP/1.1` to the corridor and reads the answer's head.
HttpReply corridor_connect(Context& ctx, std::string_view authority);
// True when the refusal carries no reason: no body and no word that names why (the reason goes to
// the journal only; docs/reference-behaviour.md#corridor-refusals).
bool refusal_is_generic(const HttpReply& reply);

// Appends a case; its group is the id's prefix before the first '.'.
void add_case(std::vector<Case>& out, std::string id, std::string threat, std::string technique,
              std::string proof, std::function<Outcome(Context&)> run);

// The registry: every case, in run order. Group files append their cases.
std::vector<Case> all_cases();

void add_identity_cases(std::vector<Case>& out);
void add_filesystem_cases(std::vector<Case>& out);
void add_proc_sys_cases(std::vector<Case>& out);
void add_device_cases(std::vector<Case>& out);
void add_syscall_cases(std::vector<Case>& out);
void add_network_cases(std::vector<Case>& out);
void add_dns_cases(std::vector<Case>& out);
void add_corridor_cases(std::vector<Case>& out);
void add_corridor_tls_cases(std::vector<Case>& out);
void add_window_cases(std::vector<Case>& out);
void add_leak_cases(std::vector<Case>& out);
void add_resource_cases(std::vector<Case>& out);
void add_hardening_cases(std::vector<Case>& out);  // core dumps, CPU quota (cases_hardening.cc)
void add_surface_cases(std::vector<Case>& out);    // socket families, netlink, IP types (cases_surface.cc)

// Shell-style glob (`*`, `?`) over a case id; --only takes several, comma separated.
bool glob_match(std::string_view pattern, std::string_view text);
bool selected(const Options& opts, std::string_view id);

// Runs the selected cases in order and returns one result per case.
std::vector<CaseResult> run_cases(Context& ctx, const std::vector<Case>& cases);

}  // namespace escape
