#include "policy/json.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace policy::json {
namespace {

std::string error_of(std::string_view text, const Limits& limits = {}) {
  const Result<Value> value = parse(text, limits);
  return value ? std::string("(parsed)") : value.error().message;
}

bool parses(std::string_view text, const Limits& limits = {}) { return parse(text, limits).ok(); }

std::string quoted(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

// ---- Structure -------------------------------------------------------------------------------

TEST(JsonTest, ParsesScalars) {
  EXPECT_TRUE(parse("null")->is_null());
  EXPECT_TRUE(parse("true")->as_bool());
  EXPECT_FALSE(parse("false")->as_bool());
  EXPECT_EQ(parse("\"hi\"")->as_string(), "hi");
  EXPECT_EQ(parse("42")->as_int(), 42);
}

TEST(JsonTest, ParsesNestedObjectsAndArrays) {
  const Result<Value> value = parse(R"({"mode":"open","domains":["a.example","b.example"],"n":{}})");
  ASSERT_TRUE(value.ok()) << value.error().message;
  ASSERT_TRUE(value->is_object());
  EXPECT_EQ(value->find("mode")->as_string(), "open");
  ASSERT_EQ(value->find("domains")->items().size(), 2u);
  EXPECT_EQ(value->find("domains")->items()[1].as_string(), "b.example");
  EXPECT_TRUE(value->find("n")->is_object());
  EXPECT_EQ(value->find("missing"), nullptr);
}

TEST(JsonTest, FindOnANonObjectIsNull) {
  EXPECT_EQ(parse("[1]")->find("0"), nullptr);
  EXPECT_EQ(parse("\"a\"")->find("a"), nullptr);
}

TEST(JsonTest, AllowsTheFourWhitespaceCharacters) {
  EXPECT_TRUE(parses(" \t\r\n{ \"a\" :\t[ 1 ,\n2 ] }\r\n "));
}

TEST(JsonTest, RefusesOtherWhitespace) {
  EXPECT_FALSE(parses("\v1"));
  EXPECT_FALSE(parses("\f1"));
  EXPECT_FALSE(parses("1\xc2\xa0"));  // U+00A0 NO-BREAK SPACE
}

TEST(JsonTest, RefusesByteOrderMark) { EXPECT_FALSE(parses("\xef\xbb\xbf{}")); }

TEST(JsonTest, RefusesEmptyDocument) {
  EXPECT_EQ(error_of(""), "json: byte 0: unexpected end of the document, expected a value");
  EXPECT_FALSE(parses("   "));
}

TEST(JsonTest, RefusesTwoValues) {
  EXPECT_EQ(error_of("1 2"), "json: byte 2: text after the value");
  EXPECT_FALSE(parses("{}{}"));
  EXPECT_FALSE(parses("[] x"));
}

TEST(JsonTest, RefusesTrailingCommas) {
  EXPECT_EQ(error_of("[1,]"), "json: byte 3: expected a value");
  EXPECT_EQ(error_of(R"({"a":1,})"), "json: byte 7: expected a string key in an object");
}

TEST(JsonTest, RefusesComments) {
  EXPECT_FALSE(parses("// c\n1"));
  EXPECT_FALSE(parses("/* c */ 1"));
  EXPECT_FALSE(parses("1 // c"));
  EXPECT_FALSE(parses("[1 /* c */]"));
}

TEST(JsonTest, RefusesMissingColonWithItsOffset) {
  EXPECT_EQ(error_of(R"({"a" 1})"), "json: byte 5: expected ':' after an object key");
  EXPECT_EQ(error_of(R"({"mode":"open","domains" [1]})"),
            "json: byte 25: expected ':' after an object key");
}

TEST(JsonTest, RefusesMissingSeparators) {
  EXPECT_EQ(error_of("[1 2]"), "json: byte 3: expected ',' or ']' in an array");
  EXPECT_EQ(error_of(R"({"a":1 "b":2})"), "json: byte 7: expected ',' or '}' in an object");
}

TEST(JsonTest, RefusesUnclosedContainers) {
  EXPECT_EQ(error_of("[1"), "json: byte 2: unexpected end of the document in an array");
  EXPECT_EQ(error_of(R"({"a":1)"), "json: byte 6: unexpected end of the document in an object");
  EXPECT_FALSE(parses("{"));
  EXPECT_FALSE(parses("["));
  EXPECT_FALSE(parses(R"({"a":)"));
}

TEST(JsonTest, RefusesNonStringKeys) {
  EXPECT_FALSE(parses("{a:1}"));
  EXPECT_FALSE(parses("{1:1}"));
  EXPECT_FALSE(parses("{'a':1}"));
}

TEST(JsonTest, RefusesSingleQuotedStrings) { EXPECT_FALSE(parses("'a'")); }

TEST(JsonTest, RefusesMisspelledLiterals) {
  for (std::string_view bad : {"nul", "tru", "True", "NULL", "falsey", "undefined"}) {
    EXPECT_FALSE(parses(bad)) << bad;
  }
}

// ---- Duplicate keys --------------------------------------------------------------------------

TEST(JsonTest, RefusesDuplicateKeys) {
  EXPECT_EQ(error_of(R"({"a":1,"a":2})"), "json: byte 7: duplicate object key");
}

TEST(JsonTest, RefusesDuplicateKeysSpelledDifferently) {
  // Compared after unescaping: two readers must not disagree on which one is "mode".
  EXPECT_FALSE(parses(R"({"mode":"open","m\u006fde":"allowlist"})"));
  EXPECT_FALSE(parses(R"({"secret":"a","secre\u0074":"b"})"));
}

TEST(JsonTest, AllowsSameKeyInDifferentObjects) {
  EXPECT_TRUE(parses(R"({"a":{"a":1},"b":[{"a":1},{"a":2}]})"));
}

// ---- Numbers ---------------------------------------------------------------------------------

TEST(JsonTest, ParsesValidNumbersAsText) {
  for (std::string_view good : {"0", "-0", "1", "-1", "1.5", "-0.25", "1e10", "1E+2", "1e-2",
                                "0.0e0", "123456789012345678901234567890"}) {
    const Result<Value> value = parse(good);
    ASSERT_TRUE(value.ok()) << good;
    EXPECT_TRUE(value->is_number());
    EXPECT_EQ(value->as_string(), good);
  }
}

TEST(JsonTest, RefusesInvalidNumbers) {
  for (std::string_view bad : {"01", "-01", "+1", ".5", "1.", "1.e2", "1e", "1e+", "-", "--1",
                               "0x10", "1_000", "NaN", "Infinity", "-Infinity", "nan"}) {
    EXPECT_FALSE(parses(bad)) << bad;
  }
  EXPECT_EQ(error_of("01"), "json: byte 1: text after the value");
  EXPECT_EQ(error_of("-"), "json: byte 0: invalid number");
  EXPECT_EQ(error_of("NaN"), "json: byte 0: expected a value");
}

TEST(JsonTest, ReadsInt64AtItsLimitsAndRefusesOnePast) {
  EXPECT_EQ(parse("9223372036854775807")->as_int(), INT64_MAX);
  EXPECT_EQ(parse("-9223372036854775808")->as_int(), INT64_MIN);
  EXPECT_FALSE(parse("9223372036854775808")->as_int().has_value());
  EXPECT_FALSE(parse("-9223372036854775809")->as_int().has_value());
}

TEST(JsonTest, IntegerReadingRefusesFractionsAndExponents) {
  EXPECT_FALSE(parse("1.0")->as_int().has_value());
  EXPECT_FALSE(parse("1e2")->as_int().has_value());
  EXPECT_FALSE(parse("\"1\"")->as_int().has_value());
  EXPECT_EQ(parse("-0")->as_int(), 0);
}

TEST(JsonTest, NumberFromIntegerDumpsDecimal) {
  EXPECT_EQ(Value::number(-12).dump(), "-12");
  EXPECT_EQ(Value::number(INT64_MIN).dump(), "-9223372036854775808");
}

// The crash is policy::contract_broken()'s trap (SIGILL) and nothing else: no sanitizer report,
// no other message (a segfault or a report would be a different bug).
TEST(JsonDeathTest, NumberTextThatIsNotANumberCrashes) {
  EXPECT_EXIT(static_cast<void>(Value::number_text("1e")), ::testing::KilledBySignal(SIGILL), "^$");
  EXPECT_EXIT(static_cast<void>(Value::number_text("")), ::testing::KilledBySignal(SIGILL), "^$");
}

// ---- Strings and escapes ---------------------------------------------------------------------

TEST(JsonTest, DecodesSimpleEscapes) {
  EXPECT_EQ(parse(R"("\"\\\/\b\f\n\r\t")")->as_string(), "\"\\/\b\f\n\r\t");
}

TEST(JsonTest, DecodesUnicodeEscapes) {
  EXPECT_EQ(parse(R"("\u0041")")->as_string(), "A");
  EXPECT_EQ(parse(R"("\u00e9\u00E9")")->as_string(), "\xc3\xa9\xc3\xa9");
  EXPECT_EQ(parse(R"("\u20ac")")->as_string(), "\xe2\x82\xac");
  EXPECT_EQ(parse(R"("\u0000")")->as_string(), std::string(1, '\0'));  // RFC 8259 allows it
}

TEST(JsonTest, DecodesSurrogatePairs) {
  EXPECT_EQ(parse(R"("\ud83d\ude00")")->as_string(), "\xf0\x9f\x98\x80");  // U+1F600
  EXPECT_EQ(parse(R"("\uD800\uDC00")")->as_string(), "\xf0\x90\x80\x80");  // U+10000
  EXPECT_EQ(parse(R"("\udbff\udfff")")->as_string(), "\xf4\x8f\xbf\xbf");  // U+10FFFF
}

TEST(JsonTest, RefusesUnpairedSurrogateEscapes) {
  EXPECT_EQ(error_of(R"("\ud83d")"), "json: byte 1: unpaired surrogate escape in a string");
  EXPECT_FALSE(parses(R"("\ud83dx")"));
  EXPECT_FALSE(parses(R"("\ud83d\u0041")"));
  EXPECT_FALSE(parses(R"("\ud83d\ud83d")"));
  EXPECT_FALSE(parses(R"("\ude00")"));
  EXPECT_FALSE(parses(R"("\ude00\ud83d")"));
  EXPECT_FALSE(parses(R"("\ud83d\n")"));
}

TEST(JsonTest, RefusesInvalidEscapes) {
  EXPECT_EQ(error_of(R"("a\x41")"), "json: byte 2: invalid escape in a string");
  EXPECT_FALSE(parses(R"("\'")"));
  EXPECT_FALSE(parses(R"("\U0041")"));
  EXPECT_EQ(error_of(R"("\u12")"), "json: byte 1: invalid \\u escape in a string");
  EXPECT_FALSE(parses(R"("\u00g0")"));
  EXPECT_FALSE(parses("\"\\"));
}

TEST(JsonTest, RefusesControlCharactersInStrings) {
  EXPECT_EQ(error_of("\"a\x01\""), "json: byte 2: control character in a string");
  EXPECT_FALSE(parses("\"a\nb\""));
  EXPECT_FALSE(parses("\"a\tb\""));
  EXPECT_FALSE(parses(std::string_view("\"a\0b\"", 5)));
  EXPECT_FALSE(parses("\"\x1f\""));
}

TEST(JsonTest, AllowsDeleteInStrings) { EXPECT_EQ(parse("\"\x7f\"")->as_string(), "\x7f"); }

TEST(JsonTest, RefusesUnterminatedString) {
  EXPECT_EQ(error_of("\"abc"), "json: byte 0: unterminated string");
  EXPECT_FALSE(parses("\"abc\\\""));
}

TEST(JsonTest, AcceptsValidUtf8) {
  EXPECT_TRUE(parses("\"caf\xc3\xa9\""));                // 2 bytes
  EXPECT_TRUE(parses("\"\xe2\x82\xac\""));               // 3 bytes
  EXPECT_TRUE(parses("\"\xef\xbf\xbf\""));               // U+FFFF
  EXPECT_TRUE(parses("\"\xf0\x9f\x98\x80\""));           // 4 bytes
  EXPECT_TRUE(parses("\"\xf4\x8f\xbf\xbf\""));           // U+10FFFF, the last code point
  EXPECT_TRUE(parses("\"\xed\x9f\xbf\""));               // U+D7FF, just below the surrogates
  EXPECT_TRUE(parses("\"\xee\x80\x80\""));               // U+E000, just above them
}

TEST(JsonTest, RefusesInvalidUtf8) {
  const std::string_view bad[] = {
      "\"\xc0\xae\"",          // overlong '.'
      "\"\xc0\xaf\"",          // overlong '/'
      "\"\xc1\xbf\"",          // overlong
      "\"\xe0\x80\xaf\"",      // overlong 3-byte '/'
      "\"\xe0\x9f\xbf\"",      // overlong 3-byte, just below U+0800
      "\"\xf0\x80\x80\xaf\"",  // overlong 4-byte '/'
      "\"\xf0\x8f\xbf\xbf\"",  // overlong 4-byte, just below U+10000
      "\"\xed\xa0\x80\"",      // U+D800 encoded directly
      "\"\xed\xbf\xbf\"",      // U+DFFF encoded directly
      "\"\xf4\x90\x80\x80\"",  // U+110000, past the last code point
      "\"\xf5\x80\x80\x80\"",  // lead byte past F4
      "\"\xff\"",              // never in UTF-8
      "\"\x80\"",              // lone continuation byte
      "\"\xe2\x82\"",          // cut short
      "\"\xe2\x82",            // cut short at the end of the document
      "\"\xc3\x41\"",          // continuation replaced by ASCII
  };
  for (std::string_view text : bad) EXPECT_FALSE(parses(text)) << quoted(text);
  EXPECT_EQ(error_of("\"ab\xc0\xae\""), "json: byte 3: invalid UTF-8 in a string");
}

TEST(JsonTest, TakeStringMovesTheTextOut) {
  Result<Value> value = parse(R"({"secret":"a-long-secret-value-past-the-short-buffer"})");
  ASSERT_TRUE(value.ok());
  Value& secret = value->members().at("secret");
  EXPECT_EQ(secret.take_string(), "a-long-secret-value-past-the-short-buffer");
  EXPECT_TRUE(secret.as_string().empty());
}

// ---- Limits ----------------------------------------------------------------------------------

TEST(JsonTest, AcceptsDocumentAtSizeLimitAndRefusesOnePast) {
  Limits limits;
  limits.max_bytes = 64;
  const std::string at_limit = "\"" + std::string(62, 'a') + "\"";
  ASSERT_EQ(at_limit.size(), 64u);
  EXPECT_TRUE(parses(at_limit, limits));
  EXPECT_EQ(error_of(at_limit + " ", limits), "json: byte 64: the document is longer than 64 bytes");
}

TEST(JsonTest, DefaultSizeLimitIsOneMebibyte) {
  const std::string at_limit = "\"" + std::string((1 << 20) - 2, 'a') + "\"";
  EXPECT_TRUE(parses(at_limit));
  EXPECT_FALSE(parses(at_limit + " "));
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JsonTest, AcceptsNestingAtDepthLimitAndRefusesOnePast) {
  const Limits limits;  // max_depth 16
  EXPECT_TRUE(parses(nested_arrays(limits.max_depth), limits));
  EXPECT_EQ(error_of(nested_arrays(limits.max_depth + 1), limits),
            "json: byte 16: nesting deeper than 16 levels");
  EXPECT_FALSE(parses(R"({"a":{"b":)" + nested_arrays(15) + "}}", limits));
  EXPECT_TRUE(parses(R"({"a":{"b":)" + nested_arrays(14) + "}}", limits));
}

TEST(JsonTest, ScalarHasDepthZero) {
  Limits limits;
  limits.max_depth = 0;
  EXPECT_TRUE(parses("1", limits));
  EXPECT_FALSE(parses("[]", limits));
  EXPECT_FALSE(parses("{}", limits));
}

TEST(JsonTest, DepthCeilingHoldsWhateverTheLimitsSay) {
  Limits limits;
  limits.max_depth = 100000;
  limits.max_elements = 1000000;
  EXPECT_TRUE(parses(nested_arrays(kMaxDepthCeiling), limits));
  EXPECT_FALSE(parses(nested_arrays(kMaxDepthCeiling + 1), limits));
}

TEST(JsonTest, RefusesHostileNestingWithoutCrashing) {
  EXPECT_FALSE(parses(std::string(100000, '[')));
  EXPECT_FALSE(parses(std::string(100000, '{')));
  std::string objects;
  for (int i = 0; i < 50000; ++i) objects += "{\"a\":";
  EXPECT_FALSE(parses(objects));
}

std::string array_of_zeros(std::size_t count) {
  std::string out = "[";
  for (std::size_t i = 0; i < count; ++i) out += i == 0 ? "0" : ",0";
  return out + "]";
}

TEST(JsonTest, AcceptsElementCountAtLimitAndRefusesOnePast) {
  Limits limits;
  limits.max_elements = 100;
  // The array itself is one value: 99 items make 100 values.
  EXPECT_TRUE(parses(array_of_zeros(99), limits));
  EXPECT_EQ(error_of(array_of_zeros(100), limits), "json: byte 199: more than 100 values");
}

TEST(JsonTest, ObjectKeysAreNotCountedAsValues) {
  Limits limits;
  limits.max_elements = 3;
  EXPECT_TRUE(parses(R"({"a":1,"b":2})", limits));
  EXPECT_FALSE(parses(R"({"a":1,"b":2,"c":3})", limits));
}

TEST(JsonTest, DefaultElementLimitIsTenThousand) {
  EXPECT_TRUE(parses(array_of_zeros(9999)));
  EXPECT_FALSE(parses(array_of_zeros(10000)));
}

// ---- Writer ----------------------------------------------------------------------------------

TEST(JsonTest, DumpIsCompactWithSortedKeys) {
  const Result<Value> value = parse(" { \"b\" : [ 1 , true , null ] , \"a\" : \"x\" } ");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->dump(), R"({"a":"x","b":[1,true,null]})");
}

TEST(JsonTest, DumpOfBuiltValues) {
  std::map<std::string, Value> members;
  members.emplace("ok", Value::boolean(true));
  members.emplace("n", Value::number(7));
  members.emplace("list", Value::array({Value::string("a"), Value::null(), Value::object()}));
  EXPECT_EQ(Value::object(std::move(members)).dump(), R"({"list":["a",null,{}],"n":7,"ok":true})");
  EXPECT_EQ(Value().dump(), "null");
  EXPECT_EQ(Value::array().dump(), "[]");
}

TEST(JsonTest, QuotesEscapeQuoteBackslashAndControls) {
  EXPECT_EQ(quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quoted("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(quoted(std::string_view("\0\x01\x1f", 3)), R"("\u0000\u0001\u001f")");
  EXPECT_EQ(quoted("\x7f"), R"("\u007f")");
  EXPECT_EQ(quoted("/ <>&'"), R"("/ <>&'")");
}

TEST(JsonTest, QuotesNonAsciiAsEscapes) {
  EXPECT_EQ(quoted("caf\xc3\xa9"), R"("caf\u00e9")");
  EXPECT_EQ(quoted("\xe2\x82\xac"), R"("\u20ac")");
  EXPECT_EQ(quoted("\xf0\x9f\x98\x80"), R"("\ud83d\ude00")");
  EXPECT_EQ(quoted("\xe3\x80\x82"), R"("\u3002")");  // ideographic full stop stays visible
}

TEST(JsonTest, QuotesInvalidBytesAsReplacementCharacters) {
  EXPECT_EQ(quoted("a\xff"), R"("a\ufffd")");
  EXPECT_EQ(quoted("\xc0\xae"), R"("\ufffd\ufffd")");
  EXPECT_EQ(quoted("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(quoted("\xe2\x82"), R"("\ufffd\ufffd")");
}

TEST(JsonTest, DumpOutputIsAsciiAndParsesBack) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::string text = Value::string(every_byte).dump();
  for (char c : text) {
    EXPECT_GE(static_cast<unsigned char>(c), 0x20);
    EXPECT_LT(static_cast<unsigned char>(c), 0x7f);
  }
  EXPECT_TRUE(parses(text));
}

TEST(JsonTest, ValidUtf8RoundTripsThroughDump) {
  const std::string original = "k\xc3\xa9y \xf0\x9f\x98\x80 \"q\" \\ \n \x7f";
  const Result<Value> back = parse(Value::string(original).dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->as_string(), original);
}

}  // namespace
}  // namespace policy::json
