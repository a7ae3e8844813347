#include "controller/help.h"

#include <array>
#include <utility>

namespace controller {
namespace {

struct Topic {
  std::string_view name, summary, text;
};

// Each topic's text is laid out as it prints (lines of at most 100 columns).
// clang-format off
constexpr std::array<Topic, 9> kTopics = {{
    {"space", "what a space is and its life cycle",
     "A space is a hardened container holding an AI agent and a copy of your code. It runs as a\n"
     "non-root user with a read-only root filesystem, no capabilities, no-new-privileges, a seccomp\n"
     "profile, pids, memory, CPU and IO limits, capped logs and no host mount; $HOME and its\n"
     "workspace are each a fixed-size filesystem (--disk, default 10g). Its only network is an\n"
     "internal one it shares with its own gatekeeper.\n\n"
     "  spacectl space create [--name N] [--memory 4g] [--cpus 1] [--disk 10g] [--image IMAGE] [-- COMMAND...]\n"
     "  spacectl space list | show ID | verify ID | stop ID | start ID | remove ID\n"
     "  spacectl space exec ID [--gatekeeper] -- COMMAND...\n\n"
     "create makes the networks, the gatekeeper and the space, verifies every hardening setting\n"
     "against the spec, and only then starts them; any failure removes what it made. Labels on the\n"
     "containers and networks are the only record of what exists: list asks the engine.\n"},
    {"code", "bringing the project into a space and the work out",
     "Code in snapshots your project with libgit2 inside spacectl (committed, staged, unstaged and\n"
     "untracked files that git does not ignore; no host git, hook or GIT_* variable runs) and sends\n"
     "it into the space over the place's exec, where the space's own git unfolds it:\n\n"
     "  spacectl space create --name N --repo ~/project     (create, code in, then history)\n"
     "  spacectl code in ID --repo ~/project [--mode clean]\n"
     "  spacectl code files --repo ~/project    (what would travel, what would not and why)\n"
     "  spacectl code history ID      spacectl code forget ID\n\n"
     "Code out brings the agent's work back as hostile data: the space's git makes a result commit,\n"
     "spacectl fetches exactly that commit into a quarantine, checks every object and tree name,\n"
     "and only then writes it to refs/openchamber/spaces/ID/result (nothing else; nothing at all\n"
     "when it refuses):\n\n"
     "  spacectl code out ID [--timeout S]    (changed paths, bytes, nested repositories, unmerged)\n\n"
     "The agent's work comes back once brought out, as a new branch or as uncommitted changes (only\n"
     "what is new since the last apply; checked whole before anything is written):\n\n"
     "  spacectl apply ID --as-branch NAME      spacectl apply ID --as-changes [--remove-afterwards]\n"
     "  spacectl apply-state ID                 (read-only: what the next apply would do)\n"},
    {"gatekeeper", "the appliance in front of every space",
     "Each space has its own gatekeeper: one static program in an otherwise empty image, pinned by\n"
     "image ID (spacectl --version prints the pins). It offers the space two ports on the inner\n"
     "network, the corridor (3128) and the window (8080), and a control channel on 127.0.0.1:9099\n"
     "inside its own container that only the host reaches, through `docker exec`. It runs\n"
     "non-root under its own seccomp allowlist. Its journal says why it refused something:\n\n"
     "  spacectl journal ID      spacectl policy ID\n\n"
     "place check warns when a running gatekeeper is not the image this spacectl pins.\n"},
    {"corridor", "how a space reaches the internet",
     "The corridor is a CONNECT proxy: TLS to port 443 of a host NAME, never an address. The name\n"
     "must be allowed (allowlist mode) or merely public (open mode); it is resolved once, every\n"
     "answer must be a public address, and the gatekeeper connects to the address it checked. The\n"
     "space sees a bare refusal; the reason goes to the journal.\n\n"
     "  spacectl network set ID --mode allowlist --domain api.example.com --domain pypi.org\n"
     "  spacectl network set ID --mode open\n\n"
     "Ask what the corridor would decide, offline: gatekeeper explain --allow NAME TARGET:443\n"},
    {"window", "credentials the agent never sees",
     "The window is a reverse proxy at http://gatekeeper:8080/k/<window key>/model/<grant>/... A\n"
     "grant names an upstream URL and a header; the gatekeeper strips any credential the space sent,\n"
     "adds the grant's secret and speaks TLS to the upstream itself. The secret lives only in the\n"
     "gatekeeper's memory and never in argv: from stdin (never kept: after a restart the grant\n"
     "needs access), from a variable of the host's environment (read again at every start), or\n"
     "from a credential helper printing {\"secret\", \"expires_at\"} (read again at every start,\n"
     "and renewed before it expires while `spacectl serve` runs; `grant refresh` does it by hand).\n"
     "Presets fill the upstream and header of a provider (spacectl grant providers):\n\n"
     "  spacectl grant add ID --provider anthropic --secret-env ANTHROPIC_API_KEY\n"
     "  spacectl grant add ID --provider openai --secret-helper 'my-login token --json'\n"
     "  printf %s \"$KEY\" | spacectl grant add ID model --upstream https://api.example.com/v1 --header x-api-key\n"
     "  spacectl grant refresh ID   (read env and helper sources again, replace the tokens in place)\n"
     "  spacectl window-key ID      (delivers the window key, prints the URL the space uses)\n"},
    {"place", "where spaces run, and proving it is usable",
     "A place is the container runtime spacectl drives through its CLI; today the local Docker\n"
     "engine. `spacectl place check` proves the place can isolate: the engine applies seccomp, a\n"
     "probe on an internal network cannot reach a listener on the host, and a probe on a normal\n"
     "bridge can (the positive control). When the engine lacks a pinned image it pulls it by the\n"
     "digest `spacectl image push` recorded, or loads the archive next to the pin, and refuses\n"
     "anything that is not the pinned image. Exit 3 means this place cannot run isolated spaces.\n"},
    {"escape-test", "proving a space cannot be left",
     "`spacectl escape-test ID` copies the static escape suite into the space and runs 300+ attacks\n"
     "as the space's user, with controls only the host can set up (host listeners, a second space,\n"
     "a test upstream, bait secrets), then adds checks only visible from outside. A case passes only\n"
     "when the attempt failed the way its proof names; INCONCLUSIVE proves nothing.\n\n"
     "  spacectl escape-test ID --format html --output report.html     (for people)\n"
     "  spacectl escape-test ID --format sarif --output report.sarif   (for code scanning)\n"
     "  formats: text, json, tap, junit, sarif, html; --only 'fs.*' runs a subset\n"},
    {"files", "where spacectl finds its pins, profiles and the suite",
     "Nothing is configured: spacectl looks next to its own executable. In a build tree that is\n"
     "build/<preset>/bin/ (gatekeeper-image.id, space-image.id, seccomp/, escape-suite). Installed,\n"
     "it is <prefix>/share/gatekeeper-spaces/ (pins, image archives, seccomp/) and\n"
     "<prefix>/libexec/gatekeeper-spaces/escape-suite. Host records (grant ids, never secrets) live\n"
     "in $XDG_STATE_HOME/spacectl (default ~/.local/state/spacectl); --state-dir overrides it.\n"},
    {"json", "machine-readable output and exit codes",
     "--json prints exactly one JSON document; an error is {\"error\":{\"code\":...,\"message\":...}}.\n"
     "Exit status: 0 done; 1 a place command failed; 2 usage or a refused value; 3 the place is\n"
     "unreachable or unusable; 4 no such space or not running; 5 verify failed; 6 the gatekeeper\n"
     "is not ready, refused or unreachable; 10-23 code in, 24-30 code out, 32-42 apply; 43-45 grants.\n"
     "`space exec` exits with the command's status.\n"},
}};
// clang-format on

}  // namespace

std::vector<std::string_view> help_topics() {
  std::vector<std::string_view> out;
  for (const Topic& t : kTopics) out.push_back(t.name);
  return out;
}

std::optional<std::string> help_text(std::string_view topic) {
  for (const Topic& t : kTopics)
    if (t.name == topic) return std::string(t.text);
  return std::nullopt;
}

std::string help_index() {
  std::string out = "spacectl help TOPIC, where TOPIC is one of:\n";
  for (const Topic& t : kTopics) {
    std::string name(t.name);
    name.resize(13, ' ');
    out += "  " + name + std::string(t.summary) + "\n";
  }
  out += "spacectl --help lists the commands; man spacectl has the whole manual.\n";
  return out;
}

}  // namespace controller
