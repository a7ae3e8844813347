// escape-suite: the attacker binary. Copied into a live space over exec stdin and run as the
// space's user; static, so it needs nothing from the image. Exit 0 only when every selected case
// is PASS (or N/A with a reason); 1 when any is FAIL or INCONCLUSIVE; 2 on a usage error.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "escape-suite/report.h"
#include "escape-suite/report_rich.h"
#include "escape-suite/upstream_answer.h"

namespace {

// Taken before the suite opens anything: what the runtime handed the process (CVE-2024-21626).
std::vector<std::pair<int, std::string>> snapshot_fds() {
  std::vector<std::pair<int, std::string>> fds;
  for (int fd = 0; fd < 4096; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) continue;
    fds.emplace_back(fd, escape::read_link("/proc/self/fd/" + std::to_string(fd)));
  }
  return fds;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // The runner's window upstream (upstream_answer.h), not a suite run.
  if (argc >= 2 && std::string_view(argv[1]) == escape::kAnswerUpstreamMode) return escape::run_answer_upstream(argc - 2, argv + 2);
  escape::Context ctx;
  ctx.startup_fds = snapshot_fds();
  ::signal(SIGPIPE, SIG_IGN);  // a closed report pipe must not kill the suite mid-case

  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  auto parsed = escape::parse_options(args);
  if (!parsed) {
    std::fprintf(stderr, "escape-suite: %s\n%s", parsed.error().message.c_str(),
                 std::string(escape::usage()).c_str());
    return 2;
  }
  ctx.opts = std::move(parsed.value());

  // Run as root with capabilities, a wrongly allowed attempt (mount, remount, sysctl open) acts on
  // whatever this process can reach: on a host, the host. Refuse unless told it is a throw-away.
  const escape::FileRead status = escape::read_bounded("/proc/self/status");
  const bool privileged = ::geteuid() == 0 &&
                          escape::status_field(status.data, "CapEff") != "0000000000000000";
  if (privileged && !ctx.opts.list) {
    if (!ctx.opts.unsafe_privileged) {
      std::fprintf(stderr, "escape-suite: running as root with capabilities; the cases would act on this "
                           "machine. Run as the space's user, or pass --unsafe-privileged inside a "
                           "throw-away container.\n");
      return 2;
    }
    std::fprintf(stderr, "escape-suite: WARNING: --unsafe-privileged: running as root with capabilities\n");
  }

  const std::vector<escape::Case> cases = escape::all_cases();
  std::string report;
  int code = 0;
  if (ctx.opts.list) {
    report = escape::format_list(cases, ctx.opts);
  } else {
    const std::vector<escape::CaseResult> results = escape::run_cases(ctx, cases);
    if (results.empty()) {
      std::fprintf(stderr, "escape-suite: --only selected no case\n");
      return 2;
    }
    report = escape::format_report(ctx.opts.format, results, escape::context_from_options(ctx.opts));
    code = escape::exit_code(results);
  }
  int out = STDOUT_FILENO;
  if (!ctx.opts.output.empty()) {
    out = ::open(ctx.opts.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
      std::fprintf(stderr, "escape-suite: open(%s): %s\n", ctx.opts.output.c_str(),
                   escape::errno_name(errno).c_str());
      return 2;
    }
  }
  if (!write_all(out, report)) {
    std::fprintf(stderr, "escape-suite: writing the report failed: %s\n", escape::errno_name(errno).c_str());
    return 2;
  }
  if (out != STDOUT_FILENO) ::close(out);
  return code;
}
