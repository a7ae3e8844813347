#include "policy/special_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "policy/corridor.h"
#include "policy/ranges.h"

namespace policy {
namespace {

TEST(SpecialNamesTest, EveryRowHasItsReferenceAndReason) {
  std::set<std::string_view> seen;
  for (const SpecialUseName& row : special_use_names()) {
    EXPECT_FALSE(row.suffix.empty());
    EXPECT_FALSE(row.rfc.empty()) << row.suffix;
    EXPECT_FALSE(row.reason.empty()) << row.suffix;
    EXPECT_TRUE(seen.insert(row.suffix).second) << row.suffix;
    EXPECT_FALSE(row.suffix.starts_with('.') || row.suffix.ends_with('.')) << row.suffix;
  }
  for (const char* s : {"localhost", "local", "onion", "invalid", "test", "example", "home.arpa", "internal",
                        "alt", "in-addr.arpa", "ip6.arpa", "ipv4only.arpa"}) {
    EXPECT_EQ(seen.count(s), 1u) << s;
  }
}

TEST(SpecialNamesTest, OnlyTestIsKeptByTheTestBuild) {
  for (const SpecialUseName& row : special_use_names()) {
    EXPECT_EQ(row.allowed_in_test_build, row.suffix == "test") << row.suffix;
  }
}

TEST(SpecialNamesTest, TheReleaseBuildRefusesEverySuffixAndItsSubdomains) {
  ASSERT_FALSE(unsafe_test_ranges_public());
  for (const SpecialUseName& row : special_use_names()) {
    const std::string suffix(row.suffix);
    EXPECT_EQ(special_use_row(suffix), &row) << suffix;
    EXPECT_EQ(special_use_row("a." + suffix), &row) << suffix;
    EXPECT_EQ(special_use_row("a.b-c." + suffix), &row) << suffix;
  }
}

TEST(SpecialNamesTest, MatchesWholeLabelsOnly) {
  EXPECT_EQ(special_use_row("notlocalhost"), nullptr);
  EXPECT_EQ(special_use_row("localhost.com"), nullptr);
  EXPECT_EQ(special_use_row("mylocal"), nullptr);
  EXPECT_EQ(special_use_row("example.com"), nullptr) << "the second-level example.com is a real zone";
  EXPECT_EQ(special_use_row("example.org"), nullptr);
  EXPECT_EQ(special_use_row("arpa"), nullptr);
  EXPECT_EQ(special_use_row("foo.arpa"), nullptr);
  EXPECT_EQ(special_use_row("xin-addr.arpa"), nullptr);
  EXPECT_EQ(special_use_row("internal.example.com"), nullptr);
  EXPECT_EQ(special_use_row("onion.com"), nullptr);
}

TEST(SpecialNamesTest, CorridorAnswersEverySpecialUseNameWithItsWordBeforeAnyQuery) {
  NetworkPolicy open;
  open.mode = Mode::kOpen;
  for (const SpecialUseName& row : special_use_names()) {
    for (const std::string& host : {std::string(row.suffix), "a." + std::string(row.suffix),
                                    "A." + std::string(row.suffix) + "."}) {
      const TargetDecision d = decide_target(host + ":443", open);
      EXPECT_EQ(d.decision.word(), Word::kDenySpecialUseName) << host;
      EXPECT_FALSE(d.pending.has_value()) << host;
    }
  }
  // In allowlist mode too, even when listed.
  NetworkPolicy listed;
  listed.domains.insert("printer.local");
  EXPECT_EQ(decide_target("printer.local:443", listed).decision.word(), Word::kDenySpecialUseName);
  // And whatever the port: the name is the reason.
  EXPECT_EQ(decide_target("x.onion:80", open).decision.word(), Word::kDenySpecialUseName);
  EXPECT_EQ(decide_target("metadata.google.internal:443", open).decision.word(), Word::kDenySpecialUseName);
  EXPECT_EQ(decide_target("1.0.0.127.in-addr.arpa:443", open).decision.word(), Word::kDenySpecialUseName);
  // Just outside: an ordinary name still waits for DNS.
  EXPECT_TRUE(decide_target("example.com:443", open).pending.has_value());
}

}  // namespace
}  // namespace policy
