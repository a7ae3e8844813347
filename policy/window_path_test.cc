#include "policy/window_path.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace policy {
namespace {

// The rule exactly as window_path.h states it, rewriting the whole form every round. The
// implementation is linear instead; this is the specification it must agree with.
// Well-formed UTF-8 by decoding each code point and checking it needed exactly its length.
bool utf8_by_code_points(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? b : b & (0xff >> (n + 1));
    for (std::size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 0x2) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    const std::size_t needed = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (needed != n || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

bool clean_by_spec(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return utf8_by_code_points(s);
}

bool walks_out_by_rounds(std::string_view rest) {
  // RFC 3986 §3.3/§3.4: the characters of a path and query, spelled out.
  constexpr std::string_view kTargetChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:@/?";
  for (char c : rest) {
    if (kTargetChars.find(c) == std::string_view::npos) return true;
  }
  if (!clean_by_spec(rest)) return true;
  const auto has_dot_dot = [](std::string_view form) {
    std::size_t start = 0;
    for (std::size_t i = 0; i <= form.size(); ++i) {
      if (i == form.size() || std::string_view("/\\;?#").find(form[i]) != std::string_view::npos) {
        if (form.substr(start, i - start) == "..") return true;
        start = i + 1;
      }
    }
    return false;
  };
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string form(rest);
  for (;;) {
    if (has_dot_dot(form)) return true;
    if (form.find('%') == std::string::npos) return !clean_by_spec(form);
    std::string decoded;
    for (std::size_t i = 0; i < form.size(); ++i) {
      if (form[i] != '%') {
        decoded += form[i];
        continue;
      }
      if (i + 2 >= form.size() || hex(form[i + 1]) < 0 || hex(form[i + 2]) < 0) return true;
      decoded += static_cast<char>(hex(form[i + 1]) * 16 + hex(form[i + 2]));
      i += 2;
    }
    if (decoded == form) return false;
    form = decoded;
  }
}

// `times` rounds of percent-encoding of every byte of `text` on the first round, then of the
// '%' signs on later rounds (so "%2e" becomes "%252e", then "%25252e").
std::string encode_times(std::string_view text, int times) {
  std::string out;
  for (char c : text) {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto b = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  for (int round = 1; round < times; ++round) {
    std::string next;
    for (char c : out) next += c == '%' ? std::string("%25") : std::string(1, c);
    out = next;
  }
  return out;
}

// docs/reference-behaviour.md#window-path-rule, refused list.
TEST(WindowPathTest, RefusesPlainDotDot) { EXPECT_TRUE(walks_out("/../admin")); }
TEST(WindowPathTest, RefusesEncodedDotDot) { EXPECT_TRUE(walks_out("/%2e%2e/admin")); }
TEST(WindowPathTest, RefusesDotDotBeforeEncodedSlash) { EXPECT_TRUE(walks_out("/..%2fadmin")); }
TEST(WindowPathTest, RefusesHalfEncodedDotDot) { EXPECT_TRUE(walks_out("/.%2e/admin")); }
TEST(WindowPathTest, RefusesDotDotBeforeEncodedBackslash) { EXPECT_TRUE(walks_out("/x/..%5cadmin")); }
TEST(WindowPathTest, RefusesDotDotSemicolon) { EXPECT_TRUE(walks_out("/..;/admin")); }
TEST(WindowPathTest, RefusesTwiceEncodedDotDot) { EXPECT_TRUE(walks_out("/%252e%252e/admin")); }
TEST(WindowPathTest, RefusesThreeTimesEncodedDotDot) {
  EXPECT_TRUE(walks_out("/%25252e%25252e/admin"));
}
TEST(WindowPathTest, RefusesFourTimesEncodedDotDot) {
  // A three-round bound let exactly this through (docs/reference-behaviour.md#window-path-rule).
  EXPECT_TRUE(walks_out("/%2525252e%2525252e/admin"));
}
TEST(WindowPathTest, RefusesEncodedDotDotAndSlash) { EXPECT_TRUE(walks_out("/%2e%2e%2fadmin")); }
TEST(WindowPathTest, RefusesTrailingDotDot) { EXPECT_TRUE(walks_out("/v1/..")); }
TEST(WindowPathTest, RefusesDotDotBeforeQuery) { EXPECT_TRUE(walks_out("/v1/..?x=1")); }
TEST(WindowPathTest, RefusesUndecodableEscape) { EXPECT_TRUE(walks_out("/%zz")); }
TEST(WindowPathTest, RefusesTwoDotDots) { EXPECT_TRUE(walks_out("/v1/../../admin")); }
TEST(WindowPathTest, RefusesBareSlashDotDot) { EXPECT_TRUE(walks_out("/..")); }

// docs/reference-behaviour.md#window-path-rule, allowed list.
TEST(WindowPathTest, AllowsPlainPath) { EXPECT_FALSE(walks_out("/messages")); }
TEST(WindowPathTest, AllowsScopedNpmTarball) {
  EXPECT_FALSE(walks_out("/@scope%2fname/-/name-1.0.0.tgz"));
}
TEST(WindowPathTest, AllowsEncodedSpaceInQuery) {
  EXPECT_FALSE(walks_out("/messages?q=hello%20world"));
}
TEST(WindowPathTest, AllowsDotsInsideAPiece) { EXPECT_FALSE(walks_out("/a..b/c")); }
TEST(WindowPathTest, AllowsThreeDots) { EXPECT_FALSE(walks_out("/...")); }
TEST(WindowPathTest, AllowsGitSmartHttp) {
  EXPECT_FALSE(walks_out("/owner/repo.git/info/refs?service=git-upload-pack"));
}
TEST(WindowPathTest, AllowsEmptyRest) { EXPECT_FALSE(walks_out("")); }

// Ours, beyond the reference's lists.
TEST(WindowPathTest, RefusesDotDotEncodedOneToSixTimes) {
  for (int times = 1; times <= 6; ++times) {
    const std::string piece = encode_times("..", times);
    EXPECT_TRUE(walks_out("/" + piece + "/admin")) << times << ": " << piece;
    EXPECT_TRUE(walks_out("/v1/" + piece)) << times << ": " << piece;
  }
}

TEST(WindowPathTest, RefusesDotDotAndSlashEncodedOneToSixTimes) {
  for (int times = 1; times <= 6; ++times) {
    EXPECT_TRUE(walks_out("/v1" + encode_times("/../", times) + "admin")) << times;
  }
}

TEST(WindowPathTest, RefusesManyTimesEncodedDotDot) {
  // No round limit: fifty rounds are as refused as one.
  EXPECT_TRUE(walks_out("/" + encode_times("..", 50)));
}

TEST(WindowPathTest, RefusesDotDotAfterBackslash) {
  EXPECT_TRUE(walks_out("/v1\\..\\admin"));
  EXPECT_TRUE(walks_out("\\.."));
}

TEST(WindowPathTest, RefusesDotDotAfterSemicolon) {
  EXPECT_TRUE(walks_out("/v1;..;admin"));
  EXPECT_TRUE(walks_out("/v1/%3b..%3badmin"));
}

TEST(WindowPathTest, RefusesDotDotAfterHash) { EXPECT_TRUE(walks_out("/v1#..")); }

TEST(WindowPathTest, RefusesDotDotOnItsOwn) { EXPECT_TRUE(walks_out("..")); }

TEST(WindowPathTest, RefusesTrailingDotDotAfterAPiece) { EXPECT_TRUE(walks_out("/a/..")); }

TEST(WindowPathTest, RefusesDotDotInQuery) {
  // The rule cannot know how an upstream reads its query, so a query piece counts too.
  EXPECT_FALSE(walks_out("/search?q=..&x=1"));  // "q=..&x=1" is one piece, not ".."
  EXPECT_TRUE(walks_out("/search?.."));
  EXPECT_TRUE(walks_out("/search?%2e%2e"));
  EXPECT_FALSE(walks_out("/search?x=1&%2e%2e"));  // '&' is not a separator: "x=1&.." is one piece
  EXPECT_TRUE(walks_out("/search?x=%2f%2e%2e"));
}

TEST(WindowPathTest, AllowsEncodedDotDotInsideAQueryValue) {
  // "q=%2e%2e" decodes to the piece "q=..", which is not "..".
  EXPECT_FALSE(walks_out("/search?q=%2e%2e"));
}

TEST(WindowPathTest, RefusesEscapeCutShortAtTheEnd) {
  EXPECT_TRUE(walks_out("/v1/%"));
  EXPECT_TRUE(walks_out("/v1/%4"));
  EXPECT_TRUE(walks_out("%"));
}

TEST(WindowPathTest, RefusesInvalidEscapeInALaterRound) {
  EXPECT_TRUE(walks_out("/v1/%25zz"));   // round one makes "%zz"
  EXPECT_TRUE(walks_out("/v1/%2525"));   // round two makes "%", cut short
}

TEST(WindowPathTest, RefusesNonHexEscapes) {
  EXPECT_TRUE(walks_out("/%g0"));
  EXPECT_TRUE(walks_out("/%0g"));
  EXPECT_TRUE(walks_out("/%+1"));
  EXPECT_TRUE(walks_out("/% 1"));
}

TEST(WindowPathTest, AllowsUpperAndLowerCaseHex) {
  EXPECT_FALSE(walks_out("/a%2Fb"));
  EXPECT_FALSE(walks_out("/a%2fb"));
  EXPECT_TRUE(walks_out("/%2E%2E/admin"));
}

TEST(WindowPathTest, RefusesEncodedNul) {
  // A NUL cuts a path short in C-based servers ("..%00.png" becomes ".."): refused.
  EXPECT_TRUE(walks_out("/v1/%00"));
  EXPECT_TRUE(walks_out("/v1/..%00"));
  EXPECT_TRUE(walks_out("/v1/%2500"));
}

TEST(WindowPathTest, RefusesEncodedControlBytes) {
  // "..%09" is ".." to a server that trims whitespace; no control byte has a place in a path.
  EXPECT_TRUE(walks_out("/v1/..%09/admin"));
  EXPECT_TRUE(walks_out("/v1/%01"));
  EXPECT_TRUE(walks_out("/v1/%1f"));   // last C0 control
  EXPECT_TRUE(walks_out("/v1/%7f"));   // DEL
  EXPECT_TRUE(walks_out("/v1/%0d%0a"));
  EXPECT_TRUE(walks_out("/v1/%2509"));  // a control two rounds down
  EXPECT_FALSE(walks_out("/v1/%20")) << "just outside: SP (0x20) passes";
  EXPECT_FALSE(walks_out("/v1/%7e")) << "just outside: '~' (0x7e) passes";
}

// Rule 1: raw bytes outside RFC 3986 pchar / query.
TEST(WindowPathTest, RefusesRawOverlongDots) {
  // Without a '%' the decoded-form check never ran, so raw overlong dots passed.
  EXPECT_TRUE(walks_out("/\xc0\xae\xc0\xae/admin"));
  EXPECT_TRUE(walks_out("/..\xc0\xaf" "admin"));
}

TEST(WindowPathTest, RefusesRawControlThatHidesADotDot) {
  // "..\t" is not the piece "..", but a server that trims it sees one.
  EXPECT_TRUE(walks_out("/v1/..\t/admin"));
  EXPECT_TRUE(walks_out("/v1/..\r"));
  EXPECT_TRUE(walks_out("/v1/..\f/admin"));
  EXPECT_TRUE(walks_out(std::string_view("/v1/..\0/admin", 13)));
  EXPECT_TRUE(walks_out("/v1/\x7f"));
}

TEST(WindowPathTest, RefusesRawBytesOutsidePathAndQuery) {
  for (char c : std::string_view(" \"<>\\^`{|}[]#")) {
    EXPECT_TRUE(walks_out(std::string("/v1/a") + c + "b")) << "byte 0x" << std::hex << int(c);
  }
  for (int b = 0x80; b <= 0xff; ++b) {
    EXPECT_TRUE(walks_out(std::string("/v1/a") + static_cast<char>(b))) << "byte 0x" << std::hex << b;
  }
  EXPECT_TRUE(walks_out("/caf\xc3\xa9")) << "raw UTF-8 is not a path character; its escape is";
}

TEST(WindowPathTest, AllowsEveryPathAndQueryCharacter) {
  EXPECT_FALSE(walks_out("/AZaz09-._~!$&'()*+,;=:@/x?y=/?:@!$&'()*+,;="));
  EXPECT_FALSE(walks_out("/v1/messages?beta=true"));
}

TEST(WindowPathTest, OverlongUtf8DotsAreRefused) {
  // %c0%ae is an overlong '.' that lenient upstreams decode to ".." (CVE-2000-0884);
  // like the reference's decodeURIComponent, a form that is not well-formed UTF-8 is refused.
  EXPECT_TRUE(walks_out("/%c0%ae%c0%ae/admin"));
  EXPECT_TRUE(walks_out("/%C0%AE%C0%AE/admin"));
  EXPECT_TRUE(walks_out("/%e0%80%ae"));      // three-byte overlong '.'
  EXPECT_TRUE(walks_out("/%ed%a0%80"));      // a surrogate
  EXPECT_TRUE(walks_out("/%f4%90%80%80"));   // past U+10FFFF
  EXPECT_TRUE(walks_out("/%c3"));            // cut short
  EXPECT_FALSE(walks_out("/caf%c3%a9"));     // just inside: é
  EXPECT_FALSE(walks_out("/%e2%9c%93/%f0%9f%98%80"));
}

TEST(WindowPathTest, OverlongUtf8SlashIsRefused) {
  // %c0%af is an overlong '/': "..%c0%afadmin" is "../admin" to a lenient upstream.
  EXPECT_TRUE(walks_out("/..%c0%afadmin"));
  EXPECT_TRUE(walks_out("/%c0%af/../admin"));
}

TEST(WindowPathTest, AllowsOtherEncodedBytes) {
  EXPECT_FALSE(walks_out("/caf%c3%a9"));
  EXPECT_TRUE(walks_out("/%ff%fe")) << "not UTF-8: refused (decodeURIComponent threw too)";
  EXPECT_FALSE(walks_out("/%2e"));       // one dot
  EXPECT_FALSE(walks_out("/%2e%2e%2e"));  // three dots
}

TEST(WindowPathTest, AllowsScopedNpmPackageWithUpperCaseEscape) {
  EXPECT_FALSE(walks_out("/@scope%2Fname"));
  EXPECT_FALSE(walks_out("/@scope%2fname"));
  EXPECT_FALSE(walks_out("/@scope%2Fname/-/name-1.0.0.tgz"));
}

TEST(WindowPathTest, AllowsQueryOnlyRest) {
  EXPECT_FALSE(walks_out("?stream=true"));
  EXPECT_FALSE(walks_out("/"));
}

TEST(WindowPathTest, RefusesEncodedPercentThatEndsAsALoneSign) {
  // Decoding runs to a fixed point, so "100%25" becomes "100%" and round two finds an escape cut
  // short: a literal '%' cannot reach an upstream through the window (the reference, too).
  EXPECT_TRUE(walks_out("/discount/100%25"));
  EXPECT_FALSE(walks_out("/discount/100%2541"));  // "100%41" → "100A"
}

TEST(WindowPathTest, LongEncodingChainEnds) {
  // "%" + "25" x 2000 + "2e", twice: each round removes one level, so ".." appears only after
  // 2001 rounds. The loop must get there and refuse.
  std::string dot = "%";
  for (int i = 0; i < 2000; ++i) dot += "25";
  dot += "2e";
  EXPECT_TRUE(walks_out("/" + dot + dot + "/admin"));
  EXPECT_FALSE(walks_out("/" + dot + "/admin"));
}

TEST(WindowPathTest, AgreesWithRoundByRoundDecodingOnRandomPaths) {
  // Letters chosen to build escapes of '%', '.', '/', '\\', ';', '#' ("%25", "%2e", "%2f",
  // "%5c", "%3b", "%23") and broken ones; no raw '\\' or '#', which rule 1 refuses outright (tested above).
  constexpr std::string_view kAlphabet = "%%%252eEfF35bBc./;?a0%25%23.";
  std::mt19937 random(20261130);  // fixed seed: the test is hermetic
  std::uniform_int_distribution<std::size_t> letter(0, kAlphabet.size() - 1);
  std::uniform_int_distribution<std::size_t> length(0, 24);
  int refused = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string path;
    for (std::size_t n = length(random); n > 0; --n) path += kAlphabet[letter(random)];
    const bool expected = walks_out_by_rounds(path);
    ASSERT_EQ(walks_out(path), expected) << path;
    refused += expected ? 1 : 0;
  }
  EXPECT_GT(refused, 1000);  // both answers were exercised
  EXPECT_LT(refused, 199000);
}

TEST(WindowPathTest, AgreesWithRoundByRoundDecodingOnEncodedChains) {
  for (int times = 0; times <= 8; ++times) {
    for (std::string_view core : {"..", "/../", "a/..", "..;", ".%", "%", "%zz", ".", "..."}) {
      std::string path = "/v1/" + (times == 0 ? std::string(core) : encode_times(core, times));
      EXPECT_EQ(walks_out(path), walks_out_by_rounds(path)) << path;
    }
  }
}

TEST(WindowPathTest, DeepEncodingOfSixtyFourKibibytesIsLinear) {
  // 64 KiB of "%2525...2e": round-by-round rewriting took over 3 s here; the rule must not let a
  // space stall the window's loop. Not a timing assertion (hermetic tests do not time), but
  // under a 120 s test timeout a quadratic rule at this size would show in every run.
  std::string dot = "%";
  while (dot.size() < 32 * 1024) dot += "25";
  dot += "2e";
  EXPECT_TRUE(walks_out("/" + dot + dot));
  EXPECT_FALSE(walks_out("/" + dot));
}

}  // namespace
}  // namespace policy
