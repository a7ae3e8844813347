// One HTTP/1.x request per socket for the control channel and the window: strict llhttp, a head
// of at most 16 KiB within 10 s, a body of at most kMaxControlBody (past it the body is dropped
// and the handler sees body_over_limit), then one answer with Connection: close, FIN and drain.
#pragma once

#include <uv.h>

#include <string>

#include "appliance/serve/connection.h"
#include "appliance/serve/http_parser.h"

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

  policy::Listener which_;
  RequestParser parser_;
  uv_timer_t timer_{};
  bool head_seen_ = false;
  bool answered_ = false;
};

}  // namespace appliance::serve
