// The HTTP side of `spacectl serve`: one libuv loop, a unix socket in the state directory (and an
// optional loopback TCP listener with a bearer token), strict request heads (the shared llhttp
// adapter, appliance/http/parser.h), keep-alive, bodies only by Content-Length and at most
// kMaxBodyBytes, answers as one JSON document, operation events as SSE. A request under
// /api/spaces/<id>/ is handed to the dispatcher with the bytes read past its head; the dispatcher
// gives the stream back (keep-alive, with what it read past the exchange) or has it closed.
#pragma once

#include <uv.h>

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "appliance/http/parser.h"
#include "controller/dispatch/dispatcher.h"
#include "controller/errors.h"

namespace controller::serve {

inline constexpr std::size_t kMaxBodyBytes = 64u << 10;        // a grant with its secret fits many times
inline constexpr std::size_t kMaxConnections = 256;            // past it a new client is closed at once
inline constexpr std::uint64_t kHeadDeadlineMs = 10'000;       // a request head complete within this
inline constexpr std::uint64_t kBodyDeadlineMs = 30'000;       // and its body within this

struct Request {
  std::string method, target, path, query;
  std::vector<appliance::http::Header> headers;
  std::string body;
  [[nodiscard]] std::string header(std::string_view name) const;  // first one, case-insensitive; "" if none
};

struct Response {
  Response() = default;
  Response(int s, nlohmann::json b) : status(s), body(std::move(b)) {}
  int status = 200;
  nlohmann::json body;  // written as one JSON document
  // When set, the answer is `text` with this content type instead (the Prometheus metrics).
  std::string content_type;
  std::string text;
};

// What a route answers: at once, later (blocking work on libuv's thread pool), or a stream of an
// operation's events.
struct Reply {
  enum class Kind : std::uint8_t { kNow, kLater, kEvents };
  Kind kind = Kind::kNow;
  Response now;
  std::function<Response()> later;
  std::string operation;  // kEvents
};

using Route = std::function<Reply(Request& request)>;

struct ServerConfig {
  uv_loop_t* loop = nullptr;
  std::string socket_path;           // unix socket (made 0600)
  int activated_fd = -1;  // a listening unix socket from systemd (activation.h): used instead of
                          // binding socket_path
  std::string tcp_host;              // empty: no TCP listener
  std::uint16_t tcp_port = 0;
  std::string token;                 // required on TCP as "Authorization: Bearer <token>"
  Route route;                       // serve's own routes
  // Dispatcher::take (controller/dispatch/dispatcher.h); empty: /api/spaces/<id>/… answers 503.
  std::function<void(uv_stream_t*, std::string, dispatch::RequestHead, std::string, dispatch::Giveback)> hand_off;
  // Events of an operation: (id, from seq) → events, finished, next seq; false when unknown.
  std::function<bool(const std::string& id, std::size_t seq, std::vector<nlohmann::json>& out, bool& finished, std::size_t& next)> events;
  std::function<void()> activity_any;  // any request (for logs; may be empty)
  std::function<void(int status)>
      answered;  // each JSON/text answer of serve's own routes (metrics; may be empty)
};

class Connection;

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Result<void> listen();             // binds both listeners
  [[nodiscard]] std::uint16_t tcp_port() const { return bound_port_; }
  void push_events();                // an operation changed: write new events to SSE readers
  void close_all(std::function<void()> closed);  // listeners and connections

  // Used by Connection.
  ServerConfig& config() { return config_; }
  void forget(Connection* c);
  std::list<Connection*>& readers() { return readers_; }

 private:
  static void on_unix(uv_stream_t* s, int status) noexcept;
  static void on_tcp(uv_stream_t* s, int status) noexcept;
  void accept(uv_stream_t* listener, bool tcp);

  ServerConfig config_;
  uv_pipe_t* pipe_ = nullptr;  // handles are heap objects freed in their close callbacks
  uv_tcp_t* tcp_ = nullptr;
  std::uint16_t bound_port_ = 0;
  std::list<Connection*> all_;
  std::list<Connection*> readers_;  // SSE readers
  std::function<void()> closed_;
  std::size_t closing_ = 0;
};

// The error body every answer uses: {"error":{"code":…,"message":…}}.
nlohmann::json error_body(std::string_view code, const std::string& message);
Response error_response(int status, std::string_view code, const std::string& message);
// The status of each error code (controller/API.md lists them).
int status_of(Code code);
Response failure_response(const Failure& failure);

}  // namespace controller::serve
