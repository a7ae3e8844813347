// One request on a window connection and its answer. The exchange owns the request's parser,
// the answer's parser, its lease on an upstream connection (given back when the exchange ends)
// and its once-only failure record; the connection (window.h) owns the client socket and what
// lasts across requests (keep-alive, pipelined bytes, idle eviction). A kept-alive connection
// makes a new Exchange for every request, so nothing of one request reaches the next.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "appliance/http/parser.h"
#include "appliance/loop/pump.h"
#include "appliance/window/upstream.h"
#include "policy/window.h"

namespace appliance::serve {

class Exchange {
 public:
  explicit Exchange(http::BodySink& request_sink)
      : request(http::MessageParser::Kind::kRequest, request_sink) {}
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange();

  http::MessageParser request;
  std::optional<http::MessageParser> response;  // from the moment the head went up

  // The upstream connection this request holds, or nullptr.
  [[nodiscard]] UpstreamConnection* upstream() const noexcept { return upstream_; }
  void lease(UpstreamConnection* connection) noexcept { upstream_ = connection; }
  // Gives the connection back: to the pool when reusable, else closed.
  void give_back(bool reusable) noexcept;
  // The connection closed itself (it called back upstream_ended or upstream_failed).
  void lost() noexcept { upstream_ = nullptr; }
  // Exactly one failed:* per request (docs/reference-behaviour.md#window-upstream): true the
  // first time only.
  [[nodiscard]] bool first_failure() noexcept;
  // The head holds the secret: overwritten before its memory is freed.
  void wipe_head() noexcept;

  // What the decision chose, copied: a grant replaced meanwhile does not change this request.
  std::string grant_id;
  std::optional<policy::UpstreamUrl> upstream_url;
  bool unsafe_private_upstream = false;  // the grant's own word (policy/control_messages.h)
  std::optional<policy::WindowEndpoint> endpoint;
  std::string pool_key;
  std::string upstream_head;  // holds the secret until sent; wiped then
  std::string pending_body;   // client bytes read with the head, parsed once the upstream is ready
  policy::BodyFraming framing = policy::BodyFraming::kNone;
  std::uint64_t body_left = 0;
  bool expect_continue = false;
  bool request_done = false;
  bool response_head_sent = false;
  bool response_done = false;
  bool response_chunked = false;
  bool keep_client = false;       // decided when the answer's head goes out
  loop::WaterMarks answer_marks;  // the upstream is not read while the client's queue is high
  bool retried = false;
  bool reused_upstream = false;
  bool any_response_byte = false;

 private:
  UpstreamConnection* upstream_ = nullptr;
  bool failed_ = false;
};

}  // namespace appliance::serve
