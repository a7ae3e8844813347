// One HTTP/1.x request per socket for the control channel and the window: strict llhttp, a head
// of at most 16 KiB within 10 s, a body of at most kMaxControlBody (past it the body is dropped
// and the handler sees body_over_limit), then one answer with Connection: close, FIN and drain.
#pragma once

#include <uv.h>

#include <string>

#include "appliance/http/parser.h"
#include "appliance/serve/connection.h"

namespace appliance::serve {

inline constexpr std::uint64_t kRequestDeadlineMs = 30'000;

struct HttpRequest {
  std::string_view method;
  std::string_view path;  // without the query
  std::string_view body;
  bool body_over_limit = false;
};

struct HttpResponse {
  int status = 500;
  std::string content_type = "application/json";
  std::string body;
};

std::string serialise_response(const HttpResponse& response);

class HttpConnection : public Connection {
 public:
  HttpConnection(ServeContext& ctx, TcpListener& listener, policy::Listener which);

 protected:
  virtual HttpResponse handle(const HttpRequest& request) = 0;

 private:
  void on_started() override;
  void on_read(Chunk chunk, std::size_t length) override;
  void on_client_end(int status) override;
  void close_own_handles() override;
  void unreadable();
  static void on_deadline(uv_timer_t* timer) noexcept;

  // The body, at most kMaxControlBody bytes: past it the bytes are dropped and the handler sees
  // body_over_limit. It may hold a secret: grown without leaving copies, wiped once answered.
  struct Body final : http::BodySink {
    ~Body() override;
    bool on_head() override { return true; }
    void on_body(const char* data, std::size_t length) override;
    void on_complete() override {}
    std::string bytes;
    bool over_limit = false;
  };
  void answer_if_complete(http::MessageParser::Status status);

  policy::Listener which_;
  Body body_;
  http::MessageParser parser_{http::MessageParser::Kind::kRequest, body_};
  uv_timer_t timer_{};
  bool answered_ = false;
};

}  // namespace appliance::serve
