#include "policy/decision.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace policy {
namespace {

TEST(DecisionTest, DefaultDecisionDenies) {
  const Decision decision;
  EXPECT_FALSE(decision.allowed());
  EXPECT_EQ(decision.word(), Word::kDenyUndecided);
  EXPECT_EQ(decision.text(), "deny:undecided");
}

TEST(DecisionTest, ZeroWordIsUndecided) {
  EXPECT_EQ(static_cast<int>(Word{}), static_cast<int>(Word::kDenyUndecided));
}

TEST(DecisionTest, OnlyAllowIsAllowed) {
  for (Word word : all_words()) {
    EXPECT_EQ(Decision::of(word).allowed(), word == Word::kAllow) << word_text(word);
  }
}

// One test per word: the journal's readers depend on these exact strings
// (docs/decisions.md#invariants-are-tests).
TEST(DecisionTest, WordUndecidedText) { EXPECT_EQ(word_text(Word::kDenyUndecided), "deny:undecided"); }
TEST(DecisionTest, WordAllowText) { EXPECT_EQ(word_text(Word::kAllow), "allow"); }
TEST(DecisionTest, WordFailedText) { EXPECT_EQ(word_text(Word::kFailed), "failed"); }
TEST(DecisionTest, WordNotANameText) { EXPECT_EQ(word_text(Word::kDenyNotAName), "deny:not-a-name"); }
TEST(DecisionTest, WordNotOnAllowlistText) {
  EXPECT_EQ(word_text(Word::kDenyNotOnAllowlist), "deny:not-on-allowlist");
}
TEST(DecisionTest, WordPortText) { EXPECT_EQ(word_text(Word::kDenyPort), "deny:port"); }
TEST(DecisionTest, WordAlwaysRefusedText) {
  EXPECT_EQ(word_text(Word::kDenyAlwaysRefused), "deny:always-refused");
}
TEST(DecisionTest, WordBlockedAddressText) {
  EXPECT_EQ(word_text(Word::kDenyBlockedAddress), "deny:blocked-address");
}
TEST(DecisionTest, WordUnresolvedText) {
  EXPECT_EQ(word_text(Word::kDenyUnresolved), "deny:unresolved");
}
TEST(DecisionTest, WordTooManyTunnelsText) {
  EXPECT_EQ(word_text(Word::kDenyTooManyTunnels), "deny:too-many-tunnels");
}
TEST(DecisionTest, WordTooManyConnectionsText) {
  EXPECT_EQ(word_text(Word::kDenyTooManyConnections), "deny:too-many-connections");
}
TEST(DecisionTest, WordMalformedText) { EXPECT_EQ(word_text(Word::kDenyMalformed), "deny:malformed"); }
TEST(DecisionTest, WordUnreadableRequestText) {
  EXPECT_EQ(word_text(Word::kDenyUnreadableRequest), "deny:unreadable-request");
}
TEST(DecisionTest, WordNotConnectText) {
  EXPECT_EQ(word_text(Word::kDenyNotConnect), "deny:not-connect");
}
TEST(DecisionTest, WordNoGrantText) { EXPECT_EQ(word_text(Word::kDenyNoGrant), "deny:no-grant"); }
TEST(DecisionTest, WordPathWalksOutText) {
  EXPECT_EQ(word_text(Word::kDenyPathWalksOut), "deny:path-walks-out");
}
TEST(DecisionTest, WordOwnListenerText) {
  EXPECT_EQ(word_text(Word::kDenyOwnListener), "deny:own-listener");
}
TEST(DecisionTest, WordBadWindowKeyText) {
  EXPECT_EQ(word_text(Word::kDenyBadWindowKey), "deny:bad-window-key");
}

TEST(DecisionTest, WordsOfTheTunnelsFirstFlight) {
  EXPECT_EQ(word_text(Word::kDenyNotTls), "deny:not-tls");
  EXPECT_EQ(word_text(Word::kDenyTlsOversize), "deny:tls-oversize");
  EXPECT_EQ(word_text(Word::kDenyTlsNoSni), "deny:tls-no-sni");
  EXPECT_EQ(word_text(Word::kDenyTlsSniMismatch), "deny:tls-sni-mismatch");
  EXPECT_EQ(word_text(Word::kDenyTlsEch), "deny:tls-ech");
  EXPECT_EQ(word_text(Word::kDenyTlsTimeout), "deny:tls-timeout");
}
TEST(DecisionTest, WordPolicyChangedText) {
  EXPECT_EQ(word_text(Word::kDenyPolicyChanged), "deny:policy-changed");
}

TEST(DecisionTest, WordSpecialUseNameText) {
  EXPECT_EQ(word_text(Word::kDenySpecialUseName), "deny:special-use-name");
}

TEST(DecisionTest, AllWordsAreDistinctAndInEnumOrder) {
  const auto words = all_words();
  ASSERT_EQ(words.size(), 26u);
  std::set<std::string_view> texts;
  for (std::size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(words[i]), i);
    texts.insert(word_text(words[i]));
  }
  EXPECT_EQ(texts.size(), words.size());
}

TEST(DecisionTest, WordFromTextRoundTripsEveryWord) {
  for (Word word : all_words()) {
    const std::optional<Word> back = word_from_text(word_text(word));
    ASSERT_TRUE(back.has_value()) << word_text(word);
    EXPECT_EQ(*back, word);
  }
}

TEST(DecisionTest, WordFromTextRefusesOtherTexts) {
  EXPECT_FALSE(word_from_text(""));
  EXPECT_FALSE(word_from_text("deny"));
  EXPECT_FALSE(word_from_text("ALLOW"));
  EXPECT_FALSE(word_from_text("allow "));
  EXPECT_FALSE(word_from_text("failed:ECONNREFUSED"));  // a detail is not part of the word
  EXPECT_FALSE(word_from_text("deny:unresolved:ENOTFOUND"));
}

TEST(DecisionTest, OnlyFailedAndUnresolvedTakeDetail) {
  for (Word word : all_words()) {
    EXPECT_EQ(word_takes_detail(word), word == Word::kFailed || word == Word::kDenyUnresolved)
        << word_text(word);
  }
}

TEST(DecisionTest, FailedTextCarriesDetail) {
  EXPECT_EQ(Decision::with_detail(Word::kFailed, "ECONNREFUSED").text(), "failed:ECONNREFUSED");
  EXPECT_EQ(Decision::with_detail(Word::kFailed, "timeout").text(), "failed:timeout");
}

TEST(DecisionTest, UnresolvedTextCarriesDetail) {
  EXPECT_EQ(Decision::with_detail(Word::kDenyUnresolved, "no-answer").text(),
            "deny:unresolved:no-answer");
  EXPECT_EQ(Decision::with_detail(Word::kDenyUnresolved, "EAI_AGAIN").text(),
            "deny:unresolved:EAI_AGAIN");
}

TEST(DecisionTest, MissingDetailBecomesOther) {
  EXPECT_EQ(Decision::of(Word::kFailed).text(), "failed:other");
  EXPECT_EQ(Decision::of(Word::kDenyUnresolved).text(), "deny:unresolved:other");
  EXPECT_EQ(Decision::with_detail(Word::kFailed, "").text(), "failed:other");
}

TEST(DecisionTest, HostileDetailBecomesOther) {
  const std::string_view hostile[] = {"a b", "x\r\ny", "no address", "a:b",  "\xc3\xa9",
                                     "a/b", "\"q\"",  std::string_view("a\0b", 3)};
  for (std::string_view bad : hostile) {
    EXPECT_EQ(Decision::with_detail(Word::kFailed, bad).text(), "failed:other") << bad;
  }
}

TEST(DecisionTest, DetailAtLimitIsKeptAndOnePastBecomesOther) {
  const std::string at_limit(kMaxDetailLength, 'E');
  const std::string past_limit(kMaxDetailLength + 1, 'E');
  EXPECT_TRUE(is_valid_detail(at_limit));
  EXPECT_FALSE(is_valid_detail(past_limit));
  EXPECT_EQ(Decision::with_detail(Word::kFailed, at_limit).text(), "failed:" + at_limit);
  EXPECT_EQ(Decision::with_detail(Word::kFailed, past_limit).text(), "failed:other");
}

TEST(DecisionTest, ValidDetailCharacters) {
  EXPECT_TRUE(is_valid_detail("ECONNREFUSED"));
  EXPECT_TRUE(is_valid_detail("EAI_AGAIN"));
  EXPECT_TRUE(is_valid_detail("no-answer"));
  EXPECT_TRUE(is_valid_detail("a9"));
  EXPECT_FALSE(is_valid_detail(""));
  EXPECT_FALSE(is_valid_detail("a.b"));
}

TEST(DecisionTest, WordWithoutDetailIgnoresOne) {
  const Decision decision = Decision::with_detail(Word::kDenyPort, "ECONNREFUSED");
  EXPECT_EQ(decision.text(), "deny:port");
  EXPECT_TRUE(decision.detail().empty());
  EXPECT_EQ(decision, Decision::of(Word::kDenyPort));
}

TEST(DecisionTest, TextOfEveryWordWithoutDetailIsTheWord) {
  for (Word word : all_words()) {
    if (word_takes_detail(word)) continue;
    EXPECT_EQ(Decision::of(word).text(), word_text(word));
  }
}

TEST(DecisionTest, DecisionsWithDifferentDetailsDiffer) {
  EXPECT_NE(Decision::with_detail(Word::kFailed, "ECONNRESET"),
            Decision::with_detail(Word::kFailed, "ECONNREFUSED"));
}

}  // namespace
}  // namespace policy
