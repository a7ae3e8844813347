// The window's exchange with the upstream: the request head (holding the secret) and the body
// go up as they are parsed, the answer comes down as it arrives. Both bodies are re-framed by us
// from what llhttp parsed (Content-Length kept, chunked re-chunked piece by piece, so server-sent
// events pass as they come), never copied through raw, so no framing the space wrote reaches the
// upstream (RFC 9112 §11.2, request smuggling). Backpressure: a side stops being read while the
// other side's write queue is above loop::kHighWater and resumes below loop::kLowWater.
#include <charconv>
#include <cstdio>

#include "appliance/serve/http_conn.h"
#include "appliance/window/window.h"
#include "policy/secret.h"

namespace appliance::serve {
namespace {

// The answer bytes a connection's out_ keeps allocated between answers (flush_client).
constexpr std::size_t kKeptClientBuffer = 4 * 1024;

// `value` in decimal at `out` (room for 20 digits); returns the digit count.
template <class Number>
std::size_t decimal(char (&out)[24], Number value) {
  return static_cast<std::size_t>(std::to_chars(out, out + sizeof out, value).ptr - out);
}

std::string chunk_header(std::size_t length) {
  char text[32];
  std::snprintf(text, sizeof text, "%zx\r\n", length);
  return text;
}

// The request head holds the secret: its bytes are overwritten before the memory is freed.
void wipe(std::string& s) {
  policy::wipe_string(s);
  s.shrink_to_fit();
}

}  // namespace

void WindowConnection::touch() { last_activity_ = uv_now(ctx_.loop); }

Exchange::~Exchange() {
  give_back(false);
  wipe_head();
}

void Exchange::give_back(bool reusable) noexcept {
  if (upstream_ == nullptr) return;
  UpstreamConnection* c = upstream_;
  upstream_ = nullptr;
  c->release(reusable);
}

bool Exchange::first_failure() noexcept {
  if (failed_) return false;
  failed_ = true;
  return true;
}

void Exchange::wipe_head() noexcept { wipe(upstream_head); }

void WindowConnection::drop_upstream() {
  if (ex_) ex_->give_back(false);
}

void WindowConnection::upstream_ready() {
  if (closing() || state_ == State::kDone) return;
  if (!ctx_.grants.contains(ex_->grant_id)) {
    // DELETE /grants/<id> while this request waited for DNS or a connection: its head holds the
    // deleted secret and never goes up.
    upstream_failure("grant-deleted", 502, kUpstreamNoAnswer);
    return;
  }
  const bool first_attempt = state_ != State::kExchanging;
  state_ = State::kExchanging;
  touch();
  uv_timer_start(&timer_, on_timer, ctx_.options.idle_seconds * 1000, 0);
  ex_->response.emplace(http::MessageParser::Kind::kResponse, response_sink_);
  ex_->response->set_head_request(ex_->request.is_head_method());
  ex_->upstream()->send(ex_->upstream_head);
  if (closing() || ex_->upstream() == nullptr) return;
  if (!first_attempt) return;  // a retry carries no body (see upstream_ended)
  if (ex_->expect_continue) write_client("HTTP/1.1 100 Continue\r\n\r\n");
  std::string held;
  held.swap(ex_->pending_body);
  if (ex_->framing == policy::BodyFraming::kNone) {
    ex_->request_done = true;
    if (!held.empty()) hold_next(held.data(), held.size());  // pipelined: the next request
    return;
  }
  if (!held.empty()) feed_request(held.data(), held.size());
  if (closing() || state_ != State::kExchanging) return;
  if (!ex_->request_done && client_ended_) {
    // The client sent its FIN before the whole body: the upstream has a partial request.
    truncated_request();
    return;
  }
  if (!ex_->request_done && client_paused_ &&
      (ex_->upstream() == nullptr || ex_->upstream()->queued() < loop::kHighWater)) {
    client_paused_ = false;
    resume_client_reading();
  }
}

void WindowConnection::truncated_request() {
  ctx_.journal.note(policy::Listener::kWindow, policy::Word::kDenyUnreadableRequest);
  drop_upstream();
  if (!ex_->response_head_sent) {
    refuse_bare_400();
  } else {
    state_ = State::kDone;
    close_all();
  }
}

void WindowConnection::feed_request(const char* data, std::size_t length) {
  if (length == 0) return;
  if (ex_->request_done) {
    hold_next(data, length);
    return;
  }
  const http::MessageParser::Feed feed = ex_->request.feed(data, length);
  if (feed.status == http::MessageParser::Status::kError) {
    // The body's framing broke half-way (a bad chunk): the upstream has a partial request.
    truncated_request();
    return;
  }
  if (feed.status == http::MessageParser::Status::kComplete && feed.consumed < length) {
    hold_next(data + feed.consumed, length - feed.consumed);
  }
}

void WindowConnection::RequestSink::on_body(const char* data, std::size_t length) {
  WindowConnection& w = *self;
  w.touch();  // an upload that keeps moving is never cut
  w.ctx_.metrics.relayed_up(length);
  if (w.ex_->upstream() == nullptr) return;
  if (w.ex_->framing == policy::BodyFraming::kChunked) {
    std::string piece = chunk_header(length);
    piece.append(data, length);
    piece += "\r\n";
    w.ex_->upstream()->send(piece);
  } else {
    w.ex_->upstream()->send(std::string_view(data, length));
  }
  if (w.ex_->upstream() != nullptr && w.ex_->upstream()->queued() > loop::kHighWater &&
      !w.client_paused_) {
    w.pause_client_reading();
    w.client_paused_ = true;
  }
}

void WindowConnection::RequestSink::on_complete() {
  WindowConnection& w = *self;
  if (w.ex_->framing == policy::BodyFraming::kChunked && w.ex_->upstream() != nullptr) {
    w.ex_->upstream()->send(
        "0\r\n\r\n");  // trailers the space sent are not forwarded (RFC 9110 §6.5)
  }
  w.ex_->request_done = true;
}

void WindowConnection::upstream_drained() {
  if (client_paused_ && !ex_->request_done && state_ == State::kExchanging) {
    client_paused_ = false;
    resume_client_reading();
  }
}

void WindowConnection::upstream_data(const char* data, std::size_t length) {
  if (closing() || state_ != State::kExchanging || !ex_->response) return;
  touch();
  if (!ex_->any_response_byte) {
    ex_->any_response_byte = true;
    ex_->wipe_head();  // no retry past this point
  }
  // What this piece of the answer produces (head, body, re-chunking) leaves in one write.
  batching_ = true;
  const http::MessageParser::Feed feed = ex_->response->feed(data, length);
  batching_ = false;
  if (feed.status == http::MessageParser::Status::kError) {
    out_.clear();
    upstream_failure("bad-response", 502, kUpstreamNoAnswer);
    return;
  }
  flush_client();
  if (closing() || !ex_->response_done) return;
  // The connection is reusable only after a whole exchange with nothing left over.
  const bool reusable = ex_->request_done && feed.consumed == length &&
                        ex_->response->keep_alive() && !ex_->response->ends_at_close();
  ex_->give_back(reusable);
  finish_success();
}

bool WindowConnection::ResponseSink::on_head() {
  WindowConnection& w = *self;
  http::MessageParser& r = *w.ex_->response;
  const int status = r.status_code();
  // The head is written straight into the connection's answer buffer (on_head runs inside
  // upstream_data, which batches): one buffer, no temporary per line.
  std::string& head = w.out_;
  char number[24];
  head.append("HTTP/1.1 ").append(number, decimal(number, status)).append(" ").append(r.reason());
  head.append("\r\n").append(policy::client_response_headers(policy_fields(r.take_headers())));
  const bool no_body = w.ex_->request.is_head_method() || status == 204 || status == 304;
  bool delimited = no_body;  // the client can tell where this answer ends without a close
  if (r.has_length() && status != 204) {
    head.append("Content-Length: ").append(number, decimal(number, r.length())).append("\r\n");
    delimited = true;
  } else if (!no_body && r.chunked() && !w.ex_->request.http10()) {
    // RFC 9112 §7: chunked is HTTP/1.1 only; a 1.0 client reads until the close instead.
    head.append("Transfer-Encoding: chunked\r\n");
    w.ex_->response_chunked = true;
    delimited = true;
  }
  w.ex_->keep_client = delimited && w.ex_->request_done && !w.client_ended_ &&
                       w.ex_->request.keep_alive() && !w.ex_->request.http10() &&
                       w.served_ + 1 < kMaxRequestsPerConnection;
  if (w.ex_->keep_client) {
    head.append("Keep-Alive: timeout=")
        .append(number, decimal(number, kClientIdleMs / 1000))
        .append("\r\n\r\n");
  } else {
    head.append("Connection: close\r\n\r\n");
  }
  if (!w.batching_) w.flush_client();
  w.ex_->response_head_sent = true;
  return true;
}

void WindowConnection::ResponseSink::on_body(const char* data, std::size_t length) {
  WindowConnection& w = *self;
  w.ctx_.metrics.relayed_down(length);
  if (w.ex_->response_chunked) {
    std::string piece = chunk_header(length);
    piece.append(data, length);
    piece += "\r\n";
    w.write_client(piece);
  } else {
    w.write_client(std::string_view(data, length));
  }
}

void WindowConnection::ResponseSink::on_complete() {
  WindowConnection& w = *self;
  if (w.ex_->response_chunked) w.write_client("0\r\n\r\n");
  w.ex_->response_done = true;
}

void WindowConnection::upstream_ended() {
  ex_->lost();  // the connection closes itself
  if (closing() || state_ == State::kDone) return;
  if (ex_->response && ex_->response_head_sent && ex_->response->ends_at_close()) {
    // RFC 9112 §6.3 item 8: a body without length ends with the connection.
    if (ex_->response->finish().status == http::MessageParser::Status::kComplete) {
      finish_success();
      return;
    }
  }
  upstream_failed("EOF");
}

void WindowConnection::upstream_failed(std::string_view detail) {
  ex_->lost();
  if (closing() || state_ == State::kDone) return;
  // A kept-alive connection the upstream closed just as we sent: one fresh try, when nothing of
  // the answer arrived, the request had no body and its method is safe to repeat (RFC 9112
  // §9.3.1: a non-idempotent request is never retried automatically; policy::may_retry_method).
  if (state_ == State::kExchanging && !ex_->any_response_byte && !ex_->retried &&
      ex_->framing == policy::BodyFraming::kNone && !ex_->upstream_head.empty() &&
      ex_->reused_upstream && policy::may_retry_method(ex_->request.method_name())) {
    ex_->retried = true;
    acquire();
    return;
  }
  upstream_failure(detail, 502, kUpstreamNoAnswer);
}

void WindowConnection::upstream_failure(std::string_view detail, int status,
                                        std::string_view message) {
  if (ex_->first_failure()) journal(policy::Decision::with_detail(policy::Word::kFailed, detail));
  drop_upstream();
  if (ctx_.upstream_pool != nullptr) ctx_.upstream_pool->cancel(this);
  if (!ex_->response_head_sent) {
    refuse_json(status, message);
    return;
  }
  // Bytes of the answer already went out: the space sees the answer cut, never a second status.
  state_ = State::kDone;
  close_all();
}

void WindowConnection::write_client(std::string_view bytes) {
  if (closing()) return;
  out_.append(bytes);
  if (!batching_) flush_client();
}

void WindowConnection::flush_client() {
  if (out_.empty()) return;
  if (closing()) {
    out_.clear();
    return;
  }
  // out_ keeps a small buffer from one answer to the next: what the socket takes now is written
  // from it, and only a rest is copied into a queued write. A large one (a long body) is freed,
  // so an idle kept-alive connection holds at most kKeptClientBuffer bytes of it.
  const int rc = loop::send(loop::as_stream(&client_), std::string_view(out_), &client_writes_);
  if (out_.capacity() > kKeptClientBuffer) {
    std::string().swap(out_);
  } else {
    out_.clear();
  }
  if (rc != 0) {
    state_ = State::kDone;
    close_all();
    return;
  }
  touch();
  if (!closing() && ex_->upstream() != nullptr &&
      ex_->answer_marks.over(uv_stream_get_write_queue_size(loop::as_stream(&client_)))) {
    ex_->upstream()->pause_reading();
  }
}

void WindowConnection::client_written(int status) {
  if (status == UV_ECANCELED || closing()) return;
  if (status < 0) {
    state_ = State::kDone;
    close_all();
    return;
  }
  touch();
  if (ex_->upstream() != nullptr &&
      ex_->answer_marks.under(uv_stream_get_write_queue_size(loop::as_stream(&client_)))) {
    ex_->upstream()->resume_reading();
  }
}

void WindowConnection::finish_success() {
  state_ = State::kDone;
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  ex_->wipe_head();
  if (ex_->keep_client && ex_->request_done && !client_ended_) {
    next_request();
    return;
  }
  // FIN once every queued byte is written; then the socket closes.
  auto* req = new uv_shutdown_t;
  req->data = this;
  if (uv_shutdown(req, loop::as_stream(&client_), on_client_shutdown) != 0) {
    delete req;
    close_all();
  }
}

void WindowConnection::next_request() {
  ++served_;
  ex_.emplace(request_sink_);
  state_ = State::kHead;
  awaiting_request_ = true;
  mark_idle(true);
  uv_timer_start(&timer_, on_timer, kClientIdleMs, 0);
  if (!next_bytes_.empty()) {
    // Pipelined bytes are parsed on the next loop turn, not here: this runs inside the upstream
    // connection's read callback, which must not see itself handed to the next request.
    pipelined_ = true;
    uv_timer_start(&timer_, on_timer, 0, 0);
    return;
  }
  if (client_paused_) {
    client_paused_ = false;
    resume_client_reading();
  }
}

void WindowConnection::wipe_secret() {
  if (ex_) ex_->wipe_head();
}

void WindowConnection::on_client_shutdown(uv_shutdown_t* req, int) noexcept {
  auto* self = static_cast<WindowConnection*>(req->data);
  delete req;
  self->close_all();
}

}  // namespace appliance::serve
