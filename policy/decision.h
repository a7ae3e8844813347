// The decision vocabulary: the words the journal writes, one enum with stable strings.
// The words: docs/reference-behaviour.md#decision-words, plus our own words
// (deny:undecided, deny:bad-window-key). A default-constructed Decision denies
// (docs/decisions.md#deny-is-the-zero-value).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace policy {

enum class Word : std::uint8_t {
  kDenyUndecided = 0,        // zero value: no rule said allow, so nothing goes out
  kAllow,                    // passed every rule
  kFailed,                   // allowed, but the connection out failed: "failed:<detail>"
  kDenyNotAName,             // address literal or not a multi-label ASCII domain name
  kDenyNotOnAllowlist,       // allowlist mode and the name is not listed exactly
  kDenyPort,                 // port other than 443
  kDenyAlwaysRefused,        // a name refused in every mode (auth.openai.com)
  kDenyBlockedAddress,       // some DNS answer is in a blocked range or is our own address
  kDenyUnresolved,           // DNS gave nothing usable: "deny:unresolved:<detail>"
  kDenyTooManyTunnels,       // tunnel cap reached (503)
  kDenyTooManyConnections,   // socket accepted past a listener cap (rate-limited note)
  kDenyMalformed,            // CONNECT target is not host:port in authority form (400)
  kDenyUnreadableRequest,    // the HTTP parser refused the request or its deadline passed (note)
  kDenyNotConnect,           // plain-proxy request on the corridor
  kDenyNoGrant,              // window: unknown grant or not a window route
  kDenyPathWalksOut,         // window: the rest of the path climbs out of the grant
  kDenyOwnListener,          // window: upstream is one of the gatekeeper's own listeners
  kDenyBadWindowKey,         // window: missing or wrong window key
  kDenyNotTls,               // corridor: the first bytes in the tunnel are not a TLS ClientHello
  kDenyTlsOversize,          // corridor: the ClientHello (or a record of it) is over its cap
  kDenyTlsNoSni,             // corridor: the ClientHello names no server
  kDenyTlsSniMismatch,       // corridor: the ClientHello names another server than the CONNECT
  kDenyTlsEch,               // corridor: the ClientHello carries Encrypted Client Hello
  kDenyTlsTimeout,           // corridor: no whole ClientHello before the deadline
  kDenyPolicyChanged,        // a live tunnel or grant connection the host's new policy refuses
  kDenySpecialUseName,       // a special-use name (policy/special_names.h), refused before DNS
};

// Every word, in enum order (tests and `--help` walk it).
std::span<const Word> all_words();

// The stable text of a word without its detail ("failed", "deny:unresolved", "allow", ...).
std::string_view word_text(Word word);

// Parses a stable word text back (no detail). nullopt for anything else.
std::optional<Word> word_from_text(std::string_view text);

// True for kFailed and kDenyUnresolved, whose journal text carries ":<detail>".
bool word_takes_detail(Word word);

// A detail is 1..kMaxDetailLength characters of [A-Za-z0-9_-] (an errno name, "timeout",
// "no-answer", ...). Anything else is replaced by "other" so hostile text never reaches the journal.
inline constexpr std::size_t kMaxDetailLength = 32;
bool is_valid_detail(std::string_view detail);

class Decision {
 public:
  Decision() = default;  // deny:undecided
  static Decision of(Word word);
  // For kFailed / kDenyUnresolved. An invalid detail becomes "other".
  static Decision with_detail(Word word, std::string_view detail);

  [[nodiscard]] Word word() const noexcept { return word_; }
  [[nodiscard]] bool allowed() const noexcept { return word_ == Word::kAllow; }
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }
  // The journal text: "allow", "deny:port", "failed:ECONNREFUSED", "deny:unresolved:no-answer".
  [[nodiscard]] std::string text() const;

  friend bool operator==(const Decision&, const Decision&) = default;

 private:
  Word word_ = Word::kDenyUndecided;
  std::string detail_;
};

}  // namespace policy
