// `spacectl escape-test SPACE`: the host half of the escape suite. It prepares
// the controls the attacker binary cannot make from inside (host listeners, a second space, a test
// upstream, a grant with a fake key, allowlist switches, baits), copies the static binary into the
// space over `docker exec -i` stdin (no mount) as uid 0 into a root-owned directory the space user
// cannot change, runs it as the space's user, refuses any report that does not name exactly the
// ids the host lists from the same bytes, and adds the checks only visible from outside (inspect,
// logs, the gatekeeper's process status, the outer network, who else ran in the space).
// Everything it creates carries kLabelEscapeRun and is removed before it returns.
//
// Why two spaces: a corridor denial only counts when an allowed CONNECT answers 200 in the same
// run, and the release gatekeeper refuses every address we may use (network rule: loopback, the
// host's own addresses, networks we create). So the space under test keeps its release gatekeeper
// and runs every case; a second, throw-away "twin" space runs the corridor and window groups behind
// the gatekeeper-TEST image, where 198.18.0.0/15 counts as public, against an upstream on a bridge
// we create in that range. A corridor/window case passes only when the release gatekeeper gave the
// refusal itself and the twin proved the same refusal next to a working control
// (merge_twin_result). The twin is also the "other space" of the lateral cases.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controller/docker_cli.h"
#include "controller/place.h"
#include "escape-suite/case.h"
#include "escape-suite/report_rich.h"

namespace controller {

inline constexpr std::string_view kLabelEscapeRun = "spacectl.escape.run";  // run id (12 hex)
inline constexpr std::string_view kUpstreamAlias = "upstream.test";  // RFC 6761 .test: never public
inline constexpr std::string_view kEscapeGrant = "escape-test";
inline constexpr std::chrono::milliseconds kSuiteTimeout{20 * 60 * 1000};  // 316 cases, exhaustion
inline constexpr std::size_t kMaxSuiteReport = 8u << 20;
inline constexpr std::size_t kMaxSuiteBinary = 64u << 20;
inline constexpr std::size_t kMaxSuiteCases = 2000;
inline constexpr std::size_t kMaxProbeListeners = 16;  // the binary takes ≤ 64 --probe-address
// Docker's `local` log driver with max-size=10m, max-file=1 (spec.h); decoded `docker logs`
// output can only be smaller than the file, plus one record of slack for the line in flight.
inline constexpr std::uint64_t kLogCapBytes = 10ull << 20;
inline constexpr std::uint64_t kLogCapSlack = 64ull << 10;

struct EscapeOptions {
  std::string space_id;
  escape::Format format = escape::Format::kText;
  std::string output;               // empty: stdout
  std::vector<std::string> only;    // globs over case ids (also host.* ids)
  std::string binary;               // the static escape-suite
  std::string test_gatekeeper_image_file;  // gatekeeper-test-image.id; missing: twin uses release
  std::string place_name = "docker";       // the registry's name of the space's place
  bool exhaustion = true;           // fork bomb, OOM, disk fill, log flood (the space's own limits)
  std::uint64_t log_flood_mib = 50;
  // Test-only: weakened-space tests run as root in the space and need --unsafe-privileged.
  bool unsafe_privileged = false;
  // The state directory: the twin space is created under its own lock, held for the run, so a
  // sweep (which finds no record for it) leaves it alone. Empty: no lock (tests without one).
  std::string state_dir;
  // One line per step and per case as the suite reports it (serve's progress events); empty: none.
  std::function<void(const std::string&)> progress;
};

struct EscapeReport {
  std::vector<escape::CaseResult> results;
  escape::ReportContext context;  // boundary and host facts the SARIF and HTML reports show
  std::string text;  // formatted in options.format
  int exit_code = 1; // escape::exit_code(results)
};

// The whole run. Fails only when the run could not happen at all (space missing, binary missing);
// a broken control turns cases INCONCLUSIVE instead.
// The space's place and the twin's come from `registry` under options.place_name; a place that
// offers no PrivilegedExec (place.h) cannot run it (kPlaceUnusable).
Result<EscapeReport> run_escape_test(const class Registry& registry,
                                     const PlaceOptions& place_options,
                                     const EscapeOptions& options);

// ---- pure pieces (escape_runner_test.cc) ----

// The boundary the rich reports draw, from the space's names and the network choice and grant ids
// its gatekeeper answered on GET /policy (before the run changed them). A malformed answer leaves
// mode, names and grants empty: drawn as unknown, never guessed.
escape::Boundary boundary_from_policy(const std::string& space_id, const std::string& gatekeeper,
                                      const std::string& inner_network, const std::string& outer_network,
                                      std::string_view policy_json);

// The binary's JSON report (report.cc format_json) into results. It comes out of the space, so it
// is hostile: bounded, every member of the expected type and no other member, ids of the case-id
// alphabet only, unknown verdicts refused. A refusal is kCommandFailed (host.suite-report FAILs).
Result<std::vector<escape::CaseResult>> parse_suite_report(std::string_view json_text);

// `group.what` of [a-z0-9._-], at most 128 bytes: what a case id is (registry.cc).
bool is_case_id(std::string_view id);

// The ids of `escape-suite --list` output, in order.
std::vector<std::string> listed_ids(std::string_view list_text);

// The reported ids must be exactly the ids the host listed from the same binary run on the host:
// none unknown, none twice, none missing.
Result<void> check_reported_ids(const std::vector<escape::CaseResult>& reported, const std::vector<std::string>& expected);

// True when `evidence` shows the gatekeeper's own refusal (403/400/404) and no missing answer: an
// INCONCLUSIVE that only lacked its positive control.
bool refusal_seen(std::string_view evidence);

// A corridor/window case from the space under test (release gatekeeper) and from the twin (test
// gatekeeper): FAIL when either failed, PASS when the twin passed and the release gatekeeper
// refused itself, INCONCLUSIVE otherwise.
escape::CaseResult merge_twin_result(const escape::CaseResult& release, const escape::CaseResult* twin);

// /proc/<pid>/status of the gatekeeper, seen from the host: Seccomp 2, NoNewPrivs 1, every
// capability set 0, uid 65532.
escape::Outcome judge_gatekeeper_status(std::string_view status);

// Decoded `docker logs` size after the flood the binary reported.
escape::Outcome judge_log_size(std::uint64_t log_bytes, bool flood_delivered, bool flood_seen_in_log);

// Cases where group matters for merging.
bool is_twin_case(std::string_view id);

escape::CaseResult host_result(std::string id, const escape::Outcome& outcome, std::int64_t duration_ms = 0);

// Finds a needle in a byte stream that arrives in chunks (a match may span two chunks), keeping
// only needle-size bytes of the past: a log is read as a stream, never cut at a prefix.
class StreamFinder {
 public:
  explicit StreamFinder(std::string needle) : needle_(std::move(needle)) {}
  void feed(std::string_view bytes);
  [[nodiscard]] bool found() const { return found_; }

 private:
  std::string needle_, carry_;
  bool found_ = false;
};

// One line of `docker top CONTAINER -eo pid,ppid,args` (host pids; args are the space's words).
struct SpaceProcess {
  long pid = 0, ppid = 0;
  std::string args;
};
inline constexpr std::size_t kMaxTopProcesses = 4096;
Result<std::vector<SpaceProcess>> parse_top(std::string_view text);

// host.space-quiet: a verdict is about a space nobody else acts in. Beside the suite (an exec'd
// process whose args start with `suite_path`, and everything below it), only the container's
// init (`init_pid`) and its command (a child of init whose args are `main_args`, there from the
// first sample on) may run; anything else seen in any sample is named. INCONCLUSIVE then, since
// another process of the space user could have acted on the suite or its report.
escape::Outcome judge_quiet(const std::vector<std::vector<SpaceProcess>>& samples, std::string_view suite_path,
                            long init_pid, std::string_view main_args);

// The suite's argv (everything but the binary path), from the run's controls.
struct SuiteControls {
  std::string space_id, window_base, window_grant, allowed_target, secret_sha256, control_sha256;
  std::vector<std::string> probe_addresses, other_space;
  std::vector<std::string> only;
  std::uint64_t pids_limit = 0, memory_limit = 0, log_flood_mib = 50;
  std::uint64_t cpu_limit = 0;  // HostConfig.NanoCpus
  std::uint64_t home_quota = 0;  // each volume's size (the spacectl.space.disk label)
  bool exhaustion = false, unsafe_privileged = false;
  // verify's inner-network checks passed on the host (the bridge holds no host address), so a
  // default route via the IPAM gateway (Engine 20.10 on --internal) leads to no one.
  bool gateway_unowned = false;
  bool progress = false;  // --progress: a line per case on stderr (ProgressLines)
};
std::vector<std::string> suite_argv(const SuiteControls& controls);

// The suite's --progress lines ("case <id> <VERDICT>") out of its stderr, which comes from the
// space: hostile, so only a line naming a case id the host listed, once, with one of the four
// verdict words counts; anything else (a forged id, a repeat, an overlong line) is skipped. It
// only feeds progress events: the verdicts of the report are the JSON report's alone.
inline constexpr std::size_t kMaxProgressLine = 256;
class ProgressLines {
 public:
  explicit ProgressLines(const std::vector<std::string>& expected)
      : expected_(expected.begin(), expected.end()) {}
  void feed(std::string_view bytes,
            const std::function<void(const std::string& id, const std::string& verdict)>& seen);

 private:
  std::set<std::string> expected_, reported_;
  std::string carry_;
};

}  // namespace controller
