#include "appliance/serve/http_conn.h"

#include "appliance/serve/refusal.h"
#include "policy/control_messages.h"
#include "policy/secret.h"

namespace appliance::serve {

std::string serialise_response(const HttpResponse& response) {
  std::string_view reason = "Internal Server Error";
  switch (response.status) {
    case 200: reason = "OK"; break;
    case 400: reason = "Bad Request"; break;
    case 403: reason = "Forbidden"; break;
    case 404: reason = "Not Found"; break;
    case 405: reason = "Method Not Allowed"; break;
    case 502: reason = "Bad Gateway"; break;
    case 503: reason = "Service Unavailable"; break;
    case 504: reason = "Gateway Timeout"; break;
    default: break;  // int status, not an enum
  }
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: " + response.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  out += "Cache-Control: no-store\r\nConnection: close\r\n\r\n";
  out += response.body;
  return out;
}

HttpConnection::HttpConnection(ServeContext& ctx, TcpListener& listener, policy::Listener which)
    : Connection(ctx, listener), which_(which) {}

HttpConnection::Body::~Body() { policy::wipe_string(bytes); }

void HttpConnection::Body::on_body(const char* data, std::size_t length) {
  if (over_limit) return;
  if (bytes.size() + length > policy::kMaxControlBody) {
    // Past the cap the body is discarded and later treated as not JSON
    // (docs/reference-behaviour.md#control-endpoints).
    over_limit = true;
    policy::wipe_string(bytes);
    return;
  }
  policy::append_wiping(bytes, std::string_view(data, length));
}

void HttpConnection::on_started() {
  uv_timer_init(ctx_.loop, &timer_);
  opened(loop::as_handle(&timer_));
  uv_timer_start(&timer_, on_deadline, http::kHeadDeadlineMs, 0);
}

void HttpConnection::close_own_handles() { close_handle(loop::as_handle(&timer_)); }

void HttpConnection::unreadable() {
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  answered_ = true;
  ctx_.journal.note(which_, policy::Word::kDenyUnreadableRequest);
  ctx_.metrics.refused(which_, 400);
  finish_with(refusal_bytes(400));
}

void HttpConnection::on_deadline(uv_timer_t* timer) noexcept {
  auto* self = owner_of<HttpConnection>(timer);
  if (self->closing() || self->answered_) return;
  self->unreadable();
}

void HttpConnection::on_read(Chunk chunk, std::size_t length) {
  // The bytes read may hold a secret (POST /grants, POST /window-key): wiped before the buffer is
  // freed, on every path out of here.
  struct WipeChunk {
    char* bytes;
    std::size_t length;
    ~WipeChunk() { loop::wipe_bytes(bytes, length); }
  } wipe_chunk{chunk.get(), length};
  if (answered_) return;
  const http::MessageParser::Feed feed = parser_.feed(chunk.get(), length);
  if (feed.status != http::MessageParser::Status::kHeadDone || parser_.is_connect()) {
    // A CONNECT request's message is its head: answered as it is.
    answer_if_complete(feed.status);
    return;
  }
  // Head complete: the whole request now has kRequestDeadlineMs from the start.
  uv_timer_start(&timer_, on_deadline, kRequestDeadlineMs, 0);
  answer_if_complete(parser_.feed(chunk.get() + feed.consumed, length - feed.consumed).status);
}

void HttpConnection::answer_if_complete(http::MessageParser::Status status) {
  switch (status) {
    case http::MessageParser::Status::kError:
      unreadable();
      return;
    case http::MessageParser::Status::kNeedMore:
      return;
    case http::MessageParser::Status::kHeadDone:
    case http::MessageParser::Status::kComplete:
      break;
  }
  uv_timer_stop(&timer_);
  answered_ = true;
  std::string_view url = parser_.url();
  const auto query = url.find('?');
  HttpRequest request;
  request.method = parser_.method_name();
  request.path = url.substr(0, query);
  request.body = body_.bytes;
  request.body_over_limit = body_.over_limit;
  const HttpResponse response = handle(request);
  policy::wipe_string(body_.bytes);
  if (response.status >= 400) ctx_.metrics.refused(which_, response.status);
  finish_with(serialise_response(response));
}

void HttpConnection::on_client_end(int) {
  // The client went away (or half-closed) before a whole request: nothing to answer.
  close_all();
}

}  // namespace appliance::serve
