#include "appliance/http/parser.h"

#include <algorithm>
#include <cstring>

namespace appliance::http {

MessageParser::MessageParser(Kind kind, BodySink& sink)
    : kind_(kind),
      sink_(sink),
      max_head_(kind == Kind::kRequest ? kMaxRequestHeadBytes : kMaxResponseHeadBytes) {
  llhttp_settings_init(&settings_);
  settings_.on_url = on_url;
  settings_.on_status = on_status;
  settings_.on_header_field = on_header_field;
  settings_.on_header_value = on_header_value;
  settings_.on_headers_complete = on_headers_complete;
  settings_.on_body = on_body;
  settings_.on_message_complete = on_message_complete;
  llhttp_init(&parser_, kind == Kind::kRequest ? HTTP_REQUEST : HTTP_RESPONSE, &settings_);
  parser_.data = this;
}

std::string_view MessageParser::method_name() const {
  if (method_ < 0) return "";
  return llhttp_method_name(static_cast<llhttp_method_t>(method_));
}

void MessageParser::start_head() noexcept {
  // A 1xx answer is followed by the real one (RFC 9110 §15.2): its head starts afresh.
  headers_.clear();
  taken_ = 0;
  reason_.clear();
  in_value_ = false;
  head_done_ = false;
}

int MessageParser::on_url(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  self->url_.append(at, length);
  return 0;
}

int MessageParser::on_status(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  self->reason_.append(at, length);
  return 0;
}

int MessageParser::on_header_field(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (self->headers_.empty() || self->in_value_) {
    if (self->headers_.size() + self->taken_ >= kMaxHeaderLines) return -1;
    self->headers_.emplace_back();
    self->in_value_ = false;
  }
  self->headers_.back().name.append(at, length);
  return 0;
}

int MessageParser::on_header_value(llhttp_t* p, const char* at, std::size_t length) noexcept {
  auto* self = static_cast<MessageParser*>(p->data);
  if (self->headers_.empty()) return -1;
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
  if (self->kind_ == Kind::kRequest) {
    self->method_ = llhttp_get_method(p);
    self->head_done_ = true;
    // Pause: feed() measures the head exactly and checks it before any body byte is read.
    return HPE_PAUSED;
  }
  self->status_code_ = llhttp_get_status_code(p);
  if (self->status_code_ >= 100 && self->status_code_ < 200) {
    // Interim answers are not passed on; 101 would switch protocols, which nothing here allows
    // (Upgrade is never forwarded, RFC 9110 §7.8).
    if (self->status_code_ == 101) return -1;
    self->start_head();
    return 0;
  }
  const bool no_body =
      self->head_request_ || self->status_code_ == 204 || self->status_code_ == 304;
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
  // The end of an interim (1xx) answer: pause so feed() starts counting the next head here.
  if (!self->head_done_) return HPE_PAUSED;
  self->complete_ = true;
  self->sink_.on_complete();
  // One message: anything after it is not ours (a request pipelined, or junk from upstream).
  return HPE_PAUSED;
}

MessageParser::Feed MessageParser::fail(bool framing) noexcept {
  failed_ = true;
  framing_error_ = framing;
  return {Status::kError, 0};
}

void MessageParser::scan_for_obs_fold(const char* bytes, std::size_t length) noexcept {
  // The same search as for "\r\n " and "\r\n\t" over the whole head, done on the bytes as they
  // are consumed (memchr for each LF), so the head is never copied to be searched. A CR LF that
  // ends one slice is judged on the first byte of the next (crlf_seen_ 2), a CR that ends one on
  // the next byte being LF (crlf_seen_ 1).
  if (length == 0) return;
  std::size_t at = 0;
  if (crlf_seen_ == 2) {
    if (bytes[0] == ' ' || bytes[0] == '\t') obs_fold_ = true;
  } else if (crlf_seen_ == 1 && bytes[0] == '\n') {
    if (length == 1) {
      crlf_seen_ = 2;
      return;
    }
    if (bytes[1] == ' ' || bytes[1] == '\t') obs_fold_ = true;
    at = 1;
  }
  while (at < length) {
    const void* found = std::memchr(bytes + at, '\n', length - at);
    if (found == nullptr) break;
    const std::size_t lf = static_cast<std::size_t>(static_cast<const char*>(found) - bytes);
    at = lf + 1;
    if (lf == 0 || bytes[lf - 1] != '\r') continue;
    if (at == length) {
      crlf_seen_ = 2;
      return;
    }
    if (bytes[at] == ' ' || bytes[at] == '\t') obs_fold_ = true;
  }
  crlf_seen_ = bytes[length - 1] == '\r' ? 1 : 0;
}

MessageParser::Feed MessageParser::feed(const char* data, std::size_t length) {
  if (failed_) return {Status::kError, 0};
  if (complete_) return {Status::kComplete, 0};
  std::size_t at = 0;
  while (true) {
    const bool head_open = !head_done_;
    std::size_t slice = length - at;
    if (head_open) {
      // Never let llhttp read more of an open head than the cap allows: one byte past it, with
      // the head still open, is the error.
      const std::size_t room = max_head_ - head_bytes_;
      if (room == 0 && slice > 0) return fail(false);
      slice = std::min(slice, room);
    }
    const char* cursor = data + at;
    const llhttp_errno_t err = llhttp_execute(&parser_, cursor, slice);
    std::size_t used = slice;
    if (err == HPE_PAUSED) {
      used = static_cast<std::size_t>(llhttp_get_error_pos(&parser_) - cursor);
      llhttp_resume(&parser_);
    } else if (err != HPE_OK) {
      // llhttp's own smuggling checks: CL with TE, a second CL, TE not ending in chunked.
      return fail(err == HPE_UNEXPECTED_CONTENT_LENGTH || err == HPE_INVALID_TRANSFER_ENCODING);
    }
    at += used;
    if (head_open) {
      head_bytes_ += used;
      if (kind_ == Kind::kRequest) scan_for_obs_fold(cursor, used);
    }
    if (complete_) return {Status::kComplete, at};
    if (kind_ == Kind::kRequest && head_open && head_done_) {
      // RFC 9112 §5.2: obs-fold is refused in a request. llhttp 8.1 strict accepts it (it hands
      // the folded value on in pieces), so the head's bytes are searched for CRLF then SP or HTAB
      // (scan_for_obs_fold, as each slice of the head is consumed).
      if (obs_fold_) return fail(true);
      return {Status::kHeadDone, at};
    }
    if (err == HPE_PAUSED && head_open && !head_done_) {
      head_bytes_ = 0;  // an interim answer ended at `at`; the next head starts there
      continue;
    }
    if (at < length) continue;
    return {Status::kNeedMore, at};
  }
}

MessageParser::Feed MessageParser::finish() {
  if (failed_) return {Status::kError, 0};
  if (complete_) return {Status::kComplete, 0};
  // llhttp_finish runs on_message_complete for a close-delimited body; ours answers HPE_PAUSED
  // there like everywhere, which llhttp_finish passes back as its result.
  const llhttp_errno_t err = llhttp_finish(&parser_);
  if (err != HPE_OK && err != HPE_PAUSED) return fail(false);
  return complete_ ? Feed{Status::kComplete, 0} : fail(false);
}

}  // namespace appliance::http
