#include "appliance/serve/window.h"

#include <openssl/mem.h>

#include "appliance/serve/http_conn.h"
#include "appliance/serve/refusal.h"
#include "policy/control_messages.h"
#include "policy/window_path.h"

namespace appliance::serve {
namespace {

// Reference §3.1-§3.3: the exact answers. A bad key, an unknown grant and a path that walks out
// get the same one, so the space cannot tell which.
// Client bytes held while the upstream is being reached; past it the client waits.
constexpr std::size_t kMaxHeldBytes = 64 * 1024;

constexpr std::string_view kNoSuchGrant = "no such grant";
constexpr std::string_view kRefusedDestination = "refused destination";
constexpr std::string_view kDoesNotResolve = "the upstream of this grant does not resolve";

bool is_expect_continue(const std::vector<policy::Header>& headers) {
  for (const policy::Header& h : headers) {
    // RFC 9110 §10.1.1: the only expectation defined.
    if (policy::header_name_is(h.name, "expect") && policy::header_name_is(h.value, "100-continue")) return true;
  }
  return false;
}

}  // namespace

Connection* make_window_connection(ServeContext& ctx, TcpListener& listener) {
  return new WindowConnection(ctx, listener);
}

WindowConnection::WindowConnection(ServeContext& ctx, TcpListener& listener)
    : Connection(ctx, listener), request_(HTTP_REQUEST, request_sink_) {
  request_sink_.self = this;
  response_sink_.self = this;
}

void WindowConnection::on_started() {
  uv_timer_init(ctx_.loop, &timer_);
  opened(reinterpret_cast<uv_handle_t*>(&timer_));
  // Header deadline (reference §1: headersTimeout): a slowloris head is an unreadable request.
  uv_timer_start(&timer_, on_timer, kHeadDeadlineMs, 0);
}

void WindowConnection::close_own_handles() {
  if (query_ != nullptr) Resolver::cancel(query_);
  query_ = nullptr;
  if (ctx_.upstream_pool != nullptr) ctx_.upstream_pool->cancel(this);
  drop_upstream();
  close_handle(reinterpret_cast<uv_handle_t*>(&timer_));
}

void WindowConnection::journal(const policy::Decision& decision) {
  ctx_.journal.record(policy::Listener::kWindow, upstream_url_ ? upstream_url_->host : "",
                      upstream_url_ ? upstream_url_->port : 0, decision);
}

void WindowConnection::refuse_json(int status, std::string_view message) {
  state_ = State::kDone;
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  if (query_ != nullptr) Resolver::cancel(query_);
  query_ = nullptr;
  if (ctx_.upstream_pool != nullptr) ctx_.upstream_pool->cancel(this);
  drop_upstream();
  ctx_.metrics.refused(policy::Listener::kWindow, status);
  HttpResponse r;
  r.status = status;
  r.body = policy::error_json(message);
  finish_with(serialise_response(r));
}

void WindowConnection::refuse_bare_400() {
  state_ = State::kDone;
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  drop_upstream();
  ctx_.metrics.refused(policy::Listener::kWindow, 400);
  finish_with(refusal_bytes(400));
}

bool WindowConnection::key_matches(std::string_view key) const {
  if (!ctx_.window_key) return false;
  const std::string_view expected = ctx_.window_key->reveal_for_upstream();
  // The length is public (always 64); the bytes are compared in constant time.
  if (key.size() != expected.size()) return false;
  return CRYPTO_memcmp(key.data(), expected.data(), expected.size()) == 0;
}

void WindowConnection::on_read(Chunk chunk, std::size_t length) {
  switch (state_) {
    case State::kHead: {
      const MessageParser::Feed feed = request_.feed(chunk.get(), length);
      switch (feed.status) {
        case MessageParser::Status::kError:
          if (request_.framing_error()) {
            ctx_.journal.record(policy::Listener::kWindow, policy::kHostRequestFraming, 0,
                                policy::Decision::of(policy::Word::kDenyMalformed));
          } else {
            ctx_.journal.note(policy::Listener::kWindow, policy::Word::kDenyUnreadableRequest);
          }
          refuse_bare_400();
          return;
        case MessageParser::Status::kNeedMore:
          return;
        case MessageParser::Status::kHeadDone:
        case MessageParser::Status::kComplete:
          on_head(chunk.get() + feed.consumed, length - feed.consumed);
          return;
      }
      return;
    }
    case State::kResolving:
    case State::kWaitingRoom:
    case State::kConnecting:
      // Held until the upstream is ready; bounded: past the cap the client waits (backpressure).
      pending_body_.append(chunk.get(), length);
      if (pending_body_.size() >= kMaxHeldBytes) {
        uv_read_stop(reinterpret_cast<uv_stream_t*>(&client_));
        client_paused_ = true;
      }
      return;
    case State::kExchanging:
      feed_request(chunk.get(), length);
      return;
    case State::kDone:
      return;
  }
}

void WindowConnection::on_client_end(int status) {
  // A client that half-closes after its whole request still gets its answer.
  if (status == UV_EOF && request_done_ && state_ == State::kExchanging) return;
  state_ = State::kDone;
  close_all();
}

void WindowConnection::on_head(const char* rest, std::size_t rest_length) {
  uv_timer_stop(&timer_);
  const policy::FramingCheck framing = policy::check_request_framing(request_.headers(), request_.http10());
  if (!framing.ok) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostRequestFraming, 0,
                        policy::Decision::of(policy::Word::kDenyMalformed));
    refuse_bare_400();
    return;
  }
  const policy::WindowRoute route = policy::split_window_route(request_.url());
  if (!route.has_key_segment || !key_matches(route.key)) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostWindowKey, 0,
                        policy::Decision::of(policy::Word::kDenyBadWindowKey));
    refuse_json(403, kNoSuchGrant);
    return;
  }
  // Reference §3.2: the path rule runs before the grant lookup, so the upstream never sees it.
  if (route.grant_id && policy::walks_out(route.rest)) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostGrantPath, 0,
                        policy::Decision::of(policy::Word::kDenyPathWalksOut));
    refuse_json(403, kNoSuchGrant);
    return;
  }
  const auto found = route.grant_id ? ctx_.grants.find(std::string(*route.grant_id)) : ctx_.grants.end();
  if (found == ctx_.grants.end()) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostUnknownGrant, 0,
                        policy::Decision::of(policy::Word::kDenyNoGrant));
    refuse_json(403, kNoSuchGrant);
    return;
  }
  const policy::Grant& grant = found->second;
  grant_id_ = grant.id;
  upstream_url_ = grant.upstream;
  framing_ = framing.framing;
  body_left_ = framing.length;
  if (policy::upstream_always_refused(*upstream_url_)) {
    journal(policy::Decision::of(policy::Word::kDenyAlwaysRefused));
    refuse_json(403, kRefusedDestination);
    return;
  }
  upstream_head_ = std::string(request_.method_name()) + " " +
                   policy::upstream_target(*upstream_url_, route.rest) + " HTTP/1.1\r\n" +
                   policy::upstream_request_headers(request_.headers(), grant, framing_, body_left_) + "\r\n";
  expect_continue_ = framing_ != policy::BodyFraming::kNone && is_expect_continue(request_.headers());
  pending_body_.assign(rest, rest_length);
  if (auto literal = policy::upstream_literal(*upstream_url_)) {
    decide_answers({*literal});
    return;
  }
  state_ = State::kResolving;
  query_ = ctx_.resolver->resolve(upstream_url_->host, on_resolved, this);
}

void WindowConnection::on_resolved(void* owner, Resolution resolution) noexcept {
  auto* self = static_cast<WindowConnection*>(owner);
  self->query_ = nullptr;
  if (self->state_ != State::kResolving || self->closing()) return;
  if (!resolution.ok) {
    self->journal(policy::Decision::with_detail(policy::Word::kDenyUnresolved, resolution.detail));
    self->refuse_json(502, kDoesNotResolve);
    return;
  }
  self->decide_answers(resolution.addresses);
}

void WindowConnection::decide_answers(const std::vector<policy::Address>& answers) {
  const std::vector<policy::Address>& own = ctx_.own_addresses();
  const policy::OwnListeners listeners{own, ctx_.own_ports};
  policy::WindowAnswerDecision d = policy::decide_window_answers(*upstream_url_, answers, listeners);
  journal(d.decision);
  if (!d.endpoint) {
    const bool unresolved = d.decision.word() == policy::Word::kDenyUnresolved;
    refuse_json(unresolved ? 502 : 403, unresolved ? kDoesNotResolve : kRefusedDestination);
    return;
  }
  endpoint_ = std::move(d.endpoint);
  // A connection is reused only for the same grant, upstream and checked address.
  pool_key_ = grant_id_ + "\n" + upstream_url_->to_string() + "\n" + endpoint_->address().to_string() +
              "\n" + std::to_string(endpoint_->port());
  touch();
  acquire();
}

void WindowConnection::acquire() {
  std::string error;
  UpstreamConnection* c = ctx_.upstream_pool->acquire(pool_key_, *endpoint_, ctx_.tls, *upstream_url_,
                                                      this, retried_, error);
  if (c == nullptr && !error.empty()) {
    upstream_failure(error, 502, kUpstreamNoAnswer);
    return;
  }
  touch();
  if (c == nullptr) {
    state_ = State::kWaitingRoom;
    ctx_.upstream_pool->wait(this);
    uv_timer_start(&timer_, on_timer, ctx_.options.idle_seconds * 1000, 0);
    return;
  }
  upstream_ = c;
  reused_upstream_ = c->reused();
  if (c->reused()) {
    upstream_ready();
    return;
  }
  state_ = State::kConnecting;
  uv_timer_start(&timer_, on_timer, ctx_.options.connect_seconds * 1000, 0);
}

void WindowConnection::pool_has_room() {
  if (state_ == State::kWaitingRoom && !closing()) acquire();
}

void WindowConnection::on_timer(uv_timer_t* timer) noexcept {
  auto* self = static_cast<WindowConnection*>(timer->data);
  if (self->closing()) return;
  switch (self->state_) {
    case State::kHead:
      self->ctx_.journal.note(policy::Listener::kWindow, policy::Word::kDenyUnreadableRequest);
      self->refuse_bare_400();
      return;
    case State::kWaitingRoom:
    case State::kConnecting:
    case State::kExchanging: {
      const std::uint64_t limit =
          (self->state_ == State::kConnecting ? self->ctx_.options.connect_seconds : self->ctx_.options.idle_seconds) * 1000;
      const std::uint64_t quiet = uv_now(self->ctx_.loop) - self->last_activity_;
      if (quiet >= limit) {
        self->upstream_failure("timeout", 504, kUpstreamLate);
        return;
      }
      uv_timer_start(timer, on_timer, limit - quiet, 0);
      return;
    }
    case State::kResolving:  // the resolver's own deadline answers
    case State::kDone:
      return;
  }
}

}  // namespace appliance::serve
