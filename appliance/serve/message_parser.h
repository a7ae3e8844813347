// A streaming strict llhttp parser for the window: requests from the space and answers from the
// upstream. Unlike RequestParser it never holds a body: body bytes go to a BodySink as they are
// parsed. No leniency flag is ever set. A request stops after its head (HPE_PAUSED) so the window
// can decide before any body byte is read; an answer is parsed straight through.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/window.h"

namespace appliance::serve {

// The request head cap is the reference's (docs/reference-behaviour.md#listeners).
inline constexpr std::size_t kMaxRequestHeadBytes = 16 * 1024;
inline constexpr std::size_t kMaxResponseHeadBytes = 64 * 1024;  // upstream answers carry cookies

class BodySink {
 public:
  virtual ~BodySink() = default;
  // Response mode only: the head is complete. Return false to fail the parse.
  virtual bool on_head() = 0;
  virtual void on_body(const char* data, std::size_t length) = 0;
  virtual void on_complete() = 0;
};

class MessageParser {
 public:
  enum class Status : std::uint8_t {
    kNeedMore,  // everything fed was used; feed more
    kHeadDone,  // request mode: the head is complete; `consumed` bytes of this feed belong to it
    kComplete,  // the message is complete; `consumed` bytes used, the rest is not ours
    kError,     // unreadable (see framing_error())
  };
  struct Feed {
    Status status = Status::kNeedMore;
    std::size_t consumed = 0;
  };

  MessageParser(llhttp_type_t type, BodySink& sink);
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  Feed feed(const char* data, std::size_t length);
  // Response mode: the request was HEAD, so the answer has no body (RFC 9110 §9.3.2).
  void set_head_request(bool head) noexcept { head_request_ = head; }

  // True when the error is a request-framing (smuggling) shape rather than unreadable bytes:
  // llhttp's own Content-Length / Transfer-Encoding errors, or obs-fold (RFC 9112 §5.2).
  [[nodiscard]] bool framing_error() const noexcept { return framing_error_; }
  [[nodiscard]] const std::vector<policy::Header>& headers() const noexcept { return headers_; }
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] int status_code() const noexcept { return status_code_; }
  [[nodiscard]] std::string_view method_name() const;
  [[nodiscard]] bool is_head_method() const noexcept { return method_ == HTTP_HEAD; }
  [[nodiscard]] bool http10() const noexcept { return http10_; }
  // Response mode: chunked answer (llhttp's F_CHUNKED) / Content-Length given.
  [[nodiscard]] bool chunked() const noexcept { return chunked_; }
  [[nodiscard]] bool has_length() const noexcept { return has_length_; }
  [[nodiscard]] std::uint64_t length() const noexcept { return length_; }
  // Response mode: the body ends with the connection (no length, not chunked).
  [[nodiscard]] bool ends_at_close() const noexcept { return ends_at_close_; }
  [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
  // Response mode, when the upstream closed: lets llhttp finish a close-delimited body.
  Feed finish();

 private:
  static int on_url(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_status(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_header_field(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_header_value(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_headers_complete(llhttp_t* p) noexcept;
  static int on_body(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_message_complete(llhttp_t* p) noexcept;
  bool grow_head(std::size_t n) noexcept;
  void reset_head() noexcept;

  llhttp_settings_t settings_{};
  llhttp_t parser_{};
  llhttp_type_t type_;
  BodySink& sink_;
  std::size_t max_head_;
  std::size_t head_bytes_ = 0;
  std::string raw_head_;  // request mode: the raw head, for the obs-fold check
  bool in_value_ = false;
  bool head_done_ = false;
  bool complete_ = false;
  bool failed_ = false;
  bool framing_error_ = false;
  bool head_request_ = false;
  bool http10_ = false;
  bool chunked_ = false;
  bool has_length_ = false;
  bool ends_at_close_ = false;
  bool keep_alive_ = false;
  std::uint64_t length_ = 0;
  int method_ = -1;
  int status_code_ = 0;
  std::string url_;
  std::string reason_;
  std::vector<policy::Header> headers_;
};

}  // namespace appliance::serve
