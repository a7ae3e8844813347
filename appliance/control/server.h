// The control channel on 127.0.0.1 (docs/reference-behaviour.md#control-endpoints): /health,
// /policy, /journal, /network, /grants, /window-key (the window's key, never shown again), plus
// /metrics in Prometheus text format. Answers are JSON except /metrics; secrets never appear in any
// answer.
#pragma once

#include "appliance/serve/http_conn.h"

namespace appliance::serve {

Connection* make_control_connection(ServeContext& ctx, TcpListener& listener);

// The routing and answers, separate from the socket so it can be tested directly.
HttpResponse control_answer(ServeContext& ctx, const HttpRequest& request);

class ControlConnection final : public HttpConnection {
 public:
  ControlConnection(ServeContext& ctx, TcpListener& listener);

 private:
  HttpResponse handle(const HttpRequest& request) override;
};

}  // namespace appliance::serve
