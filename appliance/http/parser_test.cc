// The llhttp adapter at each of its bounds (at the limit and one past), its strictness, and how
// it hands back a request head, a body and an answer.
#include "appliance/http/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace appliance::http {
namespace {

using Status = MessageParser::Status;

class Recorder final : public BodySink {
 public:
  bool on_head() override {
    ++heads;
    return accept_head;
  }
  void on_body(const char* data, std::size_t length) override { body.append(data, length); }
  void on_complete() override { ++completes; }
  bool accept_head = true;
  int heads = 0;
  int completes = 0;
  std::string body;
};

MessageParser::Feed feed(MessageParser& parser, std::string_view bytes) {
  return parser.feed(bytes.data(), bytes.size());
}

// Feeds one byte at a time until the parser leaves kNeedMore; returns the last feed and the
// bytes used in total.
std::pair<MessageParser::Feed, std::size_t> feed_bytewise(MessageParser& parser,
                                                          std::string_view bytes) {
  std::size_t used = 0;
  MessageParser::Feed last;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    last = parser.feed(bytes.data() + i, 1);
    used += last.consumed;
    if (last.status != Status::kNeedMore) break;
  }
  return {last, used};
}

// A request head of exactly `size` bytes: one padding field sized to fit.
std::string request_head_of(std::size_t size) {
  const std::string start = "GET /a HTTP/1.1\r\nHost: a\r\nX-Pad: ";
  const std::string end = "\r\n\r\n";
  return start + std::string(size - start.size() - end.size(), 'p') + end;
}

std::string response_head_of(std::size_t size) {
  const std::string start = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: ";
  const std::string end = "\r\n\r\n";
  return start + std::string(size - start.size() - end.size(), 'p') + end;
}

TEST(HttpParserTest, RequestHeadStopsBeforeTheBody) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const std::string head = "POST /x?q=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n";
  const auto f = feed(parser, head + "abc");
  EXPECT_EQ(f.status, Status::kHeadDone);
  EXPECT_EQ(f.consumed, head.size());
  EXPECT_TRUE(sink.body.empty()) << "no body byte before the caller decided";
  EXPECT_EQ(parser.method_name(), "POST");
  EXPECT_EQ(parser.url(), "/x?q=1");
  ASSERT_EQ(parser.headers().size(), 2u);
  EXPECT_EQ(parser.headers()[1].name, "Content-Length");
  EXPECT_EQ(parser.headers()[1].value, "3");
  const auto rest = feed(parser, "abcGET");
  EXPECT_EQ(rest.status, Status::kComplete);
  EXPECT_EQ(rest.consumed, 3u) << "the next request's bytes are not this message's";
  EXPECT_EQ(sink.body, "abc");
  EXPECT_EQ(sink.completes, 1);
  EXPECT_EQ(sink.heads, 0) << "on_head is for answers";
}

TEST(HttpParserTest, BodylessRequestCompletesOnAnEmptyFeed) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  EXPECT_EQ(feed(parser, "GET / HTTP/1.1\r\nHost: a\r\n\r\n").status, Status::kHeadDone);
  EXPECT_EQ(parser.feed(nullptr, 0).status, Status::kComplete);
  EXPECT_EQ(sink.completes, 1);
}

TEST(HttpParserTest, ConnectHeadLeavesTheTunnelBytes) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const std::string head = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n";
  const auto f = feed(parser, head + "\x16\x03\x01");
  EXPECT_EQ(f.status, Status::kHeadDone);
  EXPECT_EQ(f.consumed, head.size());
  EXPECT_TRUE(parser.is_connect());
  EXPECT_EQ(parser.url(), "example.com:443");
}

TEST(HttpParserTest, RequestHeadAtTheLimitIsRead) {
  const std::string head = request_head_of(kMaxRequestHeadBytes);
  ASSERT_EQ(head.size(), kMaxRequestHeadBytes);
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const auto f = feed(parser, head);
  EXPECT_EQ(f.status, Status::kHeadDone);
  EXPECT_EQ(f.consumed, head.size());
}

TEST(HttpParserTest, RequestHeadOneByteOverTheLimitIsUnreadable) {
  const std::string head = request_head_of(kMaxRequestHeadBytes + 1);
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const auto f = feed(parser, head);
  EXPECT_EQ(f.status, Status::kError);
  EXPECT_FALSE(parser.framing_error());
}

TEST(HttpParserTest, HeadLimitHoldsWhenBytesArriveOneByOne) {
  Recorder at_sink;
  MessageParser at(MessageParser::Kind::kRequest, at_sink);
  const std::string at_head = request_head_of(kMaxRequestHeadBytes);
  const auto [at_feed, at_used] = feed_bytewise(at, at_head);
  EXPECT_EQ(at_feed.status, Status::kHeadDone);
  EXPECT_EQ(at_used, at_head.size());

  Recorder past_sink;
  MessageParser past(MessageParser::Kind::kRequest, past_sink);
  EXPECT_EQ(feed_bytewise(past, request_head_of(kMaxRequestHeadBytes + 1)).first.status,
            Status::kError);
}

TEST(HttpParserTest, UnendedHeadPastTheLimitIsUnreadable) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const std::string start = "GET /a HTTP/1.1\r\nX-Pad: ";
  EXPECT_EQ(feed(parser, start + std::string(kMaxRequestHeadBytes - start.size(), 'p')).status,
            Status::kNeedMore);
  EXPECT_EQ(feed(parser, "p").status, Status::kError);
  EXPECT_EQ(feed(parser, "\r\n\r\n").status, Status::kError) << "an error is final";
}

TEST(HttpParserTest, HeaderLinesAtTheLimitAreReadOneMoreIsUnreadable) {
  const auto head_with = [](std::size_t lines) {
    std::string head = "GET / HTTP/1.1\r\n";
    for (std::size_t i = 0; i < lines; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
    return head + "\r\n";
  };
  Recorder a;
  MessageParser at(MessageParser::Kind::kRequest, a);
  EXPECT_EQ(feed(at, head_with(kMaxHeaderLines)).status, Status::kHeadDone);
  EXPECT_EQ(at.headers().size(), kMaxHeaderLines);
  Recorder b;
  MessageParser past(MessageParser::Kind::kRequest, b);
  EXPECT_EQ(feed(past, head_with(kMaxHeaderLines + 1)).status, Status::kError);
}

TEST(HttpParserTest, OnlyHttp10And11AreRead) {
  for (const std::string_view bad :
       {"GET /\r\n\r\n", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", "GET / HTTP/1.2\r\nHost: a\r\n\r\n",
        "GET / HTTP/0.9\r\nHost: a\r\n\r\n"}) {
    Recorder sink;
    MessageParser parser(MessageParser::Kind::kRequest, sink);
    EXPECT_EQ(feed(parser, bad).status, Status::kError) << bad;
  }
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  EXPECT_EQ(feed(parser, "GET / HTTP/1.0\r\n\r\n").status, Status::kHeadDone);
  EXPECT_TRUE(parser.http10());
}

TEST(HttpParserTest, StrictModeRefusesWhatTheLooseMachineTakes) {
  for (const std::string_view bad :
       {"GET /a/..\t/b HTTP/1.1\r\nHost: a\r\n\r\n", "GET /a\f HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /a\x80 HTTP/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n"}) {
    Recorder sink;
    MessageParser parser(MessageParser::Kind::kRequest, sink);
    EXPECT_EQ(feed(parser, bad).status, Status::kError) << bad;
  }
}

TEST(HttpParserTest, SmugglingShapesAreFramingErrors) {
  for (const std::string_view bad :
       {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nX-A: one\r\n two\r\nContent-Length: 0\r\n\r\n",
        "POST / HTTP/1.1\r\nX-A: one\r\n\ttwo\r\nContent-Length: 0\r\n\r\n"}) {
    Recorder sink;
    MessageParser parser(MessageParser::Kind::kRequest, sink);
    EXPECT_EQ(feed(parser, bad).status, Status::kError) << bad;
    EXPECT_TRUE(parser.framing_error()) << bad;
  }
}

TEST(HttpParserTest, ObsFoldSplitAcrossFeedsIsStillFound) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const auto [f, used] = feed_bytewise(parser, "GET / HTTP/1.1\r\nX-A: one\r\n two\r\n\r\n");
  EXPECT_EQ(f.status, Status::kError);
  EXPECT_TRUE(parser.framing_error());
}

TEST(HttpParserTest, ObsFoldIsFoundWhateverFeedTheCrLfAndSpaceArriveIn) {
  const std::string head = "GET / HTTP/1.1\r\nX-A: one\r\n two\r\n\r\n";
  const std::size_t fold = head.find("\r\n two");
  // Every split of the fold's three bytes over two feeds (CR | LF SP, CR LF | SP).
  for (const std::size_t cut : {fold + 1, fold + 2}) {
    Recorder sink;
    MessageParser parser(MessageParser::Kind::kRequest, sink);
    ASSERT_EQ(feed(parser, std::string_view(head).substr(0, cut)).status, Status::kNeedMore);
    EXPECT_EQ(feed(parser, std::string_view(head).substr(cut)).status, Status::kError) << cut;
    EXPECT_TRUE(parser.framing_error()) << cut;
  }
}

TEST(HttpParserTest, SpaceOrTabInsideAValueIsNotObsFold) {
  // Only CR LF then SP or HTAB is a fold; SP or HTAB anywhere else in a line is not.
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  EXPECT_EQ(feed(parser, "GET / HTTP/1.1\r\nX-A: one two\r\nX-B: \tthree\r\n\r\n").status,
            Status::kHeadDone);
  EXPECT_FALSE(parser.framing_error());
}

TEST(HttpParserTest, TakenHeadersAreMovedOut) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  ASSERT_EQ(
      feed(parser, "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + std::string(64, 'v') + "\r\n\r\n")
          .status,
      Status::kHeadDone);
  const std::vector<Header> taken = parser.take_headers();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[1].name, "X-Long");
  EXPECT_EQ(taken[1].value, std::string(64, 'v'));
  EXPECT_TRUE(parser.headers().empty());
}

TEST(HttpParserTest, TrailerLinesCountWithTakenHeadLinesAgainstTheLimit) {
  // The head's fields handed out with take_headers() still count: head and trailer lines
  // together stay within kMaxHeaderLines, as when the head's fields were kept.
  const std::size_t head_lines = kMaxHeaderLines - 2;
  std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n";
  for (std::size_t i = 1; i < head_lines; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
  head += "\r\n";
  for (const bool one_more : {false, true}) {
    Recorder sink;
    MessageParser parser(MessageParser::Kind::kRequest, sink);
    ASSERT_EQ(feed(parser, head).status, Status::kHeadDone);
    ASSERT_EQ(parser.take_headers().size(), head_lines);
    std::string body = "1\r\na\r\n0\r\nT-1: x\r\nT-2: x\r\n";
    if (one_more) body += "T-3: x\r\n";
    body += "\r\n";
    EXPECT_EQ(feed(parser, body).status, one_more ? Status::kError : Status::kComplete) << one_more;
  }
}

TEST(HttpParserTest, ChunkedRequestBodyGoesToTheSinkDecoded) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  ASSERT_EQ(feed(parser, head).status, Status::kHeadDone);
  const auto [f, used] = feed_bytewise(parser, "3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(f.status, Status::kComplete);
  EXPECT_EQ(sink.body, "abc");
}

TEST(HttpParserTest, AnswerIsParsedStraightThrough) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
  const auto f = feed(parser, answer + "junk");
  EXPECT_EQ(f.status, Status::kComplete);
  EXPECT_EQ(f.consumed, answer.size());
  EXPECT_EQ(sink.heads, 1);
  EXPECT_EQ(sink.body, "hi");
  EXPECT_EQ(parser.status_code(), 200);
  EXPECT_EQ(parser.reason(), "OK");
  EXPECT_TRUE(parser.has_length());
  EXPECT_EQ(parser.length(), 2u);
  EXPECT_TRUE(parser.keep_alive());
}

TEST(HttpParserTest, AnswerHeadAtTheLimitIsReadOneMoreIsNot) {
  const std::string at = response_head_of(kMaxResponseHeadBytes);
  ASSERT_EQ(at.size(), kMaxResponseHeadBytes);
  Recorder a;
  MessageParser at_parser(MessageParser::Kind::kResponse, a);
  EXPECT_EQ(feed(at_parser, at).status, Status::kComplete);
  Recorder b;
  MessageParser past(MessageParser::Kind::kResponse, b);
  EXPECT_EQ(feed(past, response_head_of(kMaxResponseHeadBytes + 1)).status, Status::kError);
  EXPECT_EQ(b.heads, 0);
}

TEST(HttpParserTest, InterimAnswersAreSkippedAndEachHeadCountedAfresh) {
  // Two interim heads, each well under the cap, that together with the real one are over it.
  const std::string interim =
      "HTTP/1.1 100 Continue\r\nX-Pad: " + std::string(40 * 1024, 'p') + "\r\n\r\n";
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  const std::string answer = interim + interim + "HTTP/1.1 204 No Content\r\nX-B: 1\r\n\r\n";
  const auto f = feed(parser, answer);
  EXPECT_EQ(f.status, Status::kComplete);
  EXPECT_EQ(f.consumed, answer.size());
  EXPECT_EQ(sink.heads, 1);
  EXPECT_EQ(parser.status_code(), 204);
  ASSERT_EQ(parser.headers().size(), 1u) << "the interim answers' fields are not kept";
  EXPECT_EQ(parser.headers()[0].name, "X-B");
}

TEST(HttpParserTest, SwitchingProtocolsIsRefused) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  EXPECT_EQ(feed(parser, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n").status,
            Status::kError);
}

TEST(HttpParserTest, AnswerToHeadHasNoBody) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  parser.set_head_request(true);
  const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
  const auto f = feed(parser, answer + "HTTP/1.1");
  EXPECT_EQ(f.status, Status::kComplete);
  EXPECT_EQ(f.consumed, answer.size());
  EXPECT_TRUE(sink.body.empty());
}

TEST(HttpParserTest, CloseDelimitedAnswerEndsAtFinish) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  EXPECT_EQ(feed(parser, "HTTP/1.1 200 OK\r\n\r\nstream").status, Status::kNeedMore);
  EXPECT_TRUE(parser.ends_at_close());
  EXPECT_EQ(parser.finish().status, Status::kComplete);
  EXPECT_EQ(sink.body, "stream");
}

TEST(HttpParserTest, TruncatedLengthDelimitedAnswerFailsAtFinish) {
  Recorder sink;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  EXPECT_EQ(feed(parser, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc").status,
            Status::kNeedMore);
  EXPECT_EQ(parser.finish().status, Status::kError);
}

TEST(HttpParserTest, SinkCanRefuseTheAnswerHead) {
  Recorder sink;
  sink.accept_head = false;
  MessageParser parser(MessageParser::Kind::kResponse, sink);
  EXPECT_EQ(feed(parser, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").status, Status::kError);
}

}  // namespace
}  // namespace appliance::http
