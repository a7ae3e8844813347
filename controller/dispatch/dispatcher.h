// The dispatcher: the host's requests for a space's inner server travel into the space through
// the place's `connect` (a byte stream over exec), never over a network the space can touch.
// `spacectl serve` owns the listening socket and parses each request head; for a target under
// /api/spaces/<id>/ that is none of its own routes it stops reading the client and hands the
// stream here. What happens to it (rules, credentials, pool, streaming, WebSockets) is this
// module's; see controller/dispatch/README.md and SECURITY.md.
//
// Everything runs on one libuv loop thread. The hooks marked "blocking" run on libuv's thread
// pool (they start `docker` processes); they must be safe to call from several threads at once.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/errors.h"

namespace controller::dispatch {

inline constexpr std::uint16_t kDefaultInnerPort = 27600;
// A forwarded request whose answer head has not arrived this long after the request was sent
// in full is answered 504 space_answer_timeout, and its stream and the client's connection are
// closed: an inner server that never answers holds neither a pooled stream nor a client forever.
// Generous, because some inner routes answer only when their work is done (a chat message
// waits for the model); SSE answers send their head at once and are not bounded after it.
inline constexpr std::uint64_t kAnswerHeadDeadlineMs = 15 * 60'000;

struct HeaderField {
  std::string name;   // as received (compared case-insensitively)
  std::string value;  // as received, without surrounding whitespace
};

// The request head serve has parsed (strict llhttp, its own size and time bounds).
struct RequestHead {
  std::string method;   // "GET", "POST", ...
  std::string target;   // as received: "/api/spaces/<id>/rest?query"
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<HeaderField> headers;  // in the order received
};

// How the dispatcher gives a client stream back. Called exactly once per take(), on the loop
// thread, after the dispatcher has stopped reading the stream and every write it queued has
// completed (or failed).
//   keep_alive == true:  the exchange ended cleanly on a keep-alive connection; `leftover` holds
//                        bytes the dispatcher read past the request (the start of the next one);
//                        serve parses the next request from them, then resumes reading.
//   keep_alive == false: serve closes the stream (it owns the handle's memory); `leftover` is
//                        empty. This is also the answer after a WebSocket ended and after a
//                        failure once bytes were sent.
// While the dispatcher owns the stream it uses client->data; it restores the value it found
// before calling back.
using Giveback = std::function<void(uv_stream_t* client, std::string leftover, bool keep_alive)>;

struct DispatcherConfig {
  uv_loop_t* loop = nullptr;
  // Blocking. The ids of this owner's spaces that exist (any state). The dispatcher keeps a
  // short cache: re-read after 2 s, or at once for an id not held when the last read is at
  // least 500 ms old; concurrent misses share one read. A failure answers 502 space_unreachable.
  std::function<Result<std::vector<std::string>>()> list_spaces;
  // Blocking. argv of a byte stream to 127.0.0.1:port inside the space (Place::connect);
  // refused with the place's code when the space is missing, foreign or stopped.
  std::function<Result<std::vector<std::string>>(const std::string& id, std::uint16_t port)> connect;
  // Blocking. The space's token, read back over exec (read_space_token in token.h). Called on
  // first use and again once after the inner server refused a login.
  std::function<Result<std::string>(const std::string& id)> read_token;
  std::uint16_t inner_port = kDefaultInnerPort;
  // How long a forwarded request waits for the inner answer's head once it was sent in full
  // (rules.h kAnswerHeadDeadlineMs); tests shorten it.
  std::uint64_t answer_head_deadline_ms = kAnswerHeadDeadlineMs;
  // Loop thread. Called when a request or socket for the space starts and, while bytes flow,
  // at most once a second per space (serve's idle stop).
  std::function<void(const std::string& id)> activity;
  // Loop thread. The status of each answer the dispatcher starts (the inner answer's, a
  // refusal's, 101 for a socket); serve counts them for its metrics. May be empty.
  std::function<void(int status)> answered;
};

class DispatcherImpl;

class Dispatcher {
 public:
  explicit Dispatcher(DispatcherConfig config);
  ~Dispatcher();  // call close_all() and let the loop run first; destroying with work open aborts
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // serve has stopped reading `client` (uv_read_stop) and parsed `head`; `already_read` holds
  // the bytes it read past the head (the start of the body, or of pipelined requests).
  // `space_id` is the path segment after /api/spaces/ as received (checked here). The
  // dispatcher owns the stream until `done` is called. A request carrying `Upgrade: websocket`
  // becomes a WebSocket relay.
  void take(uv_stream_t* client, std::string space_id, RequestHead head, std::string already_read, Giveback done);

  // Ends every exchange and socket (their Giveback is called with keep_alive == false), closes
  // every pooled stream and kills its bridge process. `closed` runs on the loop once nothing of
  // the dispatcher's is left open.
  void close_all(std::function<void()> closed);

  // Exchanges and WebSockets open for the space now (serve's idle stop never stops a space
  // while this is non-zero).
  [[nodiscard]] std::size_t open_for(const std::string& id) const;

 private:
  std::unique_ptr<DispatcherImpl> impl_;
};

}  // namespace controller::dispatch
