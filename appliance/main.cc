// gatekeeper: the appliance program. Subcommands are dispatched here; each lives in its own file.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "appliance/control_client.h"
#include "appliance/explain.h"
#include "appliance/serve_main.h"
#include "gk_version.h"
#include "policy/ranges.h"

namespace {

constexpr std::string_view kUsage =
    "usage: gatekeeper <command> [options]\n"
    "commands:\n"
    "  explain   print the corridor's decision word for a CONNECT target (no network)\n"
    "  serve     run the corridor, window and control listeners\n"
    "  control   send one request to the local control channel (JSON body on stdin)\n"
    "  --version print the version, the git revision and the address policy built in\n"
    "Run 'gatekeeper <command> --help' for the options of a command.\n";

// The image that carries this binary has the same version and revision in its labels
// org.opencontainers.image.version and .revision; its ID cannot be inside the binary it hashes, so
// the pinned ID is printed by `spacectl --version`, which pins it.
std::string version_text() {
  std::string out = "gatekeeper " GK_VERSION "\n";
  out += GK_GIT_KNOWN ? "revision " GK_GIT_REVISION "\n" : "revision unknown (built from a source tree without git)\n";
  out += policy::unsafe_test_ranges_public()
             ? "policy TEST-ONLY: 198.18.0.0/15 and 2001:2::/48 count as public\n"
             : "policy release\n";
  out += "image labels org.opencontainers.image.version and .revision carry the same; spacectl --version names the pinned image ID\n";
  return out;
}

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
  if (command == "--version" || command == "version") {
    write_all(stdout, version_text());
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    write_all(stdout, kUsage);
    return 0;
  }
  write_all(stderr, "gatekeeper: unknown command '" + std::string(command) + "'\n" +
                        std::string(kUsage));
  return 2;
}
