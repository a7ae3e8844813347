// spacectl: the controller's command line. CLI11 and nlohmann-json throw; their exceptions stop
// here. Everything below main answers values (errors.h).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "controller/code/apply_cli.h"
#include "controller/code/cli.h"
#include "controller/code/render.h"
#include "controller/escape_runner.h"
#include "controller/grants/cli.h"
#include "controller/help.h"
#include "controller/ids.h"
#include "controller/image_push.h"
#include "controller/install_paths.h"
#include "controller/manager.h"
#include "controller/process.h"
#include "controller/registry.h"
#include "controller/render.h"
#include "controller/serve/serve.h"
#include "controller/signals.h"
#include "controller/spec.h"
#include "controller/sweep.h"
#include "controller/text.h"
#include "controller/version.h"
#include "policy/control_messages.h"
#include "policy/number.h"

namespace {

using controller::Code;
using controller::Result;
using nlohmann::json;

constexpr const char* kExitCodes =
    "Exit status: 0 done; 1 a place command failed or an internal error; 2 usage or a refused "
    "value;\n"
    "3 place_unreachable / place_unusable / place_not_found (daemon down, no seccomp, isolation "
    "not\n"
    "proved); 4 space_not_found / space_not_running; 5 verify_failed; 6 gatekeeper_not_ready /\n"
    "gatekeeper_refused / gatekeeper_unreachable; 7 space_busy (another action holds the space);\n"
    "10-23 code in, 24-30 code out and 32-42 apply refusals and failures, one status each; 43\n"
    "secret_source_missing, 44 secret_helper_failed, 45 provider_not_supported\n"
    "(controller/README.md lists them). `space exec` exits with the command's status.\n"
    "--json prints one document; an error is {\"error\":{\"code\":\"…\",\"message\":\"…\"}}.";

std::string self_dir() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return ".";
  std::string path(buffer, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// Prints a failure: its code and message. `partial` is what the operation had when it failed (a
// verify's differences, a check's findings), as its document and as its text; null when none.
int report_failure(const controller::Failure& e, bool as_json, const json& partial = json(),
                   const std::string& partial_text = {}) {
  if (as_json) {
    json doc = {{"error", {{"code", std::string(controller::code_word(e.code))}, {"message", e.message}}}};
    if (!partial.is_null()) doc["result"] = partial;
    std::cout << controller::json_text(doc) << "\n";
  } else {
    std::cout << partial_text;
    std::cerr << "spacectl: " << controller::code_word(e.code) << ": " << controller::terminal_safe(e.message) << "\n";
  }
  return controller::exit_status(e.code);
}

int report(const controller::Failure& failure, bool as_json) {
  return report_failure(failure, as_json);
}

// Prints a result through the one renderer (render.h): its JSON document or its text.
template <typename T>
int report(const Result<T>& r, bool as_json) {
  using controller::to_json;
  using controller::to_text;
  if (!r) return report_failure(r.error(), as_json);
  std::cout << (as_json ? controller::json_text(to_json(*r)) + "\n" : to_text(*r));
  return 0;
}

// A failure with the result the operation had reached (render.h renders it).
template <typename T>
int report_partial(const controller::Failure& failure, bool as_json, const T& partial) {
  using controller::to_json;
  using controller::to_text;
  return report_failure(failure, as_json, to_json(partial), to_text(partial));
}

std::optional<std::int64_t> parse_size(const std::string& text) {
  const std::size_t used = std::min(text.find_first_not_of("0123456789"), text.size());
  const std::optional<long long> parsed =
      policy::parse_number<long long>(std::string_view(text).substr(0, used));
  if (!parsed) return std::nullopt;
  const long long n = *parsed;
  std::string unit = text.substr(used);
  std::int64_t mult = 1;
  if (unit == "k" || unit == "K") {
    mult = 1ll << 10;
  } else if (unit == "m" || unit == "M") {
    mult = 1ll << 20;
  } else if (unit == "g" || unit == "G") {
    mult = 1ll << 30;
  } else if (!unit.empty() && unit != "b") {
    return std::nullopt;
  }
  if (n <= 0 || n > (1ll << 50) / mult) return std::nullopt;
  return n * mult;
}

int run(int argc, char** argv) {
  CLI::App app{"spacectl: create, check and drive isolated spaces (a hardened container behind its own gatekeeper).", "spacectl"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  // Global options (--json, --state-dir, --place, ...) are accepted after the subcommand too, as
  // users type them (`spacectl space list --json`): an option a subcommand does not know falls
  // through to its parent. Set before the subcommands are made, which inherit it.
  app.fallthrough();
  bool as_json = false;
  std::string place_name = "docker", state_override, owner_override;
  const controller::InstallPaths paths = controller::find_install_paths(self_dir());
  const std::string& dir = paths.data_dir;
  controller::PlaceOptions options;
  options.gatekeeper_image_file = dir + "/gatekeeper-image.id";
  options.space_image_file = dir + "/space-image.id";
  options.seccomp_space = dir + "/seccomp/space.json";
  options.seccomp_gatekeeper = dir + "/seccomp/gatekeeper.json";
  options.bridge_binary = paths.libexec_dir + "/spacectl-bridge";
  const std::string test_pin_file = dir + "/gatekeeper-test-image.id";
  // Printed with the pins this invocation would use, so --version goes after the path options.
  bool show_version = false;
  app.add_flag("--version", show_version, "print the version, git revision and pinned image IDs, then exit");
  app.add_flag("--json", as_json, "print one JSON document");
  bool timings = false;
  app.add_flag("--timings", timings,
               "print how long each engine call (each process spacectl starts) took, on stderr");
  std::string place_host;
  app.add_option(
      "--place", place_name,
      "place to use: docker (default), docker-ssh, podman, kubernetes or apple-container "
      "(spacectl place list)");
  app.add_option("--host", place_host,
                 "the engine of --place docker-ssh: ssh://user@host[:port] (default: DOCKER_HOST)");
  app.add_option("--state-dir", state_override, "host records (default $XDG_STATE_HOME/spacectl)");
  app.add_option("--owner", owner_override, "installation id scoping every label (default: made once in the state dir)");
  app.add_option("--gatekeeper-image-file", options.gatekeeper_image_file, "file holding the pinned gatekeeper image ID");
  app.add_option("--space-image-file", options.space_image_file, "file holding the default space image ID");
  app.add_option("--seccomp-space", options.seccomp_space, "seccomp profile of the space");
  app.add_option("--seccomp-gatekeeper", options.seccomp_gatekeeper, "seccomp profile of the gatekeeper");
  app.add_option("--subnet-pool", options.subnet_pool,
                 "IPv4 range the spaces' networks take their /29s from (default " +
                     std::string(controller::kDefaultSubnetPool) + "; docs/subnets.md)");
  app.add_option("--disk-dir", options.disk_dir, "where a local place keeps the volumes' disk images (default /var/lib/spacectl/disks)");
  app.add_option(
      "--context", options.kube_context,
      "--place kubernetes: the kubeconfig context (always explicit, never the current one)");
  app.add_option("--namespace", options.kube_namespace,
                 "--place kubernetes: the namespace base; each space gets <base>-<id>");
  app.add_flag("--seccomp-localhost", options.seccomp_localhost,
               "--place kubernetes: the nodes carry seccomp-profiles/ under the kubelet's seccomp "
               "root (place check proves it)");

  auto* place_cmd = app.add_subcommand("place", "the place itself")->require_subcommand(1);
  auto* check_cmd = place_cmd->add_subcommand("check", "is this place usable? proved by trying");
  auto* place_list_cmd = place_cmd->add_subcommand(
      "list", "every place, its state, and whether it can restrict the network (each probed)");

  auto* space_cmd = app.add_subcommand("space", "spaces")->require_subcommand(1);
  controller::CreateRequest create_request;
  std::string memory_text;
  std::string cpus_text;
  std::string disk_text;
  auto* create_cmd = space_cmd->add_subcommand("create", "create, verify and start a space");
  create_cmd->add_option("--name", create_request.name, "display name");
  create_cmd->add_option("--image", create_request.space_image, "space image (default: the pinned local image)");
  create_cmd->add_option("--memory", memory_text, "memory limit, e.g. 512m or 4g (swap equals it)");
  create_cmd->add_option("--cpus", cpus_text, "CPU quota, e.g. 1 or 1.5 (default: half the place's cores, at least 1)");
  create_cmd->add_option("--disk", disk_text, "size of each writable volume ($HOME and the workspace), e.g. 2g (default 10g)");
  create_cmd->add_option("command", create_request.command, "command of the space (after --)");
  std::string id;
  auto with_id = [&](CLI::App* parent, const char* name, const char* help) {
    auto* c = parent->add_subcommand(name, help);
    c->add_option("id", id, "space id (12 hex)")->required();
    return c;
  };
  auto* list_cmd = space_cmd->add_subcommand("list", "spaces of this owner (labels are the only record)");
  auto* show_cmd = with_id(space_cmd, "show", "one space with its network choice and grant ids");
  auto* verify_cmd = with_id(space_cmd, "verify", "compare every hardening setting with the spec");
  auto* stop_cmd = with_id(space_cmd, "stop", "stop the space, then its gatekeeper");
  auto* start_cmd = with_id(space_cmd, "start", "verify, start the gatekeeper, then the space");
  auto* remove_cmd = with_id(space_cmd, "remove", "remove containers, volumes and networks");
  auto* exec_cmd = with_id(space_cmd, "exec", "run a command in the space (stdio passed through)");
  std::vector<std::string> exec_args;
  bool in_gatekeeper = false;
  exec_cmd->add_flag("--gatekeeper", in_gatekeeper, "run in the gatekeeper instead");
  exec_cmd->add_option("args", exec_args, "command (after --)")->required();

  auto* network_cmd = app.add_subcommand("network", "the space's corridor")->require_subcommand(1);
  auto* network_set = with_id(network_cmd, "set", "set allowlist or open mode");
  std::string mode;
  std::vector<std::string> domains;
  network_set->add_option("--mode", mode, "allowlist or open")->required()->check(CLI::IsMember({"allowlist", "open"}));
  network_set->add_option("--domain", domains, "an exact domain name (repeat)");

  controller::grants::GrantCli grant_cli;  // grant add / refresh / providers (grants/cli.h)
  controller::grants::add_grant_cli(app, grant_cli);

  auto* key_cmd = with_id(&app, "window-key", "deliver the space's window key to its gatekeeper; print the window URL");
  auto* journal_cmd = with_id(&app, "journal", "the gatekeeper's journal");
  auto* policy_cmd = with_id(&app, "policy", "the gatekeeper's network and grant ids (never a secret)");

  // escape-test: escape_runner.h says what it creates and removes.
  auto* escape_cmd = with_id(&app, "escape-test", "run the escape suite against a space, with host-side controls and checks");
  controller::EscapeOptions escape_options;
  escape_options.binary = paths.libexec_dir + "/escape-suite";
  escape_options.test_gatekeeper_image_file = test_pin_file;
  std::string escape_format = "text";
  bool no_exhaustion = false;
  escape_cmd->add_option("--format", escape_format, "text, json, tap, junit, sarif or html")
      ->check(CLI::IsMember({"text", "json", "tap", "junit", "sarif", "html"}));
  escape_cmd->add_option("--output", escape_options.output, "write the report here instead of stdout");
  escape_cmd->add_option("--only", escape_options.only, "case id globs, e.g. 'fs.*' (repeat)");
  escape_cmd->add_option("--binary", escape_options.binary, "the static escape-suite (default: next to spacectl)");
  escape_cmd->add_option("--test-gatekeeper-image-file", escape_options.test_gatekeeper_image_file,
                         "gatekeeper-TEST image ID for the twin space's positive control");
  escape_cmd->add_flag("--no-exhaustion", no_exhaustion, "skip the fork bomb, memory, disk and log flood cases");

  controller::code::CodeCli code_cli;  // code in / history / files / forget; space create --repo
  controller::code::add_code_cli(app, create_cmd, code_cli);
  controller::code::ApplyCli apply_cli;  // apply --as-branch | --as-changes; apply-state
  controller::code::add_apply_cli(app, apply_cli);

  // --version needs no subcommand; CLI11 would refuse the missing one first.
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--version") app.require_subcommand(0, 1);
  }
  auto* sweep_cmd = app.add_subcommand("sweep", "remove what a crashed spacectl left: objects without a record, interrupted creations, temporary folders");
  int sweep_grace = static_cast<int>(controller::kDefaultSweepGrace.count());
  sweep_cmd->add_option("--grace", sweep_grace, "leave objects younger than this many seconds (default 600)")->check(CLI::Range(0, 31536000));

  auto* serve_cmd = app.add_subcommand("serve", "run as a service: a JSON API on a unix socket in the state dir (controller/API.md)");
  controller::serve::ServeOptions serve_options;
  bool serve_no_sweep = false;
  serve_cmd->add_option("--socket", serve_options.socket_path, "unix socket (default <state dir>/serve.sock)");
  serve_cmd->add_option("--listen", serve_options.listen, "also listen on 127.0.0.1:PORT (needs --token-file)");
  serve_cmd->add_option("--token-file", serve_options.token_file, "bearer token for --listen (a file of this user, mode 0600)");
  serve_cmd->add_flag("--no-sweep", serve_no_sweep, "do not sweep at start");
  serve_cmd->add_option("--sweep-grace", serve_options.sweep_grace_seconds, "grace of the sweep at start, seconds (default 600)")
      ->check(CLI::Range(0, 31536000));
  serve_cmd
      ->add_option("--renew-window", serve_options.renew_window_seconds,
                   "renew a helper's token this many seconds before it expires (default 600)")
      ->check(CLI::Range(1, 86400));

  // image push: image_push.h (skopeo, from the archives next to the pins; digests recorded there).
  auto* image_cmd = app.add_subcommand("image", "the pinned images")->require_subcommand(1);
  auto* push_cmd = image_cmd->add_subcommand("push", "push the pinned images to a registry; record each digest next to its pin");
  std::string push_registry, push_test_pin = test_pin_file;
  push_cmd->add_option("--registry", push_registry, "HOST[:PORT]/PATH, e.g. 127.0.0.1:5000/gatekeeper-spaces")->required();
  push_cmd->add_option("--test-gatekeeper-image-file", push_test_pin, "pin of the TEST-ONLY twin (pushed when present)");

  auto* help_cmd = app.add_subcommand("help", "the main concepts: spacectl help TOPIC (no topic: the list)");
  std::string help_topic;
  help_cmd->add_option("topic", help_topic, "space, code, gatekeeper, corridor, window, place, escape-test, files or json");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (help_cmd->parsed()) {
    if (help_topic.empty()) {
      std::cout << controller::help_index();
      return 0;
    }
    if (std::optional<std::string> text = controller::help_text(help_topic); text) {
      std::cout << *text;
      return 0;
    }
    std::cerr << "spacectl: help " << help_topic << ": no such topic\n" << controller::help_index();
    return 2;
  }
  if (show_version) {
    const controller::VersionInfo v = controller::own_version();
    if (!as_json) {
      std::cout << controller::version_text(v, options, test_pin_file);
      return 0;
    }
    const controller::VersionShown shown{v.version, v.revision_known ? v.revision : std::string(),
                                         controller::read_pin(options.gatekeeper_image_file),
                                         controller::read_pin(options.space_image_file)};
    std::cout << controller::json_text(controller::to_json(shown)) << "\n";
    return 0;
  }

  if (push_cmd->parsed()) {
    const std::string version = controller::own_version().version;
    Result<std::vector<controller::PushedImage>> pushed = controller::push_images(
        push_registry, {{"gatekeeper", version, options.gatekeeper_image_file, true},
                        {"gatekeeper-test", version + "-TEST-ONLY", push_test_pin, false},
                        {"space-default", version, options.space_image_file, true}});
    if (!pushed) return report(pushed.error(), as_json);
    return report(Result<controller::ImagesPushed>(controller::ImagesPushed{std::move(*pushed)}),
                  as_json);
  }

  controller::set_process_timings(timings);
  Result<std::string> state_or = controller::state_dir(state_override);
  if (!state_or) return report(state_or.error(), as_json);
  const std::string state = *state_or;
  if (Result<void> private_dir = controller::ensure_private_dir(state); !private_dir) return report(private_dir.error(), as_json);
  if (!owner_override.empty()) {
    if (!controller::is_owner(owner_override)) {
      return report(controller::fail(Code::kUsage, "--owner: 1 to 64 letters, digits, dots, dashes or underscores"), as_json);
    }
    options.owner = owner_override;
  } else {
    Result<std::string> owner = controller::load_or_make_owner(state);
    if (!owner) return report(owner.error(), as_json);
    options.owner = *owner;
  }
  // DOCKER_HOST=ssh://… makes the docker CLI remote: that engine is the docker-ssh place, whose
  // verify and probes know the engine's host is not this one.
  const char* docker_host = std::getenv("DOCKER_HOST");
  if (place_name == "docker" && place_host.empty() && docker_host != nullptr &&
      std::string_view(docker_host).rfind("ssh://", 0) == 0) {
    place_name = "docker-ssh";
  }
  if (place_name == "docker-ssh") {
    options.engine.host = !place_host.empty()      ? place_host
                          : docker_host != nullptr ? docker_host
                                                   : "";
  }
  if (place_list_cmd->parsed()) {
    return report(controller::list_places(controller::builtin_registry(), options), as_json);
  }
  // The CLI-driven engines (engine.h) take --host; kubernetes and apple-container are places of
  // their own and take none (the registry refuses an unknown name).
  if (place_name == "docker" || place_name == "docker-ssh" || place_name == "podman") {
    Result<controller::Engine> engine =
        controller::engine_for_place(place_name, place_host, docker_host);
    if (!engine) return report(engine.error(), as_json);
    options.engine = *engine;
  } else if (!place_host.empty()) {
    return report(controller::fail(Code::kUsage, "--host " + place_host +
                                                     ": only --place docker-ssh takes a host"),
                  as_json);
  }
  Result<std::unique_ptr<controller::Place>> place = controller::builtin_registry().make(place_name, options);
  if (!place) return report(place.error(), as_json);
  controller::Manager manager{**place, state};

  if (check_cmd->parsed()) {
    Result<controller::PlaceChecked> r = manager.check();
    // A running gatekeeper that is not the pinned image (an older spacectl made it) is a warning.
    if (r) {
      if (Result<std::vector<controller::SpaceSummary>> spaces = (*place)->list(); spaces) {
        const std::vector<std::string> warnings = controller::gatekeeper_version_warnings(
            *spaces, controller::read_pin(options.gatekeeper_image_file), controller::own_version());
        r->warnings = warnings;
        r->findings.insert(r->findings.end(), warnings.begin(), warnings.end());
      }
    }
    if (r && !r->usable) {
      return report_partial(controller::fail(Code::kPlaceUnusable,
                                             "place check: this place cannot run isolated spaces"),
                            as_json, *r);
    }
    return report(r, as_json);
  }
  if (serve_cmd->parsed()) {
    serve_options.place_name = place_name;
    serve_options.place_options = options;
    serve_options.state = state;
    serve_options.sweep_at_start = !serve_no_sweep;
    serve_options.escape_binary = escape_options.binary;
    serve_options.escape_test_image_file = escape_options.test_gatekeeper_image_file;
    return controller::serve::run_serve(serve_options);
  }
  if (sweep_cmd->parsed()) {
    controller::SweepOptions so;
    so.grace = std::chrono::seconds(sweep_grace);
    so.remove_refs = controller::code::forget_refs;
    return report(controller::sweep(manager, so), as_json);
  }
  if (create_cmd->parsed()) {
    // Chosen here so each progress line can name it; the lock and a `preparing` record come
    // before anything exists at the place.
    create_request.id = controller::random_hex(6);
    create_request.progress = [&create_request](std::string_view step) {
      std::cerr << "spacectl: space create " << create_request.id << ": " << step << "\n";
    };
    if (!memory_text.empty()) {
      std::optional<std::int64_t> m = parse_size(memory_text);
      if (!m) return report(controller::fail(Code::kUsage, "--memory " + memory_text + ": a size like 512m or 4g"), as_json);
      create_request.memory_bytes = *m;
    }
    if (!disk_text.empty()) {
      std::optional<std::int64_t> d = parse_size(disk_text);
      if (!d || *d < controller::kMinDiskBytes || *d > controller::kMaxDiskBytes) {
        return report(controller::fail(Code::kUsage, "--disk " + disk_text + ": a size like 2g, from 64m to 16384g"), as_json);
      }
      create_request.disk_bytes = *d;
    }
    if (!cpus_text.empty()) {
      std::optional<std::int64_t> c = controller::parse_cpus(cpus_text);
      if (!c || *c < controller::kMinSpaceNanoCpus) {
        return report(controller::fail(Code::kUsage, "--cpus " + cpus_text + ": a CPU count like 1 or 1.5 (at least 0.1)"), as_json);
      }
      create_request.nano_cpus = *c;
    }
    if (!code_cli.create_repo.empty()) {
      return report(controller::code::create_with_code(code_cli, manager, create_request, create_request.space_image), as_json);
    }
    return report(manager.create(create_request), as_json);
  }
  if (list_cmd->parsed()) return report(manager.list(), as_json);
  if (show_cmd->parsed()) return report(manager.show(id), as_json);
  if (verify_cmd->parsed()) {
    controller::SpaceVerified found;
    Result<controller::SpaceVerified> r = manager.verify(id, found);
    // Differences come with the failure; a failure before the place answered has none to show
    // (`found` is filled only once the place answered).
    if (!r && !found.id.empty()) return report_partial(r.error(), as_json, found);
    return report(r, as_json);
  }
  if (stop_cmd->parsed()) return report(manager.stop(id), as_json);
  if (start_cmd->parsed()) return report(manager.start(id), as_json);
  if (remove_cmd->parsed()) return report(controller::code::remove_with_refs(manager, id), as_json);
  if (code_cli.in->parsed()) {
    return report(controller::code::run_code_in(code_cli, manager, {}), as_json);
  }
  if (code_cli.history->parsed()) {
    return report(controller::code::run_code_history(code_cli, manager), as_json);
  }
  if (code_cli.files->parsed()) return report(controller::code::code_files(code_cli.repo), as_json);
  if (code_cli.forget->parsed()) {
    return report(controller::code::code_forget(manager, code_cli.id), as_json);
  }
  if (code_cli.out->parsed()) {
    return report(controller::code::run_code_out(code_cli, manager), as_json);
  }
  if (apply_cli.apply->parsed()) {
    return report(controller::code::run_apply(apply_cli, manager), as_json);
  }
  if (apply_cli.state->parsed()) {
    return report(controller::code::apply_state(manager, apply_cli.id), as_json);
  }
  if (exec_cmd->parsed()) {
    if (in_gatekeeper) {
      Result<controller::ExecOutput> r = (*place)->exec(id, controller::ExecTarget::kGatekeeper, exec_args, {}, std::chrono::milliseconds(60000));
      if (!r) return report(r.error(), as_json);
      std::cout << r->out;
      std::cerr << r->err;
      return r->exit_code;
    }
    Result<std::vector<std::string>> prefix =
        (*place)->interactive_exec_argv(id, isatty(STDIN_FILENO) != 0);
    if (!prefix) return report(prefix.error(), as_json);
    controller::ProcessRequest request;
    request.argv = std::move(*prefix);
    request.argv.insert(request.argv.end(), exec_args.begin(), exec_args.end());
    request.inherit_stdio = true;
    const controller::ProcessOutcome o = controller::run_process(request);
    if (o.spawn_failed) return report(controller::fail(Code::kPlaceUnreachable, "space exec " + id + ": " + o.describe()), as_json);
    return o.exited ? o.exit_code : 128 + o.signal;
  }
  if (network_set->parsed()) return report(manager.network_set(id, mode, domains), as_json);
  if (grant_cli.providers->parsed()) {
    return report(Result<controller::GrantProviders>(controller::grants::grant_providers()),
                  as_json);
  }
  if (grant_cli.refresh->parsed()) {
    return report(manager.grant_refresh(grant_cli.space, grant_cli.grant), as_json);
  }
  if (grant_cli.add->parsed()) {
    return report(controller::grants::run_grant_add(grant_cli, manager), as_json);
  }
  if (key_cmd->parsed()) return report(manager.window_key(id), as_json);
  if (escape_cmd->parsed()) {
    escape_options.space_id = id;
    escape_options.state_dir = state;
    escape_options.place_name = place_name;
    escape_options.exhaustion = !no_exhaustion;
    escape_options.format = escape_format == "json" ? escape::Format::kJson
                            : escape_format == "tap" ? escape::Format::kTap
                            : escape_format == "junit" ? escape::Format::kJunit
                            : escape_format == "sarif" ? escape::Format::kSarif
                            : escape_format == "html"  ? escape::Format::kHtml
                                                       : escape::Format::kText;
    // The run changes the gatekeeper's network and grants and puts them back: one change of the
    // space under its lock, like network set and grant add.
    Result<controller::SpaceLock> lock = controller::SpaceLock::acquire(state, id, "escape-test");
    if (!lock) return report(lock.error(), as_json);
    Result<controller::EscapeReport> r =
        controller::run_escape_test(controller::builtin_registry(), options, escape_options);
    if (!r) return report(r.error(), as_json);
    if (escape_options.output.empty()) std::cout << r->text;
    return r->exit_code;  // 0 only when every case passed or is N/A with a reason
  }
  if (journal_cmd->parsed()) return report(manager.gatekeeper_journal(id), as_json);
  if (policy_cmd->parsed()) return report(manager.gatekeeper_policy(id), as_json);
  return report(controller::fail(Code::kUsage, "no command"), as_json);
}

}  // namespace

int main(int argc, char** argv) {
  controller::reset_signals_and_handle_stops();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "spacectl: internal: " << e.what() << "\n";
    return 1;
  }
}
