// The corridor's and the control channel's request parser (RequestParser, strict llhttp) fed in
// pieces whose sizes the input chooses: never crashes, never claims more bytes than it was given,
// a head it accepts is never longer than kMaxHeadBytes (request line, fields and the empty line:
// counted from the bytes the parser says the head used), and a full-mode body is never longer
// than its cap. Seeds head-at-limit and head-one-past-limit sit on both sides of the bound.
#include <cstdint>
#include <cstdlib>

#include "appliance/serve/http_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const bool head_only = (data[0] & 0x80) != 0;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const std::size_t length = size - 1;
  constexpr std::size_t kMaxBody = 4096;
  appliance::serve::RequestParser parser(head_only, kMaxBody);
  std::size_t at = 0;
  while (at < length) {
    const std::size_t n = std::min(piece, length - at);
    const auto feed = parser.feed(bytes + at, n);
    if (feed.consumed > n) std::abort();
    using Status = appliance::serve::RequestParser::Status;
    if (feed.status == Status::kError) return 0;
    // Where the parser stops at the head's end (head-only mode; CONNECT, whose message is its
    // head, in either mode) the head is every byte before this piece and what it used of this one.
    const bool at_head_end = feed.status == Status::kHeadDone ||
                             (feed.status == Status::kMessageDone && parser.is_connect());
    if (at_head_end && at + feed.consumed > appliance::serve::kMaxHeadBytes) std::abort();
    if (feed.status == Status::kHeadDone || feed.status == Status::kMessageDone) {
      if (parser.url().size() > appliance::serve::kMaxHeadBytes) std::abort();
      if (parser.body().size() > kMaxBody) std::abort();
      return 0;
    }
    at += n;
  }
  return 0;
}
