// The llhttp the binaries link is the strict state machine (cmake/Llhttp.cmake defines
// LLHTTP_STRICT_MODE=1). Each request below is one the loose build accepts; the strict build
// refuses it with a parse error. The plain request is the positive control.
#include <gtest/gtest.h>
#include <llhttp.h>

#include <string_view>

namespace {

llhttp_errno_t parse_request(std::string_view bytes) {
  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  llhttp_t parser;
  llhttp_init(&parser, HTTP_REQUEST, &settings);
  return llhttp_execute(&parser, bytes.data(), bytes.size());
}

TEST(LlhttpStrictTest, AcceptsAPlainRequest) {
  EXPECT_EQ(parse_request("GET /k/a/model/g/v1?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"), HPE_OK);
}

TEST(LlhttpStrictTest, RefusesHtabInTheTarget) {
  EXPECT_NE(parse_request("GET /a/..\t/b HTTP/1.1\r\nHost: a\r\n\r\n"), HPE_OK);
}

TEST(LlhttpStrictTest, RefusesFormFeedInTheTarget) {
  EXPECT_NE(parse_request("GET /a\f HTTP/1.1\r\nHost: a\r\n\r\n"), HPE_OK);
}

TEST(LlhttpStrictTest, RefusesBytesPast0x7fInTheTarget) {
  EXPECT_NE(parse_request("GET /\xc0\xae\xc0\xae/x HTTP/1.1\r\nHost: a\r\n\r\n"), HPE_OK);
  EXPECT_NE(parse_request("GET /a\x80 HTTP/1.1\r\nHost: a\r\n\r\n"), HPE_OK);
}

}  // namespace
