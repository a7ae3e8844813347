// The request head as the corridor and the control channel read it (appliance/http, strict
// llhttp) fed in pieces whose sizes the input chooses: never crashes, never claims more bytes
// than it was given, a head it accepts is never longer than kMaxRequestHeadBytes (request line,
// fields and the empty line: counted from the bytes the parser says the head used) and never
// has more than kMaxHeaderLines fields, and a body goes to the sink only after the head. Seeds
// head-at-limit and head-one-past-limit sit on both sides of the bound.
#include <cstdint>
#include <cstdlib>

#include "appliance/http/parser.h"

namespace {

class Count final : public appliance::http::BodySink {
 public:
  bool on_head() override { return true; }
  void on_body(const char*, std::size_t length) override { body += length; }
  void on_complete() override {}
  std::size_t body = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using appliance::http::MessageParser;
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const bool read_body = (data[0] & 0x80) != 0;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const std::size_t length = size - 1;
  Count sink;
  MessageParser parser(MessageParser::Kind::kRequest, sink);
  std::size_t at = 0;
  bool head_done = false;
  std::size_t fed_after_head = 0;
  while (at < length) {
    const std::size_t n = std::min(piece, length - at);
    const auto feed = parser.feed(bytes + at, n);
    if (feed.consumed > n) std::abort();
    if (feed.status == MessageParser::Status::kError) return 0;
    if (!head_done && sink.body != 0) std::abort();
    if (feed.status == MessageParser::Status::kHeadDone) {
      if (at + feed.consumed > appliance::http::kMaxRequestHeadBytes) std::abort();
      if (parser.headers().size() > appliance::http::kMaxHeaderLines) std::abort();
      if (!read_body) return 0;
      head_done = true;
      at += feed.consumed;
      continue;
    }
    if (head_done) fed_after_head += n;
    if (sink.body > fed_after_head) std::abort();
    if (feed.status == MessageParser::Status::kComplete) return 0;
    at += n;
  }
  return 0;
}
