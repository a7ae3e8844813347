#include "appliance/serve/http_parser.h"

#include "policy/secret.h"

namespace appliance::serve {

RequestParser::RequestParser(bool head_only, std::size_t max_body)
    : head_only_(head_only), max_body_(max_body) {
  llhttp_settings_init(&settings_);
  settings_.on_url = on_url;
  settings_.on_headers_complete = on_headers_complete;
  settings_.on_body = on_body;
  settings_.on_message_complete = on_message_complete;
  llhttp_init(&parser_, HTTP_REQUEST, &settings_);
  parser_.data = this;
}

RequestParser::~RequestParser() { wipe_body(); }

void RequestParser::wipe_body() noexcept { policy::wipe_string(body_); }

std::string_view RequestParser::method_name() const {
  if (method_ < 0) return "";
  return llhttp_method_name(static_cast<llhttp_method_t>(method_));
}

int RequestParser::on_url(llhttp_t* parser, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<RequestParser*>(parser->data);
  if (self->url_.size() + length > kMaxHeadBytes) return -1;
  self->url_.append(at, length);
  return 0;
}

int RequestParser::on_headers_complete(llhttp_t* parser) noexcept {
  auto* self = static_cast<RequestParser*>(parser->data);
  // HTTP/1.0 and HTTP/1.1 only; HTTP/0.9 (a version-less line) and anything else is unreadable.
  if (llhttp_get_http_major(parser) != 1 || llhttp_get_http_minor(parser) > 1) return -1;
  self->method_ = llhttp_get_method(parser);
  self->head_done_ = true;
  // CONNECT: llhttp stops by itself with HPE_PAUSED_UPGRADE right after the head.
  if (self->method_ == HTTP_CONNECT) return 0;
  // Pause so feed() can measure the head exactly before any body byte is read.
  return HPE_PAUSED;
}

int RequestParser::on_body(llhttp_t* parser, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<RequestParser*>(parser->data);
  if (self->body_over_limit_) return 0;
  if (self->body_.size() + length > self->max_body_) {
    // Past the cap the body is discarded and later treated as not JSON
    // (docs/reference-behaviour.md#control-endpoints).
    self->body_over_limit_ = true;
    policy::wipe_string(self->body_);
    return 0;
  }
  // A control body may hold a secret (POST /grants, POST /window-key): no copy is left behind
  // when it grows, and the destructor wipes it.
  policy::append_wiping(self->body_, std::string_view(at, length));
  return 0;
}

int RequestParser::on_message_complete(llhttp_t* parser) noexcept {
  auto* self = static_cast<RequestParser*>(parser->data);
  self->message_done_ = true;
  // One request per connection: stop here; anything pipelined after it is ignored.
  return HPE_PAUSED;
}

RequestParser::Feed RequestParser::feed(const char* data, std::size_t length) {
  if (failed_) return {Status::kError, 0};
  if (message_done_) return {Status::kMessageDone, 0};
  if (head_done_ && (head_only_ || is_connect())) return {Status::kHeadDone, 0};
  const char* cursor = data;
  std::size_t left = length;
  while (true) {
    const bool head_was_done = head_done_;
    const llhttp_errno_t err = llhttp_execute(&parser_, cursor, left);
    std::size_t used = left;
    if (err == HPE_PAUSED || err == HPE_PAUSED_UPGRADE) {
      used = static_cast<std::size_t>(llhttp_get_error_pos(&parser_) - cursor);
    } else if (err != HPE_OK) {
      failed_ = true;
      return {Status::kError, 0};
    }
    if (!head_was_done) {
      head_bytes_ += used;
      if (head_bytes_ > kMaxHeadBytes) {
        failed_ = true;
        return {Status::kError, 0};
      }
    }
    const std::size_t consumed = static_cast<std::size_t>(cursor - data) + used;
    if (message_done_) return {Status::kMessageDone, consumed};
    if (head_done_ && (head_only_ || is_connect())) return {Status::kHeadDone, consumed};
    if (err == HPE_PAUSED && !head_was_done && head_done_) {
      // Paused at the end of the head (full mode) only to measure it; read on into the body.
      llhttp_resume(&parser_);
      cursor += used;
      left -= used;
      continue;
    }
    return {Status::kNeedMore, consumed};
  }
}

}  // namespace appliance::serve
