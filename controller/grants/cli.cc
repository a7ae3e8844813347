#include "controller/grants/cli.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "controller/grants/presets.h"
#include "controller/text.h"
#include "policy/control_messages.h"

namespace controller::grants {

namespace {

// The secret of `grant add --secret-stdin`, read into one buffer of fixed size (no reallocation
// leaves a copy behind); kMaxSecretLength + 1 bytes tell "too long" from "at the limit".
Result<Token> read_stdin_secret(const std::string& what) {
  std::string buffer(policy::kMaxSecretLength + 2, '\0');
  std::size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = read(STDIN_FILENO, buffer.data() + got, buffer.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      explicit_bzero(buffer.data(), buffer.size());
      return fail(Code::kInvalidArgument,
                  what + ": read the secret from stdin: " + std::string(std::strerror(errno)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  // One trailing newline (from echo or a terminal) is not part of it.
  if (got > 0 && buffer[got - 1] == '\n') --got;
  if (got > 0 && buffer[got - 1] == '\r') --got;
  const bool too_long = got > policy::kMaxSecretLength;
  Token t;
  if (!too_long) t.secret.assign(buffer.data(), got);
  explicit_bzero(buffer.data(), buffer.size());
  if (too_long) {
    return fail(Code::kInvalidArgument, what + ": the secret is longer than 8192 bytes");
  }
  return t;
}

// True when bytes wait on a piped stdin (a terminal or nothing piped counts as none).
bool stdin_has_bytes() {
  if (isatty(STDIN_FILENO) != 0) return false;
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (poll(&p, 1, 200) <= 0 || (p.revents & POLLIN) == 0) return false;
  char c = 0;
  const ssize_t n = read(STDIN_FILENO, &c, 1);
  explicit_bzero(&c, 1);
  return n > 0;
}

}  // namespace

void add_grant_cli(CLI::App& app, GrantCli& cli) {
  auto* grant = app.add_subcommand("grant", "grants through the window")->require_subcommand(1);
  cli.add = grant->add_subcommand("add",
                                  "give the space a grant; a secret comes from stdin, the host's "
                                  "environment or a helper, never argv");
  cli.add->add_option("id", cli.space, "space id (12 hex)")->required();
  cli.add->add_option("grant", cli.grant, "grant id (default: the provider)");
  cli.add->add_option("--provider", cli.provider,
                      "a preset: upstream and header of that provider (spacectl grant providers)");
  cli.add->add_option("--upstream", cli.upstream, "http(s) URL");
  cli.add->add_option("--header", cli.header, "header that carries the secret");
  cli.add->add_flag("--secret-stdin", cli.secret_stdin,
                    "read the secret from stdin (the default with a header); never kept, so a "
                    "start leaves it needs-access");
  cli.add->add_option(
      "--secret-env", cli.env,
      "read the secret from this variable of the host's environment, now and at every start");
  cli.add->add_option("--secret-helper", cli.helper,
                      "run 'PROGRAM ARG…' (no shell) for {\"secret\", \"expires_at\"}, now, at "
                      "every start and before it expires");
  cli.add->add_flag(
      "--unsafe-private-upstream", cli.unsafe_private_upstream,
      "let the upstream name resolve into a private network (RFC 1918, RFC 6598, RFC 4193); "
      "needed for a secret over plain http to an address literal");
  cli.refresh = grant->add_subcommand(
      "refresh", "read env and helper sources again and replace the gatekeeper's tokens in place");
  cli.refresh->add_option("id", cli.space, "space id (12 hex)")->required();
  cli.refresh->add_option("grant", cli.grant, "one grant (default: every env and helper grant)");
  cli.providers = grant->add_subcommand(
      "providers", "the provider presets (upstream, header, source) and the refused providers");
}

Result<GrantRequest> request_from_flags(const GrantCli& cli) {
  GrantRequest r;
  r.unsafe_private_upstream = cli.unsafe_private_upstream;
  const std::string what = "grant add " + cli.space;
  if (!cli.provider.empty()) {
    if (!cli.upstream.empty() || !cli.header.empty()) {
      return fail(Code::kUsage,
                  what + ": --provider fills --upstream and --header; give one or the other");
    }
    Result<Preset> p = find_preset(cli.provider);
    if (!p) return p.error();
    r.provider = std::string(p->provider);
    r.upstream = std::string(p->upstream);
    r.header = std::string(p->header);
    r.id = cli.grant.empty() ? r.provider : cli.grant;
  } else {
    if (cli.upstream.empty()) {
      return fail(Code::kUsage,
                  what + ": give --provider, or --upstream (and --header for a secret)");
    }
    if (cli.grant.empty()) {
      return fail(Code::kUsage, what + ": a grant id is needed without --provider");
    }
    r.id = cli.grant;
    r.upstream = cli.upstream;
    r.header = cli.header;
  }
  const int sources =
      (cli.secret_stdin ? 1 : 0) + (cli.env.empty() ? 0 : 1) + (cli.helper.empty() ? 0 : 1);
  if (sources > 1) {
    return fail(Code::kUsage,
                what + ": give at most one of --secret-stdin, --secret-env and --secret-helper");
  }
  if (sources == 1 && r.header.empty()) {
    return fail(Code::kUsage,
                what + ": a secret needs --header (the header that carries it) or --provider");
  }
  if (!cli.env.empty()) {
    if (!is_env_name(cli.env)) {
      return fail(Code::kUsage, what + ": --secret-env " + cli.env.substr(0, 64) +
                                    ": a name is [A-Za-z_][A-Za-z0-9_]*, at most 256 characters");
    }
    r.source.kind = SourceKind::kEnv;
    r.source.env = cli.env;
  } else if (!cli.helper.empty()) {
    Result<std::vector<std::string>> argv = parse_helper_command(cli.helper);
    if (!argv) return argv.error();
    r.source.kind = SourceKind::kHelper;
    r.source.helper = std::move(*argv);
  } else if (!r.header.empty()) {
    r.source.kind = SourceKind::kStdin;  // today's way, and the default with a header
  }
  return r;
}

GrantProviders grant_providers() {
  GrantProviders known;
  known.presets.assign(presets().begin(), presets().end());
  known.refused.assign(refused_providers().begin(), refused_providers().end());
  return known;
}

Result<GrantAdded> run_grant_add(GrantCli& cli, Manager& manager) {
  // While spacectl holds a secret nothing may dump it: no core file, no ptrace or /proc/<pid>/mem
  // by another process of the same user.
  const rlimit no_core{0, 0};
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || setrlimit(RLIMIT_CORE, &no_core) != 0) {
    return fail(Code::kInternal, "grant add: cannot make spacectl undumpable");
  }
  Result<GrantRequest> request = request_from_flags(cli);
  if (!request) return request.error();
  if (cli.unsafe_private_upstream) {
    std::fprintf(
        stderr,
        "spacectl: warning: grant %s may reach private networks (--unsafe-private-upstream)\n",
        terminal_safe(request->id).c_str());
  }
  Token typed;
  const std::string what = "grant add " + request->id;
  switch (request->source.kind) {
    case SourceKind::kNone:
      // A secret piped without --header would silently become a grant without one.
      if (stdin_has_bytes()) {
        return fail(Code::kUsage,
                    what + ": a secret on stdin needs --header (the header that carries it)");
      }
      break;
    case SourceKind::kStdin: {
      Result<Token> t = read_stdin_secret(what);
      if (!t) return t.error();
      typed = std::move(*t);
      break;
    }
    case SourceKind::kEnv:
    case SourceKind::kHelper:
      break;  // read by the manager
  }
  return manager.grant_add(cli.space, *request, std::move(typed));
}

}  // namespace controller::grants
