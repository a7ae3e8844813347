#include "policy/idna.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "policy/name.h"

namespace policy {
namespace {

TEST(IdnaTest, AcceptsValidALabels) {
  for (const char* label : {"xn--bcher-kva", "xn--mnchen-3ya", "xn--fiqs8s", "xn--80akhbyknj4f", "xn--ida",
                            "xn--9ca"}) {
    EXPECT_TRUE(is_valid_a_label(label)) << label;
  }
}

TEST(IdnaTest, RefusesInvalidPunycode) {
  EXPECT_FALSE(is_valid_a_label("xn--"));                      // nothing encoded
  EXPECT_FALSE(is_valid_a_label("xn--9"));                     // a delta cut short
  EXPECT_FALSE(is_valid_a_label("xn--zzzzzzzzzzzz"));          // cut short after growing
  EXPECT_FALSE(is_valid_a_label("xn--99999999999999999999"));  // overflow or cut short
  EXPECT_FALSE(is_valid_a_label("xn--b_cher-kva"));            // a basic code point that is not LDH
  EXPECT_FALSE(is_valid_a_label("xn--bcher-k_a"));            // not a Punycode digit
}

TEST(IdnaTest, RefusesAnALabelThatDecodesToAsciiOnly) {
  // RFC 5891 §5.4: "xn--a-" decodes to "a"; an A-label must carry a non-ASCII code point.
  EXPECT_FALSE(is_valid_a_label("xn--a-"));
  EXPECT_FALSE(is_valid_a_label("xn--abc-"));
  EXPECT_FALSE(is_valid_a_label("xn---"));
}

TEST(IdnaTest, RefusesCodePointsIdna2008Disallows) {
  EXPECT_FALSE(is_valid_a_label("xn--abc"));      // U+0080..U+0082: C1 controls
  EXPECT_FALSE(is_valid_a_label("xn--ab-r13a"));  // "a\u3002b": ideographic full stop, a separator
  EXPECT_FALSE(is_valid_a_label("xn--ab-yu3n"));  // "a\uff0eb": full-width full stop
  EXPECT_FALSE(is_valid_a_label("xn--ab-m1t"));   // "a\u200db": zero width joiner
  EXPECT_FALSE(is_valid_a_label("xn--e28h"));     // U+1F600: an emoji
  EXPECT_FALSE(is_valid_a_label("xn--abc-mga"));  // "ab\u00b7c": middle dot (CONTEXTO)
  EXPECT_FALSE(is_valid_a_label("xn--b-5da"));    // "\u00c4b": upper case, not case-folded
  EXPECT_FALSE(is_valid_a_label("xn--pwa0e"));    // "\u0391\u03b2": Greek upper-case alpha
}

TEST(IdnaTest, RefusesStructuralShapes) {
  EXPECT_FALSE(is_valid_a_label("xn--a-wbb"));     // starts with a combining mark (U+0301)
  EXPECT_FALSE(is_valid_a_label("xn--ab---3ra"));  // "ab--\u00fc": hyphens in positions 3-4
  EXPECT_FALSE(is_valid_a_label("xn----dha"));     // "\u00fc-": ends with a hyphen
}

TEST(IdnaTest, NamePredicateAppliesTheALabelRule) {
  EXPECT_TRUE(is_name("xn--bcher-kva.example.com"));
  EXPECT_TRUE(is_name("www.xn--fiqs8s"));
  EXPECT_FALSE(is_name("xn--zz.example.com"));
  EXPECT_FALSE(is_name("www.xn--ab-r13a.com"));
  EXPECT_FALSE(is_name("www.xn--e28h.com"));
  EXPECT_TRUE(is_name("xn.example.com")) << "just outside: not an A-label";
  EXPECT_TRUE(is_name("xna--zz.example.com")) << "just outside: not the xn-- prefix";
  EXPECT_FALSE(checked_name("XN--ZZ.example.com").has_value()) << "upper-case prefix is normalised first";
}

TEST(IdnaTest, AgreesWithAReferenceDecoderOnCutShortDeltas) {
  // Verdicts of Python's punycode codec: "zzz" is U+7BA5, "zzzz" is cut short, and so on.
  EXPECT_TRUE(is_valid_a_label("xn--zzz"));
  EXPECT_FALSE(is_valid_a_label("xn--zzzz"));
  EXPECT_TRUE(is_valid_a_label("xn--zzzzz"));
  EXPECT_TRUE(is_valid_a_label("xn--zzzzzzz"));
}

TEST(IdnaTest, LongestLabelsEnd) {
  // 63 input bytes at most: the decoder is bounded whatever the digits.
  for (char c : std::string_view("az09")) {
    for (std::size_t n = 5; n <= kMaxLabelLength + 1; ++n) {
      const std::string label = "xn--" + std::string(n - 4, c);
      const bool valid = is_valid_a_label(label);
      if (n > kMaxLabelLength) {
        EXPECT_FALSE(valid) << label;
      }
    }
  }
}

}  // namespace
}  // namespace policy
