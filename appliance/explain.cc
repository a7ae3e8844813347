#include "appliance/explain.h"

#include <span>
#include <string_view>

#include "policy/address.h"
#include "policy/client_hello.h"
#include "policy/corridor.h"
#include "policy/name.h"

namespace appliance {
namespace {

constexpr std::string_view kUsage =
    "usage: gatekeeper explain [--mode allowlist|open] [--allow NAME]... [--answer ADDRESS]... "
    "[--block CIDR]... [--server-name NAME] [--] TARGET\n"
    "  Prints the decision word the corridor would journal for CONNECT TARGET (authority form,\n"
    "  e.g. example.com:443), assuming the DNS answers given with --answer. Touches no network.\n"
    "  The mode is allowlist unless --mode open is given; --allow names the allowlist entries.\n"
    "  --block: a range refused on top of the table, as serve --block.\n"
    "  --server-name: the word for a tunnel whose TLS ClientHello names NAME (after the CONNECT\n"
    "  itself was allowed): allow only when NAME is the CONNECT name.\n"
    "  Put -- before a TARGET that starts with '-'.\n"
    "  Exit 0 when a word is printed, 2 on bad usage.\n";

ExplainOutcome usage_error(std::string message) {
  ExplainOutcome outcome;
  outcome.exit_code = 2;
  outcome.err = "gatekeeper explain: " + message + "\n" + std::string(kUsage);
  return outcome;
}

}  // namespace

ExplainOutcome run_explain(const std::vector<std::string>& args) {
  policy::NetworkPolicy network;
  std::vector<policy::Address> answers;
  std::optional<std::string> target;
  std::optional<std::string> server_name;
  std::vector<policy::Range> blocked;

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "--help" || arg == "-h") {
      ExplainOutcome outcome;
      outcome.exit_code = 0;
      outcome.out = std::string(kUsage);
      return outcome;
    }
    if (arg == "--mode") {
      if (!has_value) return usage_error("--mode needs a value (allowlist or open)");
      auto mode = policy::mode_from_text(args[++i]);
      if (!mode) return usage_error("--mode '" + args[i] + "': expected allowlist or open");
      network.mode = *mode;
    } else if (arg == "--allow") {
      if (!has_value) return usage_error("--allow needs a NAME");
      auto name = policy::checked_name(args[++i]);
      if (!name) {
        return usage_error("--allow '" + args[i] +
                           "': not a domain name (exact names only, no wildcards, no addresses)");
      }
      network.domains.insert(*name);
      if (network.domains.size() > policy::kMaxAllowlistDomains) {
        return usage_error("--allow: at most 500 domains");
      }
    } else if (arg == "--answer") {
      if (!has_value) return usage_error("--answer needs an ADDRESS");
      auto address = policy::parse_answer(args[++i]);
      if (!address) {
        return usage_error("--answer '" + args[i] +
                           "': not a dotted-quad IPv4 or RFC 4291 IPv6 address");
      }
      answers.push_back(*address);
    } else if (arg == "--block") {
      if (!has_value) return usage_error("--block needs a CIDR");
      auto range = policy::parse_operator_range(args[++i]);
      if (!range) return usage_error("--block '" + args[i] + "': expected ADDRESS/LENGTH with no host bit set past LENGTH");
      blocked.push_back(*range);
    } else if (arg == "--server-name") {
      if (!has_value) return usage_error("--server-name needs a NAME");
      server_name = args[++i];
    } else if (arg == "--") {
      if (i + 2 != args.size()) return usage_error("expected exactly one TARGET after --");
      target = args[i + 1];
      break;
    } else if (arg.size() > 1 && arg.starts_with("--")) {
      return usage_error("unknown option '" + arg + "'");
    } else {
      if (target) return usage_error("expected exactly one TARGET, got a second: '" + arg + "'");
      target = arg;
    }
  }
  if (!target) return usage_error("missing TARGET");

  ExplainOutcome outcome;
  outcome.exit_code = 0;
  policy::TargetDecision first = policy::decide_target(*target, network);
  if (!first.pending) {
    outcome.out = first.decision.text() + "\n";
    return outcome;
  }
  // No own addresses here: explain has no interfaces to compare with.
  policy::AnswerDecision second =
      policy::decide_answers(*first.pending, answers, std::span<const policy::Address>(), blocked);
  if (second.endpoint && server_name) {
    policy::ClientHello hello;
    hello.status = policy::HelloStatus::kComplete;
    hello.server_name = *server_name;
    outcome.out = policy::decide_client_hello(hello, second.endpoint->name()).text() + "\n";
    return outcome;
  }
  outcome.out = second.decision.text() + "\n";
  return outcome;
}

}  // namespace appliance
