#include "appliance/serve/http_conn.h"

#include "appliance/serve/refusal.h"
#include "policy/control_messages.h"

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
    : Connection(ctx, listener), which_(which), parser_(false, policy::kMaxControlBody) {}

void HttpConnection::on_started() {
  uv_timer_init(ctx_.loop, &timer_);
  opened(reinterpret_cast<uv_handle_t*>(&timer_));
  uv_timer_start(&timer_, on_deadline, kHeadDeadlineMs, 0);
}

void HttpConnection::close_own_handles() { close_handle(reinterpret_cast<uv_handle_t*>(&timer_)); }

void HttpConnection::unreadable() {
  if (timer_.data != nullptr) uv_timer_stop(&timer_);
  answered_ = true;
  ctx_.journal.note(which_, policy::Word::kDenyUnreadableRequest);
  ctx_.metrics.refused(which_, 400);
  finish_with(refusal_bytes(400));
}

void HttpConnection::on_deadline(uv_timer_t* timer) noexcept {
  auto* self = static_cast<HttpConnection*>(timer->data);
  if (self->closing() || self->answered_) return;
  self->unreadable();
}

void HttpConnection::on_read(Chunk chunk, std::size_t length) {
  // The bytes read may hold a secret (POST /grants, POST /window-key): wiped before the buffer is
  // freed, on every path out of here.
  struct WipeChunk {
    char* bytes;
    std::size_t length;
    ~WipeChunk() {
      volatile char* b = bytes;
      for (std::size_t i = 0; i < length; ++i) b[i] = 0;
    }
  } wipe_chunk{chunk.get(), length};
  if (answered_) return;
  const RequestParser::Feed feed = parser_.feed(chunk.get(), length);
  switch (feed.status) {
    case RequestParser::Status::kError:
      unreadable();
      return;
    case RequestParser::Status::kNeedMore:
      if (!head_seen_ && !parser_.method_name().empty()) {
        // Head complete: the whole request now has kRequestDeadlineMs from the start.
        head_seen_ = true;
        uv_timer_start(&timer_, on_deadline, kRequestDeadlineMs, 0);
      }
      return;
    case RequestParser::Status::kHeadDone:
    case RequestParser::Status::kMessageDone:
      break;
  }
  uv_timer_stop(&timer_);
  answered_ = true;
  std::string_view url = parser_.url();
  const auto query = url.find('?');
  HttpRequest request;
  request.method = parser_.method_name();
  request.path = url.substr(0, query);
  request.body = parser_.body();
  request.body_over_limit = parser_.body_over_limit();
  const HttpResponse response = handle(request);
  parser_.wipe_body();
  if (response.status >= 400) ctx_.metrics.refused(which_, response.status);
  finish_with(serialise_response(response));
}

void HttpConnection::on_client_end(int) {
  // The client went away (or half-closed) before a whole request: nothing to answer.
  close_all();
}

}  // namespace appliance::serve
