#include "appliance/serve/corridor.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "appliance/serve/interfaces.h"
#include "appliance/serve/listener.h"
#include "appliance/serve/refusal.h"
#include "policy/control_messages.h"

namespace appliance::serve {

Connection* make_corridor_connection(ServeContext& ctx, TcpListener& listener) {
  return new CorridorConnection(ctx, listener);
}

CorridorConnection::CorridorConnection(ServeContext& ctx, TcpListener& listener)
    : Connection(ctx, listener) {}

void CorridorConnection::on_started() {
  uv_timer_init(ctx_.loop, &timer_);
  opened(reinterpret_cast<uv_handle_t*>(&timer_));
  // Header deadline: a slowloris head ends as an unreadable request.
  uv_timer_start(&timer_, on_deadline, kHeadDeadlineMs, 0);
}

void CorridorConnection::close_own_handles() {
  release_slot();
  if (query_ != nullptr) Resolver::cancel(query_);
  query_ = nullptr;
  close_handle(reinterpret_cast<uv_handle_t*>(&timer_));
  close_handle(reinterpret_cast<uv_handle_t*>(&upstream_));
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
  if (query_ != nullptr) Resolver::cancel(query_);
  query_ = nullptr;
  close_handle(reinterpret_cast<uv_handle_t*>(&upstream_));
  ctx_.metrics.refused(policy::Listener::kCorridor, status);
  finish_with(refusal_bytes(status));
}

void CorridorConnection::on_read(Chunk chunk, std::size_t length) {
  switch (state_) {
    case State::kHead: {
      const RequestParser::Feed feed = parser_.feed(chunk.get(), length);
      switch (feed.status) {
        case RequestParser::Status::kError:
          ctx_.journal.note(policy::Listener::kCorridor, policy::Word::kDenyUnreadableRequest);
          refuse(400);
          return;
        case RequestParser::Status::kHeadDone:
        case RequestParser::Status::kMessageDone:
          on_head(feed.consumed, chunk.get(), length);
          return;
        case RequestParser::Status::kNeedMore:
          return;
      }
      return;
    }
    case State::kResolving:
    case State::kConnecting:
      // Held in order and sent first once connected; bounded: past the cap the client waits.
      held_.append(chunk.get(), length);
      if (held_.size() >= kMaxHeldBytes) uv_read_stop(reinterpret_cast<uv_stream_t*>(&client_));
      return;
    case State::kRelaying:
      relay(up_, std::move(chunk), length);
      return;
    case State::kDone:
      return;
  }
}

void CorridorConnection::on_client_end(int status) {
  switch (state_) {
    case State::kRelaying:
      if (status == UV_EOF) {
        end_of(up_);
      } else {
        relay_failed(up_, false, status);
      }
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
  query_ = ctx_.resolver->resolve(pending_->name(), on_resolved, this);
}

void CorridorConnection::on_resolved(void* owner, Resolution resolution) noexcept {
  auto* self = static_cast<CorridorConnection*>(owner);
  self->query_ = nullptr;
  if (self->state_ != State::kResolving || self->closing()) return;
  ServeContext& ctx = self->ctx_;
  if (!resolution.ok) {
    ctx.journal.record(policy::Listener::kCorridor, self->subject_.host, self->subject_.port,
                       policy::Decision::with_detail(policy::Word::kDenyUnresolved, resolution.detail));
    self->refuse(403);
    return;
  }
  policy::AnswerDecision answer =
      policy::decide_answers(*self->pending_, resolution.addresses, ctx.own_addresses());
  self->subject_ = answer.subject;
  ctx.journal.record(policy::Listener::kCorridor, answer.subject.host, answer.subject.port,
                     answer.decision);
  if (!answer.endpoint) {
    self->refuse(corridor_status(answer.decision.word()));
    return;
  }
  self->connect_to(*answer.endpoint);
}

void CorridorConnection::connect_to(const policy::ApprovedEndpoint& endpoint) {
  // docs/decisions.md#dial-only-what-was-approved: the only address dialled is the one
  // decide_answers() checked.
  const sockaddr_storage storage = socket_address(endpoint.address(), endpoint.port());
  uv_tcp_init(ctx_.loop, &upstream_);
  opened(reinterpret_cast<uv_handle_t*>(&upstream_));
  upstream_open_ = true;
  connect_req_.data = this;
  const int rc = uv_tcp_connect(&connect_req_, &upstream_,
                                reinterpret_cast<const sockaddr*>(&storage), on_connected);
  if (rc != 0) {
    ctx_.journal.record(policy::Listener::kCorridor, subject_.host, subject_.port,
                        policy::Decision::with_detail(policy::Word::kFailed, uv_err_name(rc)));
    refuse(502);
    return;
  }
  state_ = State::kConnecting;
  uv_timer_start(&timer_, on_deadline, ctx_.options.connect_seconds * 1000, 0);
}

void CorridorConnection::on_connected(uv_connect_t* req, int status) noexcept {
  auto* self = static_cast<CorridorConnection*>(req->data);
  if (status == UV_ECANCELED || self->state_ != State::kConnecting || self->closing()) return;
  if (status < 0) {
    self->ctx_.journal.record(policy::Listener::kCorridor, self->subject_.host, self->subject_.port,
                              policy::Decision::with_detail(policy::Word::kFailed, uv_err_name(status)));
    self->refuse(502);
    return;
  }
  self->start_relay();
}

void CorridorConnection::on_deadline(uv_timer_t* timer) noexcept {
  auto* self = static_cast<CorridorConnection*>(timer->data);
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
    case State::kResolving:
    case State::kRelaying:
    case State::kDone:
      return;
  }
}

}  // namespace appliance::serve
