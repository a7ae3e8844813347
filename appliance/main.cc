// gatekeeper: the appliance program. Subcommands are dispatched here; each lives in its own file.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "appliance/control_client.h"
#include "appliance/explain.h"
#include "appliance/serve/serve_main.h"
#include "policy/ranges.h"

namespace {

constexpr std::string_view kUsage =
    "usage: gatekeeper <command> [options]\n"
    "commands:\n"
    "  explain   print the corridor's decision word for a CONNECT target (no network)\n"
    "  serve     run the corridor, window and control listeners\n"
    "  control   send one request to the local control channel (JSON body on stdin)\n"
    "Run 'gatekeeper <command> --help' for the options of a command.\n";

void write_all(std::FILE* stream, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
}

}  // namespace

int main(int argc, char** argv) {
  if (policy::unsafe_test_ranges_public()) {
    // docs/decisions.md#weakening-is-announced: anything that weakens security says so at start-up.
    write_all(stderr,
              "gatekeeper: warning: unsafe test build: 198.18.0.0/15 and 2001:2::/48 are treated "
              "as public; never use this binary outside tests\n");
  }
  if (argc < 2) {
    write_all(stderr, kUsage);
    return 2;
  }
  const std::string_view command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "explain") {
    appliance::ExplainOutcome outcome = appliance::run_explain(args);
    write_all(stdout, outcome.out);
    write_all(stderr, outcome.err);
    return outcome.exit_code;
  }
  if (command == "serve") return appliance::serve::run_serve(args);
  if (command == "control") return appliance::run_control_client(args);
  if (command == "--help" || command == "-h" || command == "help") {
    write_all(stdout, kUsage);
    return 0;
  }
  write_all(stderr, "gatekeeper: unknown command '" + std::string(command) + "'\n" +
                        std::string(kUsage));
  return 2;
}
