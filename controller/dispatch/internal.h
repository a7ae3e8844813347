// The dispatcher's parts (private to controller/dispatch/): the byte stream into a space, the
// per-space state (known-space cache, session, pool) and one client exchange.
#pragma once

#include <uv.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/dispatch/dispatcher.h"
#include "controller/dispatch/rules.h"

namespace controller::dispatch {

using Clock = std::chrono::steady_clock;

inline constexpr std::size_t kHighWater = 1u << 20;       // queued bytes before a reader pauses
inline constexpr std::size_t kStderrKept = 4u << 10;      // of a bridge, for the journal line
inline constexpr std::uint64_t kLoginMs = 30'000;
inline constexpr std::size_t kMaxWaiting = 256;           // requests queued for a space's pool
inline constexpr std::size_t kMaxLeftover = 64u << 10;    // client bytes kept past a request
inline constexpr auto kKnownFresh = std::chrono::milliseconds(2000);
inline constexpr auto kKnownRetry = std::chrono::milliseconds(500);

class DispatcherImpl;

// A child (the place's connect argv: our bridge over `docker exec -i`) whose stdin and stdout are
// the byte stream. It runs in a session of its own; closing kills the whole group. Owned by the
// pool while idle and by one exchange while busy; deletes itself once every handle closed.
class InnerStream {
 public:
  struct Sink {
    virtual ~Sink() = default;
    virtual void on_inner_data(const char* data, std::size_t length) = 0;
    // The stream ended: clean = EOF on stdout (not yet the exit); otherwise a read error.
    virtual void on_inner_end(bool clean) = 0;
    // What was queued for the stream's stdin has drained below kHighWater / 2.
    virtual void on_inner_drained() {}
  };
  InnerStream(DispatcherImpl& d, std::string space_id);
  // False with a sentence when the child could not start.
  bool spawn(const std::vector<std::string>& argv, std::string& why);
  void attach(Sink* sink);  // starts reading stdout into sink
  void detach();            // stops reading; bytes arriving while detached break the stream
  bool write(std::string bytes);
  void end_input();         // half-close: the bridge passes it on as SHUT_WR
  [[nodiscard]] std::size_t queued() const;
  void pause();
  void resume();
  void close();             // kill the group, close every handle; `this` goes away later
  // Calls `exited(ok)` once the child has exited (at once when it already has): ok when it
  // exited 0, i.e. the bridge saw the inner server close the connection and flushed everything;
  // a kill, a signal or a non-zero status (docker exec's, when the container stopped) is not ok.
  // Forgotten on detach and close.
  void when_exited(std::function<void(bool ok)> exited);
  [[nodiscard]] bool broken() const { return broken_; }
  [[nodiscard]] bool reused() const { return uses_ > 1; }
  [[nodiscard]] const std::string& stderr_tail() const { return err_text_; }
  [[nodiscard]] const std::string& space() const { return space_; }
  void count_use() { ++uses_; }
  bool pooled = false;  // counted in its space's kMaxStreamsPerSpace
  DispatcherImpl& dispatcher() { return d_; }

  uv_timer_t idle_timer{};

 private:
  static void on_exit(uv_process_t* p, std::int64_t status, int signal) noexcept;
  static void on_alloc(uv_handle_t* h, std::size_t suggested, uv_buf_t* buf) noexcept;
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept;
  static void on_err_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept;
  static void on_written(uv_write_t* w, int status) noexcept;
  static void on_closed(uv_handle_t* h) noexcept;

  DispatcherImpl& d_;
  std::string space_;
  uv_process_t proc_{};
  uv_pipe_t in_{}, out_{}, err_{};
  int open_handles_ = 0;
  bool spawned_ = false, exited_ = false, closing_ = false, broken_ = false, reading_ = false, paused_ = false;
  bool exited_ok_ = false;
  std::function<void(bool)> exited_cb_;
  int uses_ = 0;
  std::size_t queued_ = 0;
  Sink* sink_ = nullptr;
  std::string err_text_;
  char buffer_[64 * 1024];
  char err_buffer_[4096];
};

struct SpaceState {
  std::string id;
  std::vector<InnerStream*> idle;
  std::size_t streams = 0;  // open or opening, idle ones included
  std::deque<std::function<void(InnerStream*, std::optional<Failure>)>> waiting;
  // Session with the inner server.
  std::string token;
  std::string cookie;
  Clock::time_point renew_at{};
  bool logging_in = false;
  std::vector<std::function<void(std::optional<Refusal>)>> login_waiters;
  std::size_t open = 0;     // exchanges and sockets now
  std::size_t sockets = 0;  // WebSockets incl. handshakes
  Clock::time_point last_activity{};
};

class Exchange;
class SocketRelay;

class DispatcherImpl {
 public:
  explicit DispatcherImpl(DispatcherConfig config);
  ~DispatcherImpl();

  void take(uv_stream_t* client, std::string space_id, RequestHead head, std::string already_read, Giveback done);
  void close_all(std::function<void()> closed);
  [[nodiscard]] std::size_t open_for(const std::string& id) const;

  // Blocking work on the pool; `done` runs on the loop unless the dispatcher is closing.
  void blocking(std::function<void()> work, std::function<void()> done);
  // Known-space check with the short cache.
  void known(const std::string& id, std::function<void(Result<bool>)> answer);
  // A logged-in session for the space (or the refusal).
  void session(const std::string& id, std::function<void(std::optional<Refusal>)> ready);
  void forget_session(const std::string& id);
  // A stream to the inner server: pooled (idle) or new; fresh == true never takes a pooled one
  // and never returns to the pool (WebSockets).
  void stream(const std::string& id, bool fresh, std::function<void(InnerStream*, std::optional<Failure>)> got);
  void release(InnerStream* s, bool reusable);
  void stream_gone(InnerStream* s);
  void note_activity(const std::string& id);
  SpaceState& space(const std::string& id);
  void finished(Exchange* e);
  void finished(SocketRelay* r);
  // Runs `fn` on a later loop turn (never inside a parser callback or a caller's frame).
  void defer(std::function<void()> fn);

  DispatcherConfig config;
  uv_loop_t* loop;
  bool closing = false;
  std::set<Exchange*> exchanges;
  std::set<SocketRelay*> relays;

 private:
  void open_stream(const std::string& id, bool pooled, std::function<void(InnerStream*, std::optional<Failure>)> got);
  void login(const std::string& id, bool reread);
  static void on_idle(uv_timer_t* t) noexcept;
  void maybe_closed();

  std::map<std::string, SpaceState> spaces_;
  std::set<InnerStream*> live_streams_;
  std::size_t pending_work_ = 0;
  // Known-space cache.
  std::set<std::string> known_;
  Clock::time_point known_at_{};
  bool known_valid_ = false, known_reading_ = false;
  std::vector<std::function<void()>> known_waiters_;
  std::string known_failure_;
  std::function<void()> on_closed_;
  uv_idle_t idle_{};
  bool idle_open_ = false;
  std::vector<std::function<void()>> deferred_;
};

// One forwarded request (http_exchange.cc) and one WebSocket (websocket.cc).
void start_exchange(DispatcherImpl& d, uv_stream_t* client, SpaceTarget target, RequestHead head, std::string already_read,
                    Giveback done);
void start_socket(DispatcherImpl& d, uv_stream_t* client, SpaceTarget target, RequestHead head, std::string already_read,
                  Giveback done);
void abort_all_exchanges(DispatcherImpl& d);
void abort_all_sockets(DispatcherImpl& d);

// Writes `bytes` to the client, then calls `done(ok)`: always from the loop, never from inside
// this call (a failed start is reported on the next turn).
void write_client(DispatcherImpl& d, uv_stream_t* client, std::string bytes, std::function<void(bool)> done);

[[nodiscard]] bool is_websocket_request(const RequestHead& head);
Refusal refusal_for(const Failure& f);
// "name: value\r\n" lines of the headers the inside may see (credentials and hop-by-hop dropped).
std::string forwarded_request_headers(const RequestHead& head, bool keep_length);
const std::string* find_header(const std::vector<HeaderField>& headers, std::string_view name);

}  // namespace controller::dispatch
