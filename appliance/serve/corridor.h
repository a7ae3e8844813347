// The corridor (docs/reference-behaviour.md#corridor-refusals,
// docs/reference-behaviour.md#corridor-order-of-checks): one HTTP CONNECT per socket, authority
// form only, decided by policy/, resolved once with c-ares, dialled to the approved address only,
// then relayed.
//   head → decide_target → tunnel slot → resolve → decide_answers → connect → 200 → relay
// Every refusal is a bare status line (400/403/502/503) with Connection: close; the reason goes
// to the journal only.
#pragma once

#include <uv.h>

#include <optional>
#include <string>

#include "appliance/serve/connection.h"
#include "appliance/serve/http_parser.h"
#include "appliance/serve/resolver.h"
#include "policy/corridor.h"

namespace appliance::serve {

inline constexpr std::size_t kMaxHeldBytes = 64 * 1024;     // client bytes held before the 200
inline constexpr std::size_t kRelayHighWater = 256 * 1024;  // stop reading the other side above
inline constexpr std::size_t kRelayLowWater = 64 * 1024;    // resume below

Connection* make_corridor_connection(ServeContext& ctx, TcpListener& listener);

class CorridorConnection final : public Connection {
 public:
  CorridorConnection(ServeContext& ctx, TcpListener& listener);

 private:
  enum class State : std::uint8_t { kHead, kResolving, kConnecting, kRelaying, kDone };

  // One direction of the relay: bytes read from `from` are written to `to`.
  struct Direction {
    uv_stream_t* from = nullptr;
    uv_stream_t* to = nullptr;
    bool from_ended = false;  // EOF read on `from`
    bool paused = false;      // reading `from` stopped for backpressure
    bool done = false;        // FIN passed on to `to`
    bool upstream_side = false;  // true: client → upstream
  };
  struct RelayWrite;

  // corridor.cc
  void on_started() override;
  void on_read(Chunk chunk, std::size_t length) override;
  void on_client_end(int status) override;
  void close_own_handles() override;
  void on_head(std::size_t consumed, const char* data, std::size_t length);
  void refuse(int status);
  void release_slot();
  static void on_resolved(void* owner, Resolution resolution) noexcept;
  void connect_to(const policy::ApprovedEndpoint& endpoint);
  static void on_connected(uv_connect_t* req, int status) noexcept;
  static void on_deadline(uv_timer_t* timer) noexcept;

  // relay.cc
  void start_relay();
  void relay(Direction& d, Chunk chunk, std::size_t length);
  void end_of(Direction& d);
  void relay_failed(Direction& d, bool upstream_failed, int status);
  void finish_direction(Direction& d);
  static void on_upstream_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_relay_written(uv_write_t* req, int status) noexcept;
  static void on_relay_shutdown(uv_shutdown_t* req, int status) noexcept;
  static void on_idle_check(uv_timer_t* timer) noexcept;

  State state_ = State::kHead;
  RequestParser parser_{true, 0};
  uv_timer_t timer_{};
  uv_tcp_t upstream_{};
  bool upstream_open_ = false;
  uv_connect_t connect_req_{};
  Resolver::Query* query_ = nullptr;
  std::optional<policy::PendingResolution> pending_;
  policy::JournalSubject subject_;
  bool holds_slot_ = false;
  std::string held_;  // bytes after the CONNECT head, forwarded first once connected
  Direction up_;
  Direction down_;
  std::uint64_t last_activity_ = 0;
};

}  // namespace appliance::serve
