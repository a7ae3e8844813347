#include "appliance/serve/message_parser.h"

namespace appliance::serve {

MessageParser::MessageParser(llhttp_type_t type, BodySink& sink)
    : type_(type), sink_(sink),
      max_head_(type == HTTP_REQUEST ? kMaxRequestHeadBytes : kMaxResponseHeadBytes) {
  llhttp_settings_init(&settings_);
  settings_.on_url = on_url;
  settings_.on_status = on_status;
  settings_.on_header_field = on_header_field;
  settings_.on_header_value = on_header_value;
  settings_.on_headers_complete = on_headers_complete;
  settings_.on_body = on_body;
  settings_.on_message_complete = on_message_complete;
  llhttp_init(&parser_, type, &settings_);
  parser_.data = this;
}

std::string_view MessageParser::method_name() const {
  if (method_ < 0) return "";
  return llhttp_method_name(static_cast<llhttp_method_t>(method_));
}

bool MessageParser::grow_head(std::size_t n) noexcept {
  head_bytes_ += n;
  return head_bytes_ <= max_head_;
}

void MessageParser::reset_head() noexcept {
  // A 1xx answer is followed by the real one (RFC 9110 §15.2): start its head afresh.
  headers_.clear();
  reason_.clear();
  head_bytes_ = 0;
  in_value_ = false;
  head_done_ = false;
}

int MessageParser::on_url(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (!self->grow_head(length)) return -1;
  self->url_.append(at, length);
  return 0;
}

int MessageParser::on_status(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (!self->grow_head(length)) return -1;
  self->reason_.append(at, length);
  return 0;
}

int MessageParser::on_header_field(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (!self->grow_head(length)) return -1;
  if (self->headers_.empty() || self->in_value_) {
    if (self->headers_.size() >= policy::kMaxHeaderLines) return -1;
    self->headers_.emplace_back();
    self->in_value_ = false;
  }
  self->headers_.back().name.append(at, length);
  return 0;
}

int MessageParser::on_header_value(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (!self->grow_head(length) || self->headers_.empty()) return -1;
  self->in_value_ = true;
  self->headers_.back().value.append(at, length);
  return 0;
}

int MessageParser::on_headers_complete(llhttp_t* p) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (llhttp_get_http_major(p) != 1 || llhttp_get_http_minor(p) > 1) return -1;
  self->http10_ = llhttp_get_http_minor(p) == 0;
  self->keep_alive_ = llhttp_should_keep_alive(p) != 0;
  self->chunked_ = (p->flags & F_CHUNKED) != 0;
  self->has_length_ = (p->flags & F_CONTENT_LENGTH) != 0;
  self->length_ = self->has_length_ ? p->content_length : 0;
  if (self->type_ == HTTP_REQUEST) {
    self->method_ = llhttp_get_method(p);
    // RFC 9112 §5.2: obs-fold is refused in a request. llhttp 8.1 strict accepts it (it hands the
    // folded value on in pieces), so the raw head is searched for CRLF followed by SP or HTAB.
    const std::string_view raw = self->raw_head_;
    const std::size_t end = raw.find("\r\n\r\n");
    const std::string_view head = raw.substr(0, end);
    if (head.find("\r\n ") != std::string_view::npos || head.find("\r\n\t") != std::string_view::npos) {
      self->framing_error_ = true;
      return -1;
    }
    self->head_done_ = true;
    return HPE_PAUSED;
  }
  self->status_code_ = llhttp_get_status_code(p);
  if (self->status_code_ >= 100 && self->status_code_ < 200) {
    // Interim answers are not passed on; 101 would switch protocols, which the window refuses
    // (Upgrade is never forwarded, RFC 9110 §7.8).
    if (self->status_code_ == 101) return -1;
    self->reset_head();
    return 0;
  }
  const bool no_body = self->head_request_ || self->status_code_ == 204 || self->status_code_ == 304;
  self->ends_at_close_ = !no_body && !self->chunked_ && !self->has_length_;
  self->head_done_ = true;
  if (!self->sink_.on_head()) return -1;
  // llhttp: 1 from on_headers_complete means "this message has no body" (answer to HEAD).
  return no_body ? 1 : 0;
}

int MessageParser::on_body(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  self->sink_.on_body(at, length);
  return 0;
}

int MessageParser::on_message_complete(llhttp_t* p) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (!self->head_done_) return 0;  // the end of an interim (1xx) answer
  self->complete_ = true;
  self->sink_.on_complete();
  // One message: anything after it is not ours (a request pipelined, or junk from upstream).
  return HPE_PAUSED;
}

MessageParser::Feed MessageParser::feed(const char* data, std::size_t length) {
  if (failed_) return {Status::kError, 0};
  if (complete_) return {Status::kComplete, 0};
  if (type_ == HTTP_REQUEST && !head_done_) {
    // The head is at most kMaxRequestHeadBytes; a copy of that much (plus its final CRLF CRLF)
    // is all the obs-fold check needs.
    constexpr std::size_t kKeep = kMaxRequestHeadBytes + 4;
    if (raw_head_.size() < kKeep) raw_head_.append(data, std::min(length, kKeep - raw_head_.size()));
  }
  const llhttp_errno_t err = llhttp_execute(&parser_, data, length);
  std::size_t used = length;
  if (err == HPE_PAUSED) {
    used = static_cast<std::size_t>(llhttp_get_error_pos(&parser_) - data);
    llhttp_resume(&parser_);
  } else if (err != HPE_OK) {
    failed_ = true;
    // llhttp's own smuggling checks: CL with TE, duplicate CL, TE not ending in chunked.
    if (err == HPE_UNEXPECTED_CONTENT_LENGTH || err == HPE_INVALID_TRANSFER_ENCODING) framing_error_ = true;
    return {Status::kError, 0};
  }
  if (complete_) return {Status::kComplete, used};
  if (type_ == HTTP_REQUEST && head_done_ && err == HPE_PAUSED) {
    std::string().swap(raw_head_);
    return {Status::kHeadDone, used};
  }
  return {Status::kNeedMore, used};
}

MessageParser::Feed MessageParser::finish() {
  if (failed_) return {Status::kError, 0};
  if (complete_) return {Status::kComplete, 0};
  if (llhttp_finish(&parser_) != HPE_OK) {
    failed_ = true;
    return {Status::kError, 0};
  }
  return complete_ ? Feed{Status::kComplete, 0} : Feed{Status::kError, 0};
}

}  // namespace appliance::serve
