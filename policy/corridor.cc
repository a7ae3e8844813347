#include "policy/corridor.h"

#include <algorithm>
#include <array>
#include <utility>

#include "policy/crash.h"
#include "policy/name.h"
#include "policy/ranges.h"
#include "policy/special_names.h"

namespace policy {
namespace {

constexpr std::size_t kMaxPortDigits = 5;
constexpr std::uint32_t kMaxPort = 65535;

// Strict decimal port: 1..5 ASCII digits, no leading zero, value 1..65535. JavaScript's Number()
// also reads "0x1bb", "+443", "443.0" and "4.43e2" as 443
// (docs/reference-behaviour.md#corridor-port-parsing); a second reading of the same text is a
// parser differential, so those are malformed here.
std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > kMaxPortDigits || text[0] == '0') return std::nullopt;
  std::uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (value > kMaxPort) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

bool is_always_refused(std::string_view normalised) {
  for (std::string_view refused : always_refused_names()) {
    if (normalised == refused) return true;
  }
  return false;
}

bool is_own_address(const Address& address, std::span<const Address> own_addresses) {
  for (const Address& own : own_addresses) {
    if (own == address) return true;
  }
  return false;
}

}  // namespace

std::span<const std::string_view> always_refused_names() {
  // The reference's ALWAYS_REFUSED: the sign-in host whose tokens outlive the space.
  static constexpr std::array<std::string_view, 1> kNames = {"auth.openai.com"};
  return kNames;
}

std::string_view mode_text(Mode mode) {
  switch (mode) {
    case Mode::kAllowlist:
      return "allowlist";
    case Mode::kOpen:
      return "open";
  }
  contract_broken();  // a Mode outside its enumerators: memory corruption, not input
}

std::optional<Mode> mode_from_text(std::string_view text) {
  if (text == "allowlist") return Mode::kAllowlist;
  if (text == "open") return Mode::kOpen;
  return std::nullopt;
}

std::optional<AuthorityTarget> split_target(std::string_view authority) {
  std::size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::optional<std::uint16_t> port = parse_port(authority.substr(colon + 1));
  if (!port) return std::nullopt;
  return AuthorityTarget{authority.substr(0, colon), *port};
}

TargetDecision decide_target(std::string_view authority, const NetworkPolicy& policy) {
  TargetDecision out;
  std::optional<AuthorityTarget> target = split_target(authority);
  if (!target) {
    out.decision = Decision::of(Word::kDenyMalformed);
    return out;
  }
  std::string normalised = normalise_name(target->host);
  bool name = is_name(normalised);
  out.subject.host = name ? normalised : std::string(target->host);
  out.subject.port = target->port;

  // Before the port rule and in every mode, so the journal says why even "auth.openai.com:80"
  // can never pass (docs/reference-behaviour.md#corridor-order-of-checks).
  if (is_always_refused(normalised)) {
    out.decision = Decision::of(Word::kDenyAlwaysRefused);
    return out;
  }
  // Before the name rule, so "localhost" (one label) is answered with its own word too; by name,
  // so the resolver never sees it (policy/special_names.h).
  if (special_use_row(normalised) != nullptr) {
    out.decision = Decision::of(Word::kDenySpecialUseName);
    return out;
  }
  if (!name) {
    out.decision = Decision::of(Word::kDenyNotAName);
    return out;
  }
  if (target->port != kCorridorPort) {
    out.decision = Decision::of(Word::kDenyPort);
    return out;
  }
  switch (policy.mode) {
    case Mode::kAllowlist:
      if (!policy.domains.contains(normalised)) {
        out.decision = Decision::of(Word::kDenyNotOnAllowlist);
        return out;
      }
      break;
    case Mode::kOpen:
      break;
  }
  out.pending = PendingResolution(std::move(normalised), target->port);
  return out;
}

AnswerDecision decide_answers(const PendingResolution& pending, std::span<const Address> answers,
                              std::span<const Address> own_addresses,
                              std::span<const Range> operator_blocked) {
  AnswerDecision out;
  out.subject.host = pending.name();
  out.subject.port = pending.port();
  if (answers.empty()) {
    out.decision = Decision::with_detail(Word::kDenyUnresolved, "no-answer");
    return out;
  }
  // Every answer is judged, not only the one dialled: a name that answers with one private
  // address is pointed at the inside on purpose (docs/reference-behaviour.md#resolution).
  const Address* chosen = nullptr;
  for (const Address& answer : answers) {
    if (classify(answer).blocked || is_own_address(answer, own_addresses) ||
        in_any_range(operator_blocked, answer)) {
      out.decision = Decision::of(Word::kDenyBlockedAddress);
      return out;
    }
    if (chosen == nullptr && answer.is_v4()) chosen = &answer;
  }
  // The first IPv4 answer in resolver order, else the first answer: the outer network has IPv6
  // off, so an IPv6-only name is still tried and fails visibly.
  if (chosen == nullptr) chosen = &answers.front();
  out.decision = Decision::of(Word::kAllow);
  out.endpoint = ApprovedEndpoint(*chosen, pending.port(), pending.name());
  return out;
}

}  // namespace policy
