#include "appliance/window/window.h"

#include <openssl/mem.h>

#include <charconv>

#include "appliance/serve/http_conn.h"
#include "appliance/serve/refusal.h"
#include "policy/control_messages.h"
#include "policy/secret.h"
#include "policy/window_path.h"

namespace appliance::serve {
namespace {

// The exact answers (docs/reference-behaviour.md#window-grants). A bad key, an unknown grant and a
// path that walks out get the same one, so the space cannot tell which.
constexpr std::string_view kNoSuchGrant = "no such grant";
constexpr std::string_view kRefusedDestination = "refused destination";
constexpr std::string_view kDoesNotResolve = "the upstream of this grant does not resolve";

bool is_expect_continue(const std::vector<policy::Header>& headers) {
  for (const policy::Header& h : headers) {
    // RFC 9110 §10.1.1: the only expectation defined.
    if (policy::header_name_is(h.name, "expect") &&
        policy::header_name_is(h.value, "100-continue")) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<policy::Header> policy_fields(std::vector<http::Header> fields) {
  std::vector<policy::Header> out;
  out.reserve(fields.size());
  for (http::Header& f : fields) out.push_back({std::move(f.name), std::move(f.value)});
  return out;
}

Connection* make_window_connection(ServeContext& ctx, TcpListener& listener) {
  return new WindowConnection(ctx, listener);
}

WindowConnection::WindowConnection(ServeContext& ctx, TcpListener& listener)
    : Connection(ctx, listener) {
  request_sink_.self = this;
  response_sink_.self = this;
  client_writes_.self = this;
  ex_.emplace(request_sink_);
}

void WindowConnection::on_started() {
  uv_timer_init(ctx_.loop, &timer_);
  opened(loop::as_handle(&timer_));
  // Header deadline (docs/reference-behaviour.md#listeners: headersTimeout): a slowloris head is an
  // unreadable request.
  uv_timer_start(&timer_, on_timer, http::kHeadDeadlineMs, 0);
}

void WindowConnection::close_own_handles() {
  if (query_ != nullptr) ctx_.resolver->cancel(query_);
  query_ = nullptr;
  if (ctx_.upstream_pool != nullptr) ctx_.upstream_pool->cancel(this);
  drop_upstream();
  wipe_secret();
  close_handle(loop::as_handle(&timer_));
}

void WindowConnection::journal(const policy::Decision& decision) {
  ctx_.journal.record(policy::Listener::kWindow, ex_->upstream_url ? ex_->upstream_url->host : "",
                      ex_->upstream_url ? ex_->upstream_url->port : 0, decision);
}

void WindowConnection::refuse_json(int status, std::string_view message) {
  state_ = State::kDone;
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  if (query_ != nullptr) ctx_.resolver->cancel(query_);
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
    case State::kHead:
      if (pipelined_) {  // behind bytes already held: keep the order
        hold_next(chunk.get(), length);
        return;
      }
      read_head(chunk.get(), length);
      return;
    case State::kResolving:
    case State::kWaitingRoom:
    case State::kConnecting:
      // Held until the upstream is ready; bounded: past the cap the client waits (backpressure).
      ex_->pending_body.append(chunk.get(), length);
      if (ex_->pending_body.size() >= loop::kMaxHeldBytes && !client_paused_) {
        pause_client_reading();
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

void WindowConnection::read_head(const char* data, std::size_t length) {
  if (awaiting_request_) {
    // The first byte of a kept-alive connection's next request: its head has the usual deadline.
    awaiting_request_ = false;
    mark_idle(false);
    uv_timer_start(&timer_, on_timer, http::kHeadDeadlineMs, 0);
  }
  const http::MessageParser::Feed feed = ex_->request.feed(data, length);
  switch (feed.status) {
    case http::MessageParser::Status::kError:
      if (ex_->request.framing_error()) {
        ctx_.journal.record(policy::Listener::kWindow, policy::kHostRequestFraming, 0,
                            policy::Decision::of(policy::Word::kDenyMalformed));
      } else {
        ctx_.journal.note(policy::Listener::kWindow, policy::Word::kDenyUnreadableRequest);
      }
      refuse_bare_400();
      return;
    case http::MessageParser::Status::kNeedMore:
      return;
    case http::MessageParser::Status::kHeadDone:
    case http::MessageParser::Status::kComplete:
      on_head(data + feed.consumed, length - feed.consumed);
      return;
  }
}

void WindowConnection::hold_next(const char* data, std::size_t length) {
  // Bytes past the current request: the next one, parsed once this answer is complete. Bounded:
  // past loop::kMaxHeldBytes the client is no longer read until then (backpressure, not a refusal).
  next_bytes_.append(data, length);
  if (next_bytes_.size() >= loop::kMaxHeldBytes && !client_paused_) {
    pause_client_reading();
    client_paused_ = true;
  }
}

void WindowConnection::read_pipelined() {
  std::string next;
  next.swap(next_bytes_);
  if (client_paused_) {
    client_paused_ = false;
    resume_client_reading();
  }
  read_head(next.data(), next.size());
}

void WindowConnection::on_client_end(int status) {
  // A client that half-closes after its request (`nc`, `curl -T -`, shutdown(SHUT_WR)) still gets
  // its answer, then the close. A bodyless request is whole once its head was read; a body held
  // before the upstream was ready is checked for completeness in upstream_ready().
  const bool past_head = state_ == State::kResolving || state_ == State::kWaitingRoom ||
                         state_ == State::kConnecting || state_ == State::kExchanging;
  const bool whole = ex_->request_done || ex_->framing == policy::BodyFraming::kNone ||
                     state_ != State::kExchanging;
  if (status == UV_EOF && past_head && whole) {
    client_ended_ = true;
    return;
  }
  if (status == UV_EOF && state_ == State::kExchanging) {  // the FIN cut the body short
    truncated_request();
    return;
  }
  state_ = State::kDone;
  close_all();
}

void WindowConnection::on_head(const char* rest, std::size_t rest_length) {
  uv_timer_stop(&timer_);
  const std::vector<policy::Header> fields = policy_fields(ex_->request.take_headers());
  const policy::FramingCheck framing = policy::check_request_framing(fields, ex_->request.http10());
  if (!framing.ok) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostRequestFraming, 0,
                        policy::Decision::of(policy::Word::kDenyMalformed));
    refuse_bare_400();
    return;
  }
  const policy::WindowRoute route = policy::split_window_route(ex_->request.url());
  if (!route.has_key_segment || !key_matches(route.key)) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostWindowKey, 0,
                        policy::Decision::of(policy::Word::kDenyBadWindowKey));
    refuse_json(403, kNoSuchGrant);
    return;
  }
  // docs/reference-behaviour.md#window-path-rule: the path rule runs before the grant lookup, so
  // the upstream never sees it.
  if (route.grant_id && policy::walks_out(route.rest)) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostGrantPath, 0,
                        policy::Decision::of(policy::Word::kDenyPathWalksOut));
    refuse_json(403, kNoSuchGrant);
    return;
  }
  const auto found =
      route.grant_id ? ctx_.grants.find(std::string(*route.grant_id)) : ctx_.grants.end();
  if (found == ctx_.grants.end()) {
    ctx_.journal.record(policy::Listener::kWindow, policy::kHostUnknownGrant, 0,
                        policy::Decision::of(policy::Word::kDenyNoGrant));
    refuse_json(403, kNoSuchGrant);
    return;
  }
  const policy::Grant& grant = found->second;
  ex_->grant_id = grant.id;
  ex_->upstream_url = grant.upstream;
  ex_->unsafe_private_upstream = grant.unsafe_private_upstream;
  ex_->framing = framing.framing;
  ex_->body_left = framing.length;
  if (const auto refused = policy::upstream_refused_by_name(*ex_->upstream_url)) {
    journal(policy::Decision::of(*refused));
    refuse_json(403, kRefusedDestination);
    return;
  }
  {
    // Built in one buffer of the right size: the head holds the secret, and no temporary or
    // reallocation may leave a copy of it in freed memory (policy/secret.h).
    std::string headers =
        policy::upstream_request_headers(fields, grant, ex_->framing, ex_->body_left);
    const std::string_view method = ex_->request.method_name();
    const std::string target = policy::upstream_target(*ex_->upstream_url, route.rest);
    ex_->upstream_head.reserve(method.size() + target.size() + headers.size() + 16);
    ex_->upstream_head.append(method)
        .append(" ")
        .append(target)
        .append(" HTTP/1.1\r\n")
        .append(headers)
        .append("\r\n");
    policy::wipe_string(headers);
  }
  ex_->expect_continue = ex_->framing != policy::BodyFraming::kNone && is_expect_continue(fields);
  ex_->pending_body.assign(rest, rest_length);
  if (reuse_kept_connection()) return;
  if (auto literal = policy::upstream_literal(*ex_->upstream_url)) {
    decide_answers({*literal});
    return;
  }
  state_ = State::kResolving;
  query_ = ctx_.resolver->resolve(ex_->upstream_url->host, on_resolved, this);
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
  policy::WindowAnswerDecision d = policy::decide_window_answers(
      *ex_->upstream_url, ex_->unsafe_private_upstream, answers, listeners, ctx_.blocked);
  journal(d.decision);
  if (!d.endpoint) {
    const bool unresolved = d.decision.word() == policy::Word::kDenyUnresolved;
    refuse_json(unresolved ? 502 : 403, unresolved ? kDoesNotResolve : kRefusedDestination);
    return;
  }
  ex_->endpoint = std::move(d.endpoint);
  // A connection is reused only for the same grant, upstream and checked address.
  ex_->pool_key = pool_route() + ex_->endpoint->address().to_string() + "\n" +
                  std::to_string(ex_->endpoint->port());
  touch();
  acquire();
}

std::string WindowConnection::pool_route() const {
  // Grant ids and upstream URLs hold no '\n': the route is an exact prefix of every pool key of
  // this grant and upstream, whatever address they were dialled to. The grant's private-network
  // word is part of it: a connection dialled to a private address under the word is never reused
  // by the grant once replaced without it.
  // Built in one buffer: scheme, host, port and path (not UpstreamUrl::to_string(), which
  // allocates for each piece) name the upstream as exactly.
  const policy::UpstreamUrl& url = *ex_->upstream_url;
  char port[8];
  const auto [port_end, port_error] = std::to_chars(port, port + sizeof port, url.port);
  (void)port_error;  // five digits fit
  std::string route;
  route.reserve(ex_->grant_id.size() + url.scheme.size() + url.host.size() + url.path.size() + 16);
  route.append(ex_->grant_id)
      .append("\n")
      .append(url.scheme)
      .append("://")
      .append(url.host)
      .append(":")
      .append(port, port_end)
      .append(url.path)
      .append(ex_->unsafe_private_upstream ? "\n1\n" : "\n0\n");
  return route;
}

bool WindowConnection::reuse_kept_connection() {
  // A kept connection of this grant and upstream goes where decide_window_answers() allowed when
  // it was dialled; a DNS answer now could not change where this request goes, so none is asked.
  // The request is still journalled `allow` with its own record.
  UpstreamConnection* c = ctx_.upstream_pool->reuse_idle(pool_route(), this);
  if (c == nullptr) return false;
  if (policy::in_any_range(ctx_.blocked, c->endpoint().address())) {
    // Blocked by the operator since it was dialled (POST /blocked): not reused; the request is
    // decided afresh and refused like any answer in the range.
    c->release(false);
    return false;
  }
  journal(policy::Decision::of(policy::Word::kAllow));
  ex_->endpoint = c->endpoint();
  ex_->pool_key = c->key();
  ex_->reused_upstream = true;
  ex_->lease(c);
  touch();
  upstream_ready();
  return true;
}

void WindowConnection::acquire() {
  std::string error;
  UpstreamConnection* c = ctx_.upstream_pool->acquire(
      ex_->pool_key, *ex_->endpoint, ctx_.tls, *ex_->upstream_url, this, ex_->retried, error);
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
  ex_->lease(c);
  ex_->reused_upstream = c->reused();
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
  auto* self = owner_of<WindowConnection>(timer);
  if (self->closing()) return;
  switch (self->state_) {
    case State::kHead:
      if (self->pipelined_) {
        self->pipelined_ = false;
        self->read_pipelined();
        return;
      }
      if (self->awaiting_request_) {
        // A kept-alive connection with no next request: closed quietly (not a refusal).
        self->state_ = State::kDone;
        self->close_all();
        return;
      }
      self->ctx_.journal.note(policy::Listener::kWindow, policy::Word::kDenyUnreadableRequest);
      self->refuse_bare_400();
      return;
    case State::kWaitingRoom:
    case State::kConnecting:
    case State::kExchanging: {
      const std::uint64_t limit =
          (self->state_ == State::kConnecting ? self->ctx_.options.connect_seconds
                                              : self->ctx_.options.idle_seconds) *
          1000;
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
