#include "policy/decision.h"

#include <array>

namespace policy {
namespace {

// Enum order; all_words() and the round-trip test depend on it covering every enumerator.
constexpr std::array<Word, 26> kAllWords = {
    Word::kDenyUndecided,
    Word::kAllow,
    Word::kFailed,
    Word::kDenyNotAName,
    Word::kDenyNotOnAllowlist,
    Word::kDenyPort,
    Word::kDenyAlwaysRefused,
    Word::kDenyBlockedAddress,
    Word::kDenyUnresolved,
    Word::kDenyTooManyTunnels,
    Word::kDenyTooManyConnections,
    Word::kDenyMalformed,
    Word::kDenyUnreadableRequest,
    Word::kDenyNotConnect,
    Word::kDenyNoGrant,
    Word::kDenyPathWalksOut,
    Word::kDenyOwnListener,
    Word::kDenyBadWindowKey,
    Word::kDenyNotTls,
    Word::kDenyTlsOversize,
    Word::kDenyTlsNoSni,
    Word::kDenyTlsSniMismatch,
    Word::kDenyTlsEch,
    Word::kDenyTlsTimeout,
    Word::kDenyPolicyChanged,
    Word::kDenySpecialUseName,
};
static_assert(static_cast<std::size_t>(Word::kDenySpecialUseName) + 1 == kAllWords.size(),
              "a new Word needs its place in kAllWords, word_text() and word_takes_detail()");

// Replaces a missing or unsafe detail so that text chosen by a space or a resolver never
// reaches the journal verbatim.
constexpr std::string_view kOtherDetail = "other";

bool is_detail_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::span<const Word> all_words() { return kAllWords; }

std::string_view word_text(Word word) {
  // The journal's stable words (docs/reference-behaviour.md#decision-words). Changing one breaks
  // every reader.
  switch (word) {
    case Word::kDenyUndecided: return "deny:undecided";
    case Word::kAllow: return "allow";
    case Word::kFailed: return "failed";
    case Word::kDenyNotAName: return "deny:not-a-name";
    case Word::kDenyNotOnAllowlist: return "deny:not-on-allowlist";
    case Word::kDenyPort: return "deny:port";
    case Word::kDenyAlwaysRefused: return "deny:always-refused";
    case Word::kDenyBlockedAddress: return "deny:blocked-address";
    case Word::kDenyUnresolved: return "deny:unresolved";
    case Word::kDenyTooManyTunnels: return "deny:too-many-tunnels";
    case Word::kDenyTooManyConnections: return "deny:too-many-connections";
    case Word::kDenyMalformed: return "deny:malformed";
    case Word::kDenyUnreadableRequest: return "deny:unreadable-request";
    case Word::kDenyNotConnect: return "deny:not-connect";
    case Word::kDenyNoGrant: return "deny:no-grant";
    case Word::kDenyPathWalksOut: return "deny:path-walks-out";
    case Word::kDenyOwnListener: return "deny:own-listener";
    case Word::kDenyBadWindowKey: return "deny:bad-window-key";
    case Word::kDenyNotTls: return "deny:not-tls";
    case Word::kDenyTlsOversize: return "deny:tls-oversize";
    case Word::kDenyTlsNoSni: return "deny:tls-no-sni";
    case Word::kDenyTlsSniMismatch: return "deny:tls-sni-mismatch";
    case Word::kDenyTlsEch: return "deny:tls-ech";
    case Word::kDenyTlsTimeout: return "deny:tls-timeout";
    case Word::kDenyPolicyChanged: return "deny:policy-changed";
    case Word::kDenySpecialUseName: return "deny:special-use-name";
  }
  // Unreachable for a valid enumerator; a corrupted value must not become a word that allows.
  return "deny:undecided";
}

std::optional<Word> word_from_text(std::string_view text) {
  for (Word word : kAllWords) {
    if (word_text(word) == text) return word;
  }
  return std::nullopt;
}

bool word_takes_detail(Word word) {
  switch (word) {
    case Word::kFailed:
    case Word::kDenyUnresolved:
      return true;
    case Word::kDenyUndecided:
    case Word::kAllow:
    case Word::kDenyNotAName:
    case Word::kDenyNotOnAllowlist:
    case Word::kDenyPort:
    case Word::kDenyAlwaysRefused:
    case Word::kDenyBlockedAddress:
    case Word::kDenyTooManyTunnels:
    case Word::kDenyTooManyConnections:
    case Word::kDenyMalformed:
    case Word::kDenyUnreadableRequest:
    case Word::kDenyNotConnect:
    case Word::kDenyNoGrant:
    case Word::kDenyPathWalksOut:
    case Word::kDenyOwnListener:
    case Word::kDenyBadWindowKey:
    case Word::kDenyNotTls:
    case Word::kDenyTlsOversize:
    case Word::kDenyTlsNoSni:
    case Word::kDenyTlsSniMismatch:
    case Word::kDenyTlsEch:
    case Word::kDenyTlsTimeout:
    case Word::kDenyPolicyChanged:
    case Word::kDenySpecialUseName:
      return false;
  }
  return false;
}

bool is_valid_detail(std::string_view detail) {
  if (detail.empty() || detail.size() > kMaxDetailLength) return false;
  for (char c : detail) {
    if (!is_detail_char(c)) return false;
  }
  return true;
}

Decision Decision::of(Word word) { return with_detail(word, {}); }

Decision Decision::with_detail(Word word, std::string_view detail) {
  Decision decision;
  decision.word_ = word;
  // A word without a detail never carries one, so two equal words compare equal.
  if (word_takes_detail(word)) {
    decision.detail_ = is_valid_detail(detail) ? std::string(detail) : std::string(kOtherDetail);
  }
  return decision;
}

std::string Decision::text() const {
  std::string out(word_text(word_));
  if (word_takes_detail(word_)) {
    out += ':';
    out += is_valid_detail(detail_) ? std::string_view(detail_) : kOtherDetail;
  }
  return out;
}

}  // namespace policy
