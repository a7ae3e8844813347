#include "appliance/corridor/corridor.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "appliance/loop/address.h"
#include "appliance/serve/interfaces.h"
#include "appliance/serve/listener.h"
#include "appliance/serve/refusal.h"
#include "policy/client_hello.h"
#include "policy/control_messages.h"

namespace appliance::serve {
namespace {

constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";

}  // namespace

Connection* make_corridor_connection(ServeContext& ctx, TcpListener& listener) {
  return new CorridorConnection(ctx, listener);
}

CorridorConnection::CorridorConnection(ServeContext& ctx, TcpListener& listener)
    : Connection(ctx, listener) {}

CorridorConnection::~CorridorConnection() {
  if (registered_) ctx_.corridor_connections.erase(registry_position_);
}

bool CorridorConnection::close_if_refused_by_policy() {
  if (closing() || !pending_ || state_ == State::kDone || state_ == State::kHead) return false;
  const policy::TargetDecision now = policy::decide_target(
      pending_->name() + ":" + std::to_string(pending_->port()), ctx_.network);
  if (now.pending) return false;
  ctx_.journal.record(policy::Listener::kCorridor, pending_->name(), pending_->port(),
                      policy::Decision::of(policy::Word::kDenyPolicyChanged));
  switch (state_) {
    case State::kResolving:
    case State::kConnecting:
      refuse(403);  // no 200 yet: the generic refusal, as if decided now
      break;
    case State::kClientHello:
    case State::kRelaying:
      state_ = State::kDone;
      close_all();
      break;
    case State::kHead:
    case State::kDone:
      break;
  }
  return true;
}

std::size_t close_tunnels_refused_by_policy(ServeContext& ctx) {
  // Closing erases nothing from the registry until the close callbacks: walk a copy anyway.
  const std::list<CorridorConnection*> every = ctx.corridor_connections;
  std::size_t closed = 0;
  for (CorridorConnection* c : every) {
    if (c->close_if_refused_by_policy()) ++closed;
  }
  return closed;
}

void CorridorConnection::on_started() {
  uv_timer_init(ctx_.loop, &timer_);
  opened(loop::as_handle(&timer_));
  // Header deadline: a slowloris head ends as an unreadable request.
  uv_timer_start(&timer_, on_deadline, http::kHeadDeadlineMs, 0);
}

void CorridorConnection::close_own_handles() {
  release_slot();
  if (query_ != nullptr) ctx_.resolver->cancel(query_);
  query_ = nullptr;
  close_handle(loop::as_handle(&timer_));
  // The polls watch the streams' descriptors: they stop before the streams close them.
  splice_.stop();
  close_handle(loop::as_handle(splice_.poll(loop::SpliceRelay::Side::kA)));
  close_handle(loop::as_handle(splice_.poll(loop::SpliceRelay::Side::kB)));
  close_handle(loop::as_handle(&upstream_));
}

void CorridorConnection::release_slot() {
  if (!holds_slot_) return;
  holds_slot_ = false;
  --ctx_.open_tunnels;
}

void CorridorConnection::refuse(int status) {
  state_ = State::kDone;
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  release_slot();
  if (query_ != nullptr) ctx_.resolver->cancel(query_);
  query_ = nullptr;
  close_handle(loop::as_handle(&upstream_));
  ctx_.metrics.refused(policy::Listener::kCorridor, status);
  finish_with(refusal_bytes(status));
}

void CorridorConnection::on_read(Chunk chunk, std::size_t length) {
  switch (state_) {
    case State::kHead: {
      const http::MessageParser::Feed feed = parser_.feed(chunk.get(), length);
      switch (feed.status) {
        case http::MessageParser::Status::kError:
          ctx_.journal.note(policy::Listener::kCorridor, policy::Word::kDenyUnreadableRequest);
          refuse(400);
          return;
        case http::MessageParser::Status::kHeadDone:
        case http::MessageParser::Status::kComplete:
          on_head(feed.consumed, chunk.get(), length);
          return;
        case http::MessageParser::Status::kNeedMore:
          return;
      }
      return;
    }
    case State::kClientHello:
      held_.append(chunk.get(), length);
      check_client_hello();
      return;
    case State::kResolving:
    case State::kConnecting:
      // Held in order and sent first once connected; bounded: past the cap the client waits.
      held_.append(chunk.get(), length);
      if (held_.size() >= loop::kMaxHeldBytes) pause_client_reading();
      return;
    case State::kRelaying:
      up_.push(std::move(chunk), length);
      return;
    case State::kDone:
      return;
  }
}

void CorridorConnection::on_client_end(int status) {
  switch (state_) {
    case State::kRelaying:
      if (status == UV_EOF) {
        up_.end();
      } else {
        relay_failed(false, status);
      }
      return;
    case State::kClientHello:
      // The tunnel never carried a ClientHello: the attempt is on record all the same.
      refuse_tunnel(policy::Decision::of(policy::Word::kDenyNotTls));
      return;
    case State::kHead:
    case State::kResolving:
    case State::kConnecting:
    case State::kDone:
      // The client went away before its tunnel existed: its slot is free at once.
      close_all();
      return;
  }
}

void CorridorConnection::on_head(std::size_t consumed, const char* data, std::size_t length) {
  uv_timer_stop(&timer_);
  if (!parser_.is_connect()) {
    // Plain proxy: journal the URL's host only, never its path or query.
    auto url = policy::parse_upstream_url(parser_.url());
    ctx_.journal.record(policy::Listener::kCorridor, url ? url->host : "", 0,
                        policy::Decision::of(policy::Word::kDenyNotConnect));
    refuse(403);
    return;
  }
  held_.assign(data + consumed, length - consumed);
  policy::TargetDecision target = policy::decide_target(parser_.url(), ctx_.network);
  subject_ = target.subject;
  if (!target.pending) {
    ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port, target.decision);
    refuse(corridor_status(target.decision.word()));
    return;
  }
  if (ctx_.open_tunnels >= ctx_.options.max_tunnels) {
    ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port,
                        policy::Decision::of(policy::Word::kDenyTooManyTunnels));
    refuse(503);
    return;
  }
  // The slot is taken before DNS so a burst cannot overshoot the cap
  // (docs/reference-behaviour.md#corridor-order-of-checks).
  holds_slot_ = true;
  ++ctx_.open_tunnels;
  pending_ = std::move(target.pending);
  state_ = State::kResolving;
  ctx_.corridor_connections.push_back(this);
  registry_position_ = std::prev(ctx_.corridor_connections.end());
  registered_ = true;
  query_ = ctx_.resolver->resolve(pending_->name(), on_resolved, this);
}

void CorridorConnection::on_resolved(void* owner, Resolution resolution) noexcept {
  auto* self = static_cast<CorridorConnection*>(owner);
  self->query_ = nullptr;
  if (self->state_ != State::kResolving || self->closing()) return;
  ServeContext& ctx = self->ctx_;
  if (!resolution.ok) {
    ctx.journal.record(
        policy::Listener::kCorridor, self->subject_.host, self->subject_.port,
        policy::Decision::with_detail(policy::Word::kDenyUnresolved, resolution.detail));
    self->refuse(403);
    return;
  }
  policy::AnswerDecision answer = policy::decide_answers(*self->pending_, resolution.addresses,
                                                         ctx.own_addresses(), ctx.blocked);
  self->subject_ = answer.subject;
  if (!answer.endpoint) {
    ctx.journal.record(policy::Listener::kCorridor, answer.subject.host, answer.subject.port,
                       answer.decision);
    self->refuse(corridor_status(answer.decision.word()));
    return;
  }
  // `allow` is journalled once the ClientHello names this server (or, before `failed:*`, when
  // the dial fails): the host field never holds a server name the check did not match.
  self->approved_name_ = answer.endpoint->name();
  self->connect_to(*answer.endpoint);
}

void CorridorConnection::connect_to(const policy::ApprovedEndpoint& endpoint) {
  // docs/decisions.md#dial-only-what-was-approved: the only address dialled is the one
  // decide_answers() checked.
  const sockaddr_storage storage = socket_address(endpoint.address(), endpoint.port());
  uv_tcp_init(ctx_.loop, &upstream_);
  opened(loop::as_handle(&upstream_));
  upstream_open_ = true;
  const int rc =
      uv_tcp_connect(&connect_req_, &upstream_, loop::as_sockaddr(storage), on_connected);
  if (rc != 0) {
    ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port,
                        policy::Decision::of(policy::Word::kAllow));
    ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port,
                        policy::Decision::with_detail(policy::Word::kFailed, uv_err_name(rc)));
    refuse(502);
    return;
  }
  state_ = State::kConnecting;
  uv_timer_start(&timer_, on_deadline, ctx_.options.connect_seconds * 1000, 0);
}

void CorridorConnection::on_connected(uv_connect_t* req, int status) noexcept {
  auto* self = owner_of<CorridorConnection>(req->handle);
  if (status == UV_ECANCELED || self->state_ != State::kConnecting || self->closing()) return;
  if (status < 0) {
    self->ctx_.journal.record(policy::Listener::kCorridor, self->subject_.host, self->subject_.port,
                              policy::Decision::of(policy::Word::kAllow));
    self->ctx_.journal.record(
        policy::Listener::kCorridor, self->subject_.host, self->subject_.port,
        policy::Decision::with_detail(policy::Word::kFailed, uv_err_name(status)));
    self->refuse(502);
    return;
  }
  self->await_client_hello();
}

void CorridorConnection::await_client_hello() {
  // The 200 goes out; no byte goes up (and none is read from the upstream) until the ClientHello
  // names the approved server. Bytes the client pipelined after the CONNECT head are the start of
  // it.
  state_ = State::kClientHello;
  uv_timer_stop(&timer_);
  write_text(loop::as_stream(&client_), std::string(kEstablished));
  if (closing()) return;
  uv_timer_start(&timer_, on_deadline, kClientHelloDeadlineMs, 0);
  check_client_hello();
  if (state_ == State::kClientHello && !closing()) resume_client_reading();
}

void CorridorConnection::check_client_hello() {
  const policy::ClientHello hello = policy::parse_client_hello(held_);
  if (hello.status == policy::HelloStatus::kNeedMore) {
    // The parser refuses before this many bytes; the check keeps the hold bounded regardless.
    if (held_.size() > policy::kMaxClientHelloWireBytes) {
      refuse_tunnel(policy::Decision::of(policy::Word::kDenyTlsOversize));
    }
    return;
  }
  const policy::Decision decision = policy::decide_client_hello(hello, approved_name_);
  if (!decision.allowed()) {
    refuse_tunnel(decision);
    return;
  }
  // The server name matched: it is the approved name, so the host field holds exactly it.
  ctx_.journal.record(policy::Listener::kCorridor, approved_name_, subject_.port, decision);
  start_relay();
}

void CorridorConnection::refuse_tunnel(const policy::Decision& decision) {
  // After the 200 the space learns nothing but the close; the server name it sent is never
  // journalled (it is hostile text and, here, not the approved one).
  ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port, decision);
  state_ = State::kDone;
  close_all();
}

void CorridorConnection::on_deadline(uv_timer_t* timer) noexcept {
  auto* self = owner_of<CorridorConnection>(timer);
  if (self->closing()) return;
  switch (self->state_) {
    case State::kHead:
      self->ctx_.journal.note(policy::Listener::kCorridor, policy::Word::kDenyUnreadableRequest);
      self->refuse(400);
      return;
    case State::kConnecting:
      // The reference closed silently after 15 s (docs/reference-behaviour.md#tunnels); we say so
      // and answer 502.
      self->ctx_.journal.record(policy::Listener::kCorridor, self->subject_.host,
                                self->subject_.port,
                                policy::Decision::with_detail(policy::Word::kFailed, "timeout"));
      self->refuse(502);
      return;
    case State::kClientHello:
      self->refuse_tunnel(policy::Decision::of(policy::Word::kDenyTlsTimeout));
      return;
    case State::kResolving:
    case State::kRelaying:
    case State::kDone:
      return;
  }
}

}  // namespace appliance::serve
