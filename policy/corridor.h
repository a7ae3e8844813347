// The corridor decision, in the reference's order
// (docs/reference-behaviour.md#corridor-order-of-checks), with the special-use names ahead of the
// name rule:
//   malformed target → always-refused name → special-use name → not a name → port → allowlist
//   → DNS answers.
// Two steps, because resolution happens between them:
//   1. decide_target(): everything that needs no DNS. Returns a denial, or a PendingResolution.
//   2. decide_answers(): every answer classified; any blocked answer (or one of our own
//      addresses) refuses the whole name; otherwise the address to dial is chosen.
// Only decide_answers() can create an ApprovedEndpoint: the connector dials nothing else
// (docs/decisions.md#dial-only-what-was-approved), so the name is never resolved twice.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/address.h"
#include "policy/decision.h"
#include "policy/ranges.h"

namespace policy {

inline constexpr std::uint16_t kCorridorPort = 443;
inline constexpr std::size_t kMaxAllowlistDomains = 500;

// Names refused in every mode, even when listed
// (docs/reference-behaviour.md#corridor-order-of-checks).
std::span<const std::string_view> always_refused_names();

enum class Mode : std::uint8_t { kAllowlist = 0, kOpen };  // zero value: the strict one
std::string_view mode_text(Mode mode);
std::optional<Mode> mode_from_text(std::string_view text);

struct NetworkPolicy {
  Mode mode = Mode::kAllowlist;
  std::set<std::string> domains;  // normalised names, each passed is_name()
};

// Authority form "host:port". Split at the last ':'; the port is 1..5 decimal digits without a
// leading zero, value 1..65535. The host is returned as sent (not normalised); brackets are not
// removed (so "[::1]" is then judged "not a name"). nullopt: malformed (no ':', empty host, bad
// port).
struct AuthorityTarget {
  std::string_view host;
  std::uint16_t port = 0;
};
std::optional<AuthorityTarget> split_target(std::string_view authority);

// The host and port to journal for a decision: the normalised name when there is one, else the
// host as sent (make_journal_record makes it printable and cuts it); port 0 when none.
struct JournalSubject {
  std::string host;
  std::uint16_t port = 0;
};

// Declared ahead so the friend declarations below name them (a friend declaration alone does
// not make a name visible to lookup).
struct TargetDecision;
struct AnswerDecision;

class PendingResolution {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  friend struct TargetDecision;
  friend TargetDecision decide_target(std::string_view, const NetworkPolicy&);
  PendingResolution(std::string name, std::uint16_t port) : name_(std::move(name)), port_(port) {}
  std::string name_;
  std::uint16_t port_;
};

struct TargetDecision {
  Decision decision;                       // deny:*, or kDenyUndecided while resolution is pending
  JournalSubject subject;
  std::optional<PendingResolution> pending;  // set only when every rule before DNS passed
};

TargetDecision decide_target(std::string_view authority, const NetworkPolicy& policy);

// The endpoint the connector may dial. Only decide_answers() creates one.
class ApprovedEndpoint {
 public:
  [[nodiscard]] const Address& address() const noexcept { return address_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  friend struct AnswerDecision;
  friend AnswerDecision decide_answers(const PendingResolution&, std::span<const Address>,
                                       std::span<const Address>, std::span<const Range>);
  ApprovedEndpoint(Address address, std::uint16_t port, std::string name)
      : address_(address), port_(port), name_(std::move(name)) {}
  Address address_;
  std::uint16_t port_;
  std::string name_;
};

struct AnswerDecision {
  Decision decision;                        // allow, deny:blocked-address, deny:unresolved:no-answer
  JournalSubject subject;
  std::optional<ApprovedEndpoint> endpoint;  // set exactly when decision.allowed()
};

// `answers`: every A and AAAA answer, in resolver order. `own_addresses`: the gatekeeper's own
// interface addresses (refused like blocked ranges). `operator_blocked`: the ranges the operator
// added (serve --block, POST /blocked), refused like the table's rows. No answers →
// deny:unresolved:no-answer. Choice: the first IPv4 answer in resolver order, else the first answer.
AnswerDecision decide_answers(const PendingResolution& pending, std::span<const Address> answers,
                              std::span<const Address> own_addresses,
                              std::span<const Range> operator_blocked = {});

}  // namespace policy
