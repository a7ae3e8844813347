// The window's request side, as the space drives it: the strict llhttp adapter (appliance/http) fed in
// pieces whose sizes the input chooses, then the framing check, the route split, the path rule
// and the header block that would go upstream. Never crashes, and whatever the space wrote:
//   - no credential header it sent reaches the upstream block (the kCredential rows of
//     policy/header_rules.h, the table the window strips by; only the grant's own header, once,
//     with the grant's secret);
//   - the block is well-formed lines (no CR or LF inside a name or value: no header injection);
//   - a body is only delivered after the head, and never more bytes than were fed.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "appliance/http/parser.h"
#include "policy/header_rules.h"
#include "policy/window.h"
#include "policy/window_path.h"

namespace {

constexpr std::string_view kSecret = "sk-grant-FUZZ-SECRET";
constexpr std::string_view kGrantHeader = "authorization";  // the grant's own header

class Sink final : public appliance::http::BodySink {
 public:
  bool on_head() override { return true; }
  void on_body(const char*, std::size_t length) override { body += length; }
  void on_complete() override { ++completes; }
  std::size_t body = 0;
  int completes = 0;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

void check_upstream_block(const std::string& block) {
  std::size_t injected = 0;
  std::size_t start = 0;
  while (start < block.size()) {
    const std::size_t end = block.find("\r\n", start);
    if (end == std::string::npos) std::abort();  // every line ends with CRLF
    const std::string_view line(block.data() + start, end - start);
    if (line.find('\r') != std::string_view::npos || line.find('\n') != std::string_view::npos) std::abort();
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) std::abort();
    const std::string name = lower(line.substr(0, colon));
    if (name == kGrantHeader) {
      if (line.substr(colon) != ": Bearer " + std::string(kSecret)) std::abort();
      ++injected;
      start = end + 2;
      continue;
    }
    // The window's own written-down table (policy/header_rules.h), not a copy that could drift.
    const policy::HeaderRow* row = policy::stripped_request_header(name);
    if (row != nullptr && row->kind == policy::HeaderClass::kCredential) std::abort();
    start = end + 2;
  }
  if (injected != 1) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 64;  // how the bytes arrive
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const std::size_t length = size - 1;

  Sink sink;
  using appliance::http::MessageParser;
  MessageParser request(MessageParser::Kind::kRequest, sink);
  std::size_t at = 0;
  bool head = false;
  while (at < length && !head) {
    const std::size_t n = std::min(piece, length - at);
    const auto feed = request.feed(bytes + at, n);
    if (feed.consumed > n) std::abort();
    if (feed.status == MessageParser::Status::kError) return 0;
    if (sink.body != 0) std::abort();  // nothing of a body before the head was decided
    head = feed.status == MessageParser::Status::kHeadDone ||
           feed.status == MessageParser::Status::kComplete;
    at += head ? feed.consumed : n;
  }
  if (!head) return 0;
  if (request.headers().size() > appliance::http::kMaxHeaderLines) std::abort();
  if (at > appliance::http::kMaxRequestHeadBytes) std::abort();
  std::vector<policy::Header> fields;
  for (const auto& f : request.headers()) fields.push_back({f.name, f.value});

  const policy::FramingCheck framing = policy::check_request_framing(fields, request.http10());
  const policy::WindowRoute route = policy::split_window_route(request.url());
  if (route.grant_id && !policy::is_grant_id(*route.grant_id)) std::abort();
  (void)policy::walks_out(route.rest);
  if (!framing.ok) return 0;

  auto url = policy::parse_upstream_url("https://api.example.test/v1/");
  if (!url) std::abort();
  policy::Grant grant{"fuzz", std::move(url.value()), std::string(kGrantHeader), policy::Secret(std::string(kSecret))};
  (void)policy::upstream_target(grant.upstream, route.rest);
  check_upstream_block(policy::upstream_request_headers(fields, grant, framing.framing, framing.length));

  // The body, as the window reads it once the upstream is ready.
  std::size_t fed = 0;
  while (at < length) {
    const std::size_t n = std::min(piece, length - at);
    const auto feed = request.feed(bytes + at, n);
    fed += n;  // on an error, part of this piece may have been delivered already
    if (feed.status == MessageParser::Status::kError) break;
    at += n;
    if (feed.status == MessageParser::Status::kComplete) break;
  }
  if (sink.body > fed) std::abort();
  if (framing.framing == policy::BodyFraming::kLength && sink.body > framing.length) std::abort();
  if (sink.completes > 1) std::abort();
  return 0;
}
