// The one llhttp adapter: a strict HTTP/1.x parser for requests and for answers, held to the
// bounds in limits.h. Self-contained (llhttp and the C++ standard library only), so the
// gatekeeper's listeners and the controller's server share it.
//
// Strictness, all of it always on:
//  - llhttp itself is the strict state machine (cmake/Llhttp.cmake builds it with
//    LLHTTP_STRICT_MODE=1) and none of its leniency switches is ever turned on;
//  - only HTTP/1.0 and HTTP/1.1; HTTP/0.9 (a line without a version) and any other version is
//    an error;
//  - a head is at most max_head_bytes() raw bytes, the empty line included, counted from the
//    bytes the parser consumed (not from the fields it kept), and at most kMaxHeaderLines
//    field lines;
//  - a request with obs-fold (a field line continued on the next line, RFC 9112 §5.2) is a
//    framing error, like llhttp's own Content-Length / Transfer-Encoding errors.
//
// A request stops after its head (Status::kHeadDone) so the caller can decide before reading any
// body byte; an answer is parsed straight through. Body bytes are never held here: they go to
// the BodySink as they are parsed. A message ends at its end: bytes after it are not consumed.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "appliance/http/limits.h"

namespace appliance::http {

struct Header {
  std::string name;  // as sent
  std::string value;
};

class BodySink {
 public:
  virtual ~BodySink() = default;
  // Answers only: the head is complete (interim 1xx answers are skipped). False fails the parse.
  virtual bool on_head() = 0;
  virtual void on_body(const char* data, std::size_t length) = 0;
  virtual void on_complete() = 0;
};

// For a reader that stops at the head (the corridor: what follows a CONNECT head is the tunnel's)
// and never feeds a body.
class IgnoreBody final : public BodySink {
 public:
  bool on_head() override { return true; }
  void on_body(const char*, std::size_t) override {}
  void on_complete() override {}
};

class MessageParser {
 public:
  enum class Kind : std::uint8_t { kRequest, kResponse };
  enum class Status : std::uint8_t {
    kNeedMore,  // everything fed was used; feed more
    kHeadDone,  // request: the head is complete; `consumed` bytes of this feed belong to it
    kComplete,  // the message is complete; `consumed` bytes used, the rest is not this message's
    kError,     // unreadable (framing_error() tells a smuggling shape apart)
  };
  struct Feed {
    Status status = Status::kNeedMore;
    std::size_t consumed = 0;  // bytes of this feed used; never more than were given
  };

  MessageParser(Kind kind, BodySink& sink);
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  Feed feed(const char* data, std::size_t length);
  // Answers only, when the peer closed: lets a close-delimited body end (RFC 9112 §6.3 item 8).
  Feed finish();
  // Answers only: the request was HEAD, so the answer has no body (RFC 9110 §9.3.2).
  void set_head_request(bool head) noexcept { head_request_ = head; }

  [[nodiscard]] std::size_t max_head_bytes() const noexcept { return max_head_; }
  // True when the error is a request-framing (smuggling) shape rather than unreadable bytes:
  // llhttp's Content-Length / Transfer-Encoding errors, or obs-fold.
  [[nodiscard]] bool framing_error() const noexcept { return framing_error_; }
  [[nodiscard]] const std::vector<Header>& headers() const noexcept { return headers_; }
  // The fields, moved out (no copy of a name or value): for a caller that reads them once, after
  // the head is done. headers() is empty afterwards.
  // Fields of a trailer section parsed later still count against kMaxHeaderLines with them.
  [[nodiscard]] std::vector<Header> take_headers() noexcept {
    std::vector<Header> out;
    out.swap(headers_);
    taken_ += out.size();
    return out;
  }
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] int status_code() const noexcept { return status_code_; }
  // Requests: the method's name once the head is done ("" before).
  [[nodiscard]] std::string_view method_name() const;
  [[nodiscard]] bool is_head_method() const noexcept { return method_ == HTTP_HEAD; }
  [[nodiscard]] bool is_connect() const noexcept { return method_ == HTTP_CONNECT; }
  [[nodiscard]] bool http10() const noexcept { return http10_; }
  // Answers: chunked (llhttp's F_CHUNKED) / Content-Length given, and its value.
  [[nodiscard]] bool chunked() const noexcept { return chunked_; }
  [[nodiscard]] bool has_length() const noexcept { return has_length_; }
  [[nodiscard]] std::uint64_t length() const noexcept { return length_; }
  // Answers: the body ends with the connection (no length, not chunked, a body allowed).
  [[nodiscard]] bool ends_at_close() const noexcept { return ends_at_close_; }
  [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }

 private:
  static int on_url(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_status(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_header_field(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_header_value(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_headers_complete(llhttp_t* p) noexcept;
  static int on_body(llhttp_t* p, const char* at, std::size_t length) noexcept;
  static int on_message_complete(llhttp_t* p) noexcept;
  Feed fail(bool framing) noexcept;
  void start_head() noexcept;
  // Requests: looks for obs-fold (CRLF then SP or HTAB) in the next bytes of the head.
  void scan_for_obs_fold(const char* bytes, std::size_t length) noexcept;

  llhttp_settings_t settings_{};
  llhttp_t parser_{};
  Kind kind_;
  BodySink& sink_;
  std::size_t max_head_;
  std::size_t head_bytes_ = 0;  // raw bytes of the head being read
  std::size_t taken_ = 0;       // fields handed out by take_headers()
  // Requests: how much of CR LF the head's bytes so far end with (0, 1 or 2), carried from one
  // feed to the next, and whether CR LF was followed by SP or HTAB anywhere in the head.
  std::uint8_t crlf_seen_ = 0;
  bool obs_fold_ = false;
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
  std::vector<Header> headers_;
};

}  // namespace appliance::http
