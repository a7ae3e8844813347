// The window (docs/reference-behaviour.md#window-route): a reverse proxy that adds a grant's
// secret.
//   head (strict llhttp, ≤ 16 KiB, 10 s) → framing check → window key (constant time) → path
//   rule → grant → always-refused host → [a kept connection of this grant: allow → upstream]
//   → c-ares → own-listener rule → allow → pool → upstream
// Refusals are the reference's generic JSON answers, identical for a bad key, an unknown grant
// and a path that walks out; the reason goes to the journal only. Once allowed, the request body
// goes up and the answer comes down as they arrive (re-framed by us, backpressure both ways);
// an upstream silent for --idle-seconds ends as 504 and failed:timeout, exactly once.
// Client keep-alive (HTTP/1.1 only, RFC 9112 §9.3): after a whole exchange whose answer had a
// length (or was chunked), the connection waits kClientIdleMs for the next request, which is
// decided afresh (key, path, grant, journal record). Requests the client pipelined meanwhile are
// held (bounded) and parsed after the answer. A refusal, an HTTP/1.0 client, `Connection: close`,
// an answer that ends at close, a request not fully read when the answer ended, or the
// kMaxRequestsPerConnection-th request ends the connection (`Connection: close` on the answer).
// An idle kept-alive connection is the first evicted when the window's socket cap is reached.
#pragma once

#include <uv.h>

#include <optional>
#include <string>

#include "appliance/dns/resolver.h"
#include "appliance/http/parser.h"
#include "appliance/loop/pump.h"
#include "appliance/serve/connection.h"
#include "appliance/window/exchange.h"
#include "appliance/window/upstream.h"
#include "policy/window.h"

namespace appliance::serve {

// docs/reference-behaviour.md#window-upstream: the answers once a request was allowed.
inline constexpr std::string_view kUpstreamNoAnswer = "the upstream did not answer";
inline constexpr std::string_view kUpstreamLate = "the upstream did not answer in time";
// Node's keepAliveTimeout (docs/reference-behaviour.md#listeners), announced as `Keep-Alive:
// timeout=5`; longer than the upstream pool's kPoolIdleMs does not matter: the two sides are
// separate connections.
inline constexpr std::uint64_t kClientIdleMs = 5'000;
inline constexpr std::uint32_t kMaxRequestsPerConnection = 1'000;  // nginx keepalive_requests

Connection* make_window_connection(ServeContext& ctx, TcpListener& listener);

// A head's fields as the policy functions take them, moved (no name or value is copied).
std::vector<policy::Header> policy_fields(std::vector<http::Header> fields);

class WindowConnection final : public Connection, private UpstreamUser, private PoolWaiter {
 public:
  WindowConnection(ServeContext& ctx, TcpListener& listener);

 private:
  enum class State : std::uint8_t {
    kHead,
    kResolving,
    kWaitingRoom,
    kConnecting,
    kExchanging,
    kDone
  };

  struct RequestSink final : http::BodySink {
    WindowConnection* self = nullptr;
    bool on_head() override { return true; }
    void on_body(const char* data, std::size_t length) override;
    void on_complete() override;
  };
  struct ResponseSink final : http::BodySink {
    WindowConnection* self = nullptr;
    bool on_head() override;
    void on_body(const char* data, std::size_t length) override;
    void on_complete() override;
  };

  // window.cc: the head and the decisions
  void on_started() override;
  void on_read(Chunk chunk, std::size_t length) override;
  void on_client_end(int status) override;
  void close_own_handles() override;
  void on_head(const char* rest, std::size_t rest_length);
  void refuse_json(int status, std::string_view message);
  void refuse_bare_400();
  void journal(const policy::Decision& decision);
  [[nodiscard]] bool key_matches(std::string_view key) const;
  static void on_resolved(void* owner, Resolution resolution) noexcept;
  void decide_answers(const std::vector<policy::Address>& answers);
  [[nodiscard]] std::string pool_route() const;  // "<grant id>\n<upstream url>\n<private 0|1>\n"
  [[nodiscard]] bool reuse_kept_connection();
  void acquire();
  void pool_has_room() override;
  static void on_timer(uv_timer_t* timer) noexcept;

  // exchange.cc: streaming both ways
  void upstream_ready() override;
  void upstream_data(const char* data, std::size_t length) override;
  void upstream_ended() override;
  void upstream_failed(std::string_view detail) override;
  void upstream_drained() override;
  void feed_request(const char* data, std::size_t length);
  void truncated_request();
  void wipe_secret();
  void upstream_failure(std::string_view detail, int status, std::string_view message);
  void write_client(std::string_view bytes);  // gathered in out_ while batching_, else written
  void flush_client();
  void finish_success();
  void drop_upstream();
  void touch();
  void client_written(int status);
  static void on_client_shutdown(uv_shutdown_t* req, int status) noexcept;

  // The outcome of each write of the answer to the client.
  struct ClientWrites final : loop::WriteListener {
    WindowConnection* self = nullptr;
    void on_written(int status) noexcept override { self->client_written(status); }
  };

  void read_head(const char* data, std::size_t length);
  void hold_next(const char* data, std::size_t length);
  void next_request();
  void read_pipelined();

  State state_ = State::kHead;
  RequestSink request_sink_;
  ResponseSink response_sink_;
  ClientWrites client_writes_;
  uv_timer_t timer_{};
  NameResolver::Query* query_ = nullptr;
  std::optional<Exchange> ex_;     // the request being read or answered (exchange.h)
  std::string next_bytes_;         // pipelined bytes of the next request (bounded)
  std::uint32_t served_ = 0;       // answers completed on this connection
  bool awaiting_request_ = false;  // kept alive, no byte of the next request yet
  bool client_ended_ = false;      // the client half-closed: answer, then close
  bool pipelined_ = false;         // next_bytes_ waits for the next loop turn (on_timer)
  bool batching_ = false;          // inside upstream_data(): client bytes gather in out_
  std::string out_;
  bool client_paused_ = false;
  std::uint64_t last_activity_ = 0;
};

}  // namespace appliance::serve
