// The window's exchange with the upstream: the request head (holding the secret) and the body
// go up as they are parsed, the answer comes down as it arrives. Both bodies are re-framed by us
// from what llhttp parsed (Content-Length kept, chunked re-chunked piece by piece, so server-sent
// events pass as they come), never copied through raw, so no framing the space wrote reaches the
// upstream (RFC 9112 §11.2, request smuggling). Backpressure: a side stops being read while the
// other side's write queue is above kUpstreamHighWater and resumes below kUpstreamLowWater.
#include <cstdio>

#include "appliance/serve/http_conn.h"
#include "appliance/serve/window.h"

namespace appliance::serve {
namespace {

struct ClientWrite {
  uv_write_t req{};
  std::string bytes;
  WindowConnection* self = nullptr;
};

std::string chunk_header(std::size_t length) {
  char text[32];
  std::snprintf(text, sizeof text, "%zx\r\n", length);
  return text;
}

// The request head holds the secret: its bytes are overwritten before the memory is freed.
void wipe(std::string& s) {
  volatile char* bytes = s.data();
  for (std::size_t i = 0; i < s.size(); ++i) bytes[i] = 0;
  s.clear();
  s.shrink_to_fit();
}

}  // namespace

void WindowConnection::touch() { last_activity_ = uv_now(ctx_.loop); }

void WindowConnection::drop_upstream() {
  if (upstream_ == nullptr) return;
  UpstreamConnection* c = upstream_;
  upstream_ = nullptr;
  c->release(false);
}

void WindowConnection::upstream_ready() {
  if (closing() || state_ == State::kDone) return;
  const bool first_attempt = state_ != State::kExchanging;
  state_ = State::kExchanging;
  touch();
  uv_timer_start(&timer_, on_timer, ctx_.options.idle_seconds * 1000, 0);
  response_.emplace(HTTP_RESPONSE, response_sink_);
  response_->set_head_request(request_.is_head_method());
  upstream_->send(upstream_head_);
  if (closing() || upstream_ == nullptr) return;
  if (!first_attempt) return;  // a retry carries no body (see upstream_ended)
  if (expect_continue_) write_client("HTTP/1.1 100 Continue\r\n\r\n");
  if (framing_ == policy::BodyFraming::kNone) {
    request_done_ = true;
    return;
  }
  std::string held;
  held.swap(pending_body_);
  if (!held.empty()) feed_request(held.data(), held.size());
  if (closing() || state_ != State::kExchanging) return;
  if (!request_done_ && client_paused_ && (upstream_ == nullptr || upstream_->queued() < kUpstreamHighWater)) {
    client_paused_ = false;
    resume_client_reading();
  }
}

void WindowConnection::feed_request(const char* data, std::size_t length) {
  if (request_done_ || length == 0) return;  // bytes after the request: ignored (Connection: close)
  const MessageParser::Feed feed = request_.feed(data, length);
  if (feed.status == MessageParser::Status::kError) {
    // The body's framing broke half-way (a bad chunk): the upstream has a partial request.
    ctx_.journal.note(policy::Listener::kWindow, policy::Word::kDenyUnreadableRequest);
    drop_upstream();
    if (!response_head_sent_) {
      refuse_bare_400();
    } else {
      state_ = State::kDone;
      close_all();
    }
  }
}

void WindowConnection::RequestSink::on_body(const char* data, std::size_t length) {
  WindowConnection& w = *self;
  w.touch();  // an upload that keeps moving is never cut
  w.ctx_.metrics.relayed_up(length);
  if (w.upstream_ == nullptr) return;
  if (w.framing_ == policy::BodyFraming::kChunked) {
    std::string piece = chunk_header(length);
    piece.append(data, length);
    piece += "\r\n";
    w.upstream_->send(piece);
  } else {
    w.upstream_->send(std::string_view(data, length));
  }
  if (w.upstream_ != nullptr && w.upstream_->queued() > kUpstreamHighWater && !w.client_paused_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&w.client_));
    w.client_paused_ = true;
  }
}

void WindowConnection::RequestSink::on_complete() {
  WindowConnection& w = *self;
  if (w.framing_ == policy::BodyFraming::kChunked && w.upstream_ != nullptr) {
    w.upstream_->send("0\r\n\r\n");  // trailers the space sent are not forwarded (RFC 9110 §6.5)
  }
  w.request_done_ = true;
}

void WindowConnection::upstream_drained() {
  if (client_paused_ && !request_done_ && state_ == State::kExchanging) {
    client_paused_ = false;
    resume_client_reading();
  }
}

void WindowConnection::upstream_data(const char* data, std::size_t length) {
  if (closing() || state_ != State::kExchanging || !response_) return;
  touch();
  if (!any_response_byte_) {
    any_response_byte_ = true;
    wipe(upstream_head_);  // no retry past this point
  }
  const MessageParser::Feed feed = response_->feed(data, length);
  if (feed.status == MessageParser::Status::kError) {
    upstream_failure("bad-response", 502, kUpstreamNoAnswer);
    return;
  }
  if (closing() || !response_done_) return;
  // The connection is reusable only after a whole exchange with nothing left over.
  const bool reusable = request_done_ && feed.consumed == length && response_->keep_alive() &&
                        !response_->ends_at_close();
  if (upstream_ != nullptr) {
    UpstreamConnection* c = upstream_;
    upstream_ = nullptr;
    c->release(reusable);
  }
  finish_success();
}

bool WindowConnection::ResponseSink::on_head() {
  WindowConnection& w = *self;
  const MessageParser& r = *w.response_;
  const int status = r.status_code();
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + r.reason() + "\r\n";
  head += policy::client_response_headers(r.headers());
  const bool no_body = w.request_.is_head_method() || status == 204 || status == 304;
  if (r.has_length() && status != 204) {
    head += "Content-Length: " + std::to_string(r.length()) + "\r\n";
  } else if (!no_body && r.chunked() && !w.request_.http10()) {
    // RFC 9112 §7: chunked is HTTP/1.1 only; a 1.0 client reads until the close instead.
    head += "Transfer-Encoding: chunked\r\n";
    w.response_chunked_ = true;
  }
  head += "Connection: close\r\n\r\n";
  w.write_client(std::move(head));
  w.response_head_sent_ = true;
  return true;
}

void WindowConnection::ResponseSink::on_body(const char* data, std::size_t length) {
  WindowConnection& w = *self;
  w.ctx_.metrics.relayed_down(length);
  if (w.response_chunked_) {
    std::string piece = chunk_header(length);
    piece.append(data, length);
    piece += "\r\n";
    w.write_client(std::move(piece));
  } else {
    w.write_client(std::string(data, length));
  }
  const auto* client = reinterpret_cast<const uv_stream_t*>(&w.client_);
  if (w.upstream_ != nullptr && !w.upstream_paused_ && uv_stream_get_write_queue_size(client) > kUpstreamHighWater) {
    w.upstream_->pause_reading();
    w.upstream_paused_ = true;
  }
}

void WindowConnection::ResponseSink::on_complete() {
  WindowConnection& w = *self;
  if (w.response_chunked_) w.write_client("0\r\n\r\n");
  w.response_done_ = true;
}

void WindowConnection::upstream_ended() {
  upstream_ = nullptr;  // the connection closes itself
  if (closing() || state_ == State::kDone) return;
  if (response_ && response_head_sent_ && response_->ends_at_close()) {
    // RFC 9112 §6.3 item 8: a body without length ends with the connection.
    if (response_->finish().status == MessageParser::Status::kComplete) {
      finish_success();
      return;
    }
  }
  upstream_failed("EOF");
}

void WindowConnection::upstream_failed(std::string_view detail) {
  upstream_ = nullptr;
  if (closing() || state_ == State::kDone) return;
  // A kept-alive connection the upstream closed just as we sent: one fresh try, when nothing of
  // the answer arrived and the request had no body (RFC 9112 §9.3.1 retry of a request).
  if (state_ == State::kExchanging && !any_response_byte_ && !retried_ &&
      framing_ == policy::BodyFraming::kNone && !upstream_head_.empty() && reused_upstream_) {
    retried_ = true;
    acquire();
    return;
  }
  upstream_failure(detail, 502, kUpstreamNoAnswer);
}

void WindowConnection::upstream_failure(std::string_view detail, int status, std::string_view message) {
  if (!failed_journaled_) {
    failed_journaled_ = true;  // exactly one failed:* per request (reference §3.5)
    journal(policy::Decision::with_detail(policy::Word::kFailed, detail));
  }
  drop_upstream();
  if (ctx_.upstream_pool != nullptr) ctx_.upstream_pool->cancel(this);
  if (!response_head_sent_) {
    refuse_json(status, message);
    return;
  }
  // Bytes of the answer already went out: the space sees the answer cut, never a second status.
  state_ = State::kDone;
  close_all();
}

void WindowConnection::write_client(std::string bytes) {
  if (closing()) return;
  auto* w = new ClientWrite;
  w->bytes = std::move(bytes);
  w->self = this;
  w->req.data = w;
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  if (uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&client_), &buf, 1, on_client_written) != 0) {
    delete w;
    state_ = State::kDone;
    close_all();
  }
}

void WindowConnection::on_client_written(uv_write_t* req, int status) noexcept {
  auto* w = static_cast<ClientWrite*>(req->data);
  WindowConnection* self = w->self;
  delete w;
  if (status == UV_ECANCELED || self->closing()) return;
  if (status < 0) {
    self->state_ = State::kDone;
    self->close_all();
    return;
  }
  self->touch();
  const auto* client = reinterpret_cast<const uv_stream_t*>(&self->client_);
  if (self->upstream_paused_ && self->upstream_ != nullptr && uv_stream_get_write_queue_size(client) < kUpstreamLowWater) {
    self->upstream_paused_ = false;
    self->upstream_->resume_reading();
  }
}

void WindowConnection::finish_success() {
  state_ = State::kDone;
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  wipe(upstream_head_);
  // FIN once every queued byte is written; then the socket closes.
  auto* req = new uv_shutdown_t;
  req->data = this;
  if (uv_shutdown(req, reinterpret_cast<uv_stream_t*>(&client_), on_client_shutdown) != 0) {
    delete req;
    close_all();
  }
}

void WindowConnection::on_client_shutdown(uv_shutdown_t* req, int) noexcept {
  auto* self = static_cast<WindowConnection*>(req->data);
  delete req;
  self->close_all();
}

}  // namespace appliance::serve
