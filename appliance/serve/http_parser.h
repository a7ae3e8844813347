// One strict llhttp request parser with our bounds (docs/decisions.md#strict-parsers-named-limits).
// No lenient flag is ever set. Requests without "HTTP/1.0" or "HTTP/1.1" (the HTTP/0.9 path llhttp
// still takes for a version-less line, docs/reference-behaviour.md#unreadable-requests) are errors.
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace appliance::serve {

inline constexpr std::size_t kMaxHeadBytes = 16 * 1024;  // request line + header block
inline constexpr std::uint64_t kHeadDeadlineMs = 10'000;

class RequestParser {
 public:
  enum class Status : std::uint8_t {
    kNeedMore,     // feed more bytes
    kHeadDone,     // head-only mode: the head is complete; `consumed` bytes belong to it
    kMessageDone,  // full mode: one whole request (head and body) is complete
    kError,        // unreadable: malformed, too large, not HTTP/1.x
  };
  struct Feed {
    Status status = Status::kNeedMore;
    std::size_t consumed = 0;  // bytes of this chunk used (head-only mode: up to the head's end)
  };

  // head_only: stop at the end of the head (the corridor: bytes after a CONNECT head belong to
  // the tunnel). Otherwise read the body too, keeping at most max_body bytes.
  RequestParser(bool head_only, std::size_t max_body);
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;
  ~RequestParser();

  Feed feed(const char* data, std::size_t length);

  [[nodiscard]] bool is_connect() const noexcept { return method_ == HTTP_CONNECT; }
  [[nodiscard]] std::string_view method_name() const;
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  [[nodiscard]] const std::string& body() const noexcept { return body_; }
  [[nodiscard]] bool body_over_limit() const noexcept { return body_over_limit_; }
  // Overwrites the body (it may hold a secret) once the handler is done with it.
  void wipe_body() noexcept;

 private:
  static int on_url(llhttp_t* parser, const char* at, std::size_t length) noexcept;
  static int on_headers_complete(llhttp_t* parser) noexcept;
  static int on_body(llhttp_t* parser, const char* at, std::size_t length) noexcept;
  static int on_message_complete(llhttp_t* parser) noexcept;

  llhttp_settings_t settings_{};
  llhttp_t parser_{};
  bool head_only_;
  std::size_t max_body_;
  std::size_t head_bytes_ = 0;
  bool head_done_ = false;
  bool message_done_ = false;
  bool failed_ = false;
  int method_ = -1;
  std::string url_;
  std::string body_;
  bool body_over_limit_ = false;
};

}  // namespace appliance::serve
