#include "policy/journal_record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "policy/json.h"

namespace policy {
namespace {

std::string record_json(std::int64_t at, Listener listener, std::string_view host,
                        std::uint16_t port, const Decision& decision) {
  return journal_record_json(make_journal_record(at, listener, host, port, decision));
}

// ---- Time ------------------------------------------------------------------------------------

TEST(JournalRecordTest, FormatsTheEpoch) {
  EXPECT_EQ(format_iso8601_ms(0), "1970-01-01T00:00:00.000Z");
}

TEST(JournalRecordTest, FormatsLeapDay) {
  EXPECT_EQ(format_iso8601_ms(1709210096789), "2024-02-29T12:34:56.789Z");
  EXPECT_EQ(format_iso8601_ms(951782400000), "2000-02-29T00:00:00.000Z");  // 400-year leap
}

TEST(JournalRecordTest, FormatsEndOfNovember) {
  EXPECT_EQ(format_iso8601_ms(1796040000000), "2026-11-30T12:00:00.000Z");
}

TEST(JournalRecordTest, FormatsCenturyYearsThatAreNotLeap) {
  EXPECT_EQ(format_iso8601_ms(-2203891200000), "1900-03-01T00:00:00.000Z");
  EXPECT_EQ(format_iso8601_ms(4107542399999), "2100-02-28T23:59:59.999Z");
  EXPECT_EQ(format_iso8601_ms(4107542400000), "2100-03-01T00:00:00.000Z");
}

TEST(JournalRecordTest, FormatsYearBoundaries) {
  EXPECT_EQ(format_iso8601_ms(1704067199999), "2023-12-31T23:59:59.999Z");
  EXPECT_EQ(format_iso8601_ms(1704067200000), "2024-01-01T00:00:00.000Z");
  EXPECT_EQ(format_iso8601_ms(1735603200000), "2024-12-31T00:00:00.000Z");  // day 366
}

TEST(JournalRecordTest, FormatsTimesBeforeTheEpochByFlooring) {
  EXPECT_EQ(format_iso8601_ms(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(format_iso8601_ms(-86'400'000), "1969-12-31T00:00:00.000Z");
  EXPECT_EQ(format_iso8601_ms(-62135596800000), "0001-01-01T00:00:00.000Z");
}

TEST(JournalRecordTest, FormatsFourDigitYearLimitAndSignsOnePast) {
  EXPECT_EQ(format_iso8601_ms(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(format_iso8601_ms(253402300800000), "+10000-01-01T00:00:00.000Z");
}

TEST(JournalRecordTest, ExtremeTimesDoNotCrash) {
  for (std::int64_t at : {INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1}) {
    const std::string text = format_iso8601_ms(at);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), 'Z') << text;
  }
}

// Walks 800 years day by day against a naive calendar (an independent implementation).
TEST(JournalRecordTest, AgreesWithANaiveCalendarForEightHundredYears) {
  const auto is_leap = [](int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; };
  const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int year = 1970, month = 1, day = 1;
  for (std::int64_t days = 0; days < 146097 * 2; ++days) {
    char expected[64];
    std::snprintf(expected, sizeof expected, "%04d-%02d-%02dT00:00:00.000Z", year, month, day);
    ASSERT_EQ(format_iso8601_ms(days * 86'400'000), expected);
    const int length = month == 2 && is_leap(year) ? 29 : month_days[month - 1];
    if (++day > length) {
      day = 1;
      if (++month > 12) {
        month = 1;
        ++year;
      }
    }
  }
}

// ---- Record ----------------------------------------------------------------------------------

TEST(JournalRecordTest, ExactJsonForAKnownRecord) {
  EXPECT_EQ(record_json(0, Listener::kCorridor, "example.com", 443, Decision::of(Word::kAllow)),
            R"({"at":"1970-01-01T00:00:00.000Z","listener":"corridor","host":"example.com",)"
            R"("port":443,"decision":"allow"})");
}

TEST(JournalRecordTest, ExactJsonForAWindowFailure) {
  EXPECT_EQ(record_json(1796040000000, Listener::kWindow, "api.example.com", 0,
                        Decision::with_detail(Word::kFailed, "ECONNREFUSED")),
            R"({"at":"2026-11-30T12:00:00.000Z","listener":"window","host":"api.example.com",)"
            R"("port":0,"decision":"failed:ECONNREFUSED"})");
}

TEST(JournalRecordTest, HasExactlyFiveKeysInOrder) {
  const std::string text =
      record_json(1, Listener::kControl, "", 65535, Decision::of(Word::kDenyTooManyConnections));
  const Result<json::Value> value = json::parse(text);
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(value->members().size(), 5u);
  std::size_t last = 0;
  for (std::string_view key : {"\"at\":", "\"listener\":", "\"host\":", "\"port\":",
                               "\"decision\":"}) {
    const std::size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GE(at, last) << key;
    last = at;
  }
  EXPECT_EQ(value->find("port")->as_int(), 65535);
  EXPECT_EQ(value->find("listener")->as_string(), "control");
}

TEST(JournalRecordTest, CoalescedRecordAddsCountAndLastAfterTheFiveKeys) {
  JournalRecord record = make_journal_record(1796040000000, Listener::kCorridor, "auth.openai.com", 443,
                                             Decision::of(Word::kDenyAlwaysRefused));
  record.count = 1;
  record.last_unix_ms = 1796040005000;
  EXPECT_EQ(journal_record_json(record).find("count"), std::string::npos);
  record.count = 10000;
  EXPECT_EQ(journal_record_json(record),
            R"({"at":"2026-11-30T12:00:00.000Z","listener":"corridor","host":"auth.openai.com",)"
            R"("port":443,"decision":"deny:always-refused","count":10000,"last":"2026-11-30T12:00:05.000Z"})");
}

TEST(JournalRecordTest, KeepsHostAtLimitAndCutsOnePast) {
  const std::string at_limit(kJournalHostMax, 'a');
  EXPECT_EQ(make_journal_record(0, Listener::kCorridor, at_limit, 0, {}).host, at_limit);
  EXPECT_EQ(make_journal_record(0, Listener::kCorridor, at_limit + "b", 0, {}).host, at_limit);
}

TEST(JournalRecordTest, CutsAHugeHostTo256) {
  // A plain-proxy request line can carry a ~16 KiB host (docs/reference-behaviour.md#journal).
  const std::string huge(16370, 'x');
  const JournalRecord record = make_journal_record(0, Listener::kCorridor, huge, 0,
                                                   Decision::of(Word::kDenyNotConnect));
  EXPECT_EQ(record.host.size(), 256u);
}

TEST(JournalRecordTest, MakesHostPrintable) {
  const std::string host("exa mple\r\n.com\t\x7f\xc3\xa9\x01", 19);
  const std::string nul_host("a\0b", 3);
  EXPECT_EQ(make_journal_record(0, Listener::kCorridor, host, 0, {}).host, "exa?mple??.com?????");
  EXPECT_EQ(make_journal_record(0, Listener::kCorridor, nul_host, 0, {}).host, "a?b");
}

TEST(JournalRecordTest, KeepsPrintableBoundaryBytes) {
  EXPECT_EQ(make_journal_record(0, Listener::kCorridor, "!~", 0, {}).host, "!~");  // 0x21, 0x7e
  EXPECT_EQ(make_journal_record(0, Listener::kCorridor, " \x7f", 0, {}).host, "??");  // 0x20, 0x7f
}

TEST(JournalRecordTest, EscapesQuoteAndBackslashInHost) {
  EXPECT_EQ(record_json(0, Listener::kCorridor, "a\"b\\c", 0, Decision::of(Word::kDenyMalformed)),
            R"({"at":"1970-01-01T00:00:00.000Z","listener":"corridor","host":"a\"b\\c",)"
            R"("port":0,"decision":"deny:malformed"})");
}

TEST(JournalRecordTest, EveryDecisionTextFitsTheDecisionLimit) {
  const std::string longest_detail(kMaxDetailLength, 'E');
  for (Word word : all_words()) {
    const Decision decision = Decision::with_detail(word, longest_detail);
    EXPECT_LE(decision.text().size(), kJournalDecisionMax) << decision.text();
    EXPECT_EQ(make_journal_record(0, Listener::kCorridor, "", 0, decision).decision,
              decision.text());
  }
}

TEST(JournalRecordTest, JsonKeepsDecisionAtLimitAndCutsOnePast) {
  JournalRecord record;
  record.decision = std::string(kJournalDecisionMax, 'd');
  EXPECT_NE(journal_record_json(record).find("\"" + record.decision + "\""), std::string::npos);
  record.decision += 'e';
  const std::string text = journal_record_json(record);
  EXPECT_EQ(text.find('e', text.find("\"decision\"") + 11), std::string::npos);
  EXPECT_NE(text.find("\"" + std::string(kJournalDecisionMax, 'd') + "\""), std::string::npos);
}

TEST(JournalRecordTest, JsonCutsAndCleansAHandBuiltHost) {
  JournalRecord record;
  record.host = std::string(300, 'h') + "\n";
  const Result<json::Value> value = json::parse(journal_record_json(record));
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->find("host")->as_string(), std::string(kJournalHostMax, 'h'));
}

TEST(JournalRecordTest, DefaultDecisionIsJournalledAsUndecided) {
  EXPECT_EQ(make_journal_record(0, Listener::kWindow, "h", 1, Decision{}).decision,
            "deny:undecided");
}

TEST(JournalRecordTest, FullRingOfWorstCaseRecordsStaysFarUnderOneMebibyte) {
  // 500 records (the ring) with a 256-byte host of '"' (each escaped to two bytes).
  const std::string hostile(1000, '"');
  std::size_t total = 0;
  for (int i = 0; i < 500; ++i) {
    total += record_json(INT64_MAX, Listener::kCorridor, hostile, 65535,
                         Decision::with_detail(Word::kDenyUnresolved,
                                               std::string(kMaxDetailLength, 'E')))
                 .size() +
             1;
  }
  EXPECT_LT(total, std::size_t{1} << 19);
}

TEST(JournalRecordTest, ListenerTexts) {
  EXPECT_EQ(listener_text(Listener::kCorridor), "corridor");
  EXPECT_EQ(listener_text(Listener::kWindow), "window");
  EXPECT_EQ(listener_text(Listener::kControl), "control");
}

TEST(JournalRecordTest, ListenerFromTextRoundTrips) {
  for (Listener listener : {Listener::kCorridor, Listener::kWindow, Listener::kControl}) {
    EXPECT_EQ(listener_from_text(listener_text(listener)), listener);
  }
  EXPECT_FALSE(listener_from_text("Corridor").has_value());
  EXPECT_FALSE(listener_from_text("").has_value());
  EXPECT_FALSE(listener_from_text("dispatcher").has_value());
}

}  // namespace
}  // namespace policy
