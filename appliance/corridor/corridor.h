// The corridor (docs/reference-behaviour.md#corridor-refusals,
// docs/reference-behaviour.md#corridor-order-of-checks): one HTTP CONNECT per socket, authority
// form only, decided by policy/, resolved once with c-ares, dialled to the approved address only,
// then relayed once the client's TLS ClientHello names the approved server.
//   head → decide_target → tunnel slot → resolve → decide_answers → connect → 200
//        → ClientHello (deadline, size cap) → decide_client_hello → relay
// Every refusal before the 200 is a bare status line (400/403/502/503) with Connection: close;
// after it, the tunnel is closed without a byte. The reason goes to the journal only.
#pragma once

#include <uv.h>

#include <optional>
#include <string>

#include "appliance/dns/resolver.h"
#include "appliance/http/parser.h"
#include "appliance/loop/pump.h"
#include "appliance/loop/splice.h"
#include "appliance/serve/connection.h"
#include "policy/corridor.h"

namespace appliance::serve {

inline constexpr std::uint64_t kClientHelloDeadlineMs = 10'000;  // 200 → whole ClientHello

Connection* make_corridor_connection(ServeContext& ctx, TcpListener& listener);

// After POST /network: every tunnel (resolving, connecting, awaiting its ClientHello or relaying)
// whose name the new policy refuses is closed and journalled deny:policy-changed (before its 200:
// the generic 403). Returns how many were closed.
std::size_t close_tunnels_refused_by_policy(ServeContext& ctx);

class CorridorConnection final : public Connection,
                                 private loop::Pump::Events,
                                 private loop::SpliceRelay::Events {
 public:
  CorridorConnection(ServeContext& ctx, TcpListener& listener);
  ~CorridorConnection() override;
  // True when it was closed because the current policy refuses its name.
  bool close_if_refused_by_policy();

 private:
  enum class State : std::uint8_t {
    kHead,
    kResolving,
    kConnecting,
    kClientHello,
    kRelaying,
    kDone
  };

  // The client side as the relay's reader: reads go through Connection::on_read.
  struct ClientReader final : loop::Reader {
    CorridorConnection* self = nullptr;
    void pause_reading() noexcept override { self->pause_client_reading(); }
    void resume_reading() noexcept override { self->resume_client_reading(); }
  };

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
  void await_client_hello();
  void check_client_hello();
  void refuse_tunnel(const policy::Decision& decision);

  // relay.cc
  void start_relay();
  bool start_splice();
  void start_pumps();
  void relay_failed(bool upstream_failed, int status);
  void splice_moved(loop::SpliceRelay::Side from, std::size_t bytes) noexcept override;
  void splice_finished(loop::SpliceRelay::Side from) noexcept override;
  void splice_failed(loop::SpliceRelay::Side side, int status) noexcept override;
  static void on_client_poll(uv_poll_t* poll, int status, int events) noexcept;
  static void on_upstream_poll(uv_poll_t* poll, int status, int events) noexcept;
  void pump_moved(loop::Pump& pump, std::size_t bytes) noexcept override;
  void pump_finished(loop::Pump& pump) noexcept override;
  void pump_failed(loop::Pump& pump, int status) noexcept override;
  static void on_upstream_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void on_idle_check(uv_timer_t* timer) noexcept;

  State state_ = State::kHead;
  http::IgnoreBody no_body_;  // the corridor reads a head only: what follows is the tunnel's
  http::MessageParser parser_{http::MessageParser::Kind::kRequest, no_body_};
  uv_timer_t timer_{};
  uv_tcp_t upstream_{};
  bool upstream_open_ = false;
  uv_connect_t connect_req_{};
  NameResolver::Query* query_ = nullptr;
  std::optional<policy::PendingResolution> pending_;
  std::string approved_name_;  // the normalised CONNECT name the ClientHello must name
  policy::JournalSubject subject_;
  bool holds_slot_ = false;
  std::string held_;  // bytes after the CONNECT head, forwarded first once connected
  ClientReader client_reader_;
  loop::StreamReader upstream_reader_;
  loop::Pump up_;    // client → upstream
  loop::Pump down_;  // upstream → client
  // The relay in the kernel (splice through a pipe each way); the Pumps above only when it could
  // not start (no descriptor for the pipes, or a stream still busy with a write).
  loop::SpliceRelay splice_;
  bool spliced_ = false;
  std::uint64_t last_activity_ = 0;
  bool registered_ = false;
  std::list<CorridorConnection*>::iterator registry_position_;
};

}  // namespace appliance::serve
