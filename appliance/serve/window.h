// The window (reference §3, issue #4): a reverse proxy that adds a grant's secret.
//   head (strict llhttp, ≤ 16 KiB, 10 s) → framing check → window key (constant time) → path
//   rule → grant → always-refused host → c-ares → own-listener rule → allow → pool → upstream
// Refusals are the reference's generic JSON answers, identical for a bad key, an unknown grant
// and a path that walks out; the reason goes to the journal only. Once allowed, the request body
// goes up and the answer comes down as they arrive (re-framed by us, backpressure both ways);
// an upstream silent for --idle-seconds ends as 504 and failed:timeout, exactly once.
// One request per client connection: every answer carries Connection: close.
#pragma once

#include <uv.h>

#include <optional>
#include <string>

#include "appliance/serve/connection.h"
#include "appliance/serve/message_parser.h"
#include "appliance/serve/resolver.h"
#include "appliance/serve/upstream.h"
#include "policy/window.h"

namespace appliance::serve {

// Reference §3.5: the answers once a request was allowed.
inline constexpr std::string_view kUpstreamNoAnswer = "the upstream did not answer";
inline constexpr std::string_view kUpstreamLate = "the upstream did not answer in time";

Connection* make_window_connection(ServeContext& ctx, TcpListener& listener);

class WindowConnection final : public Connection, private UpstreamUser, private PoolWaiter {
 public:
  WindowConnection(ServeContext& ctx, TcpListener& listener);

 private:
  enum class State : std::uint8_t { kHead, kResolving, kWaitingRoom, kConnecting, kExchanging, kDone };

  struct RequestSink final : BodySink {
    WindowConnection* self = nullptr;
    bool on_head() override { return true; }
    void on_body(const char* data, std::size_t length) override;
    void on_complete() override;
  };
  struct ResponseSink final : BodySink {
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
  void acquire();
  void pool_has_room() override;
  static void on_timer(uv_timer_t* timer) noexcept;

  // window_exchange.cc: streaming both ways
  void upstream_ready() override;
  void upstream_data(const char* data, std::size_t length) override;
  void upstream_ended() override;
  void upstream_failed(std::string_view detail) override;
  void upstream_drained() override;
  void feed_request(const char* data, std::size_t length);
  void upstream_failure(std::string_view detail, int status, std::string_view message);
  void write_client(std::string bytes);
  void finish_success();
  void drop_upstream();
  void touch();
  static void on_client_written(uv_write_t* req, int status) noexcept;
  static void on_client_shutdown(uv_shutdown_t* req, int status) noexcept;

  State state_ = State::kHead;
  RequestSink request_sink_;
  ResponseSink response_sink_;
  MessageParser request_;
  std::optional<MessageParser> response_;
  uv_timer_t timer_{};
  Resolver::Query* query_ = nullptr;
  UpstreamConnection* upstream_ = nullptr;

  // What the decision chose, copied: a grant replaced meanwhile does not change this request.
  std::string grant_id_;
  std::optional<policy::UpstreamUrl> upstream_url_;
  std::optional<policy::WindowEndpoint> endpoint_;
  std::string pool_key_;
  std::string upstream_head_;  // holds the secret until sent; wiped then
  std::string pending_body_;   // client bytes read with the head, parsed once the upstream is ready
  policy::BodyFraming framing_ = policy::BodyFraming::kNone;
  std::uint64_t body_left_ = 0;
  bool expect_continue_ = false;
  bool request_done_ = false;
  bool response_head_sent_ = false;
  bool response_done_ = false;
  bool response_chunked_ = false;
  bool failed_journaled_ = false;
  bool client_paused_ = false;
  bool upstream_paused_ = false;
  bool retried_ = false;
  bool reused_upstream_ = false;
  bool any_response_byte_ = false;
  std::uint64_t last_activity_ = 0;
};

}  // namespace appliance::serve
