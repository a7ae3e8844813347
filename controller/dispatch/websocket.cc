// One WebSocket: allowed inner paths only, a fresh stream per socket (never the pool), the
// handshake answer read to its head within bounds, then bytes relayed both ways as they are
// (frames are never parsed). When the inside goes away the client gets a close frame: 1012
// (space_closed) for a clean end, 1011 (space_unreachable) for a failure (RFC 6455 §7.4.1).
#include <cstring>

#include "controller/dispatch/internal.h"

namespace controller::dispatch {

namespace {

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// A server's close frame: FIN + opcode 8, unmasked, 2-byte code and a reason.
std::string close_frame(std::uint16_t code, std::string_view reason) {
  std::string f;
  f += static_cast<char>(0x88);
  f += static_cast<char>(2 + reason.size());
  f += static_cast<char>(code >> 8);
  f += static_cast<char>(code & 0xff);
  f += reason;
  return f;
}

struct HandshakeAnswer {
  int status = 0;
  std::vector<HeaderField> headers;
};

// The inner answer's head: "HTTP/1.1 <3 digits> ..." then "name: value" lines. Anything else is
// unreadable (status 0).
HandshakeAnswer parse_answer_head(std::string_view head) {
  HandshakeAnswer a;
  const std::size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  if (line.size() < 12 || (line.substr(0, 9) != "HTTP/1.1 " && line.substr(0, 9) != "HTTP/1.0 ")) return a;
  for (std::size_t i = 9; i < 12; ++i)
    if (line[i] < '0' || line[i] > '9') return a;
  if (line.size() > 12 && line[12] != ' ') return a;
  const int status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  std::size_t at = eol + 2;
  while (at < head.size()) {
    const std::size_t end = head.find("\r\n", at);
    const std::string_view l = head.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (l.empty()) break;
    const std::size_t colon = l.find(':');
    if (colon == std::string_view::npos || colon == 0 || l[0] == ' ' || l[0] == '\t') return a;
    std::string_view v = l.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    a.headers.push_back({std::string(l.substr(0, colon)), std::string(v)});
    if (end == std::string_view::npos) break;
    at = end + 2;
  }
  a.status = status;
  return a;
}

}  // namespace

class SocketRelay final : public InnerStream::Sink {
 public:
  SocketRelay(DispatcherImpl& d, uv_stream_t* client, SpaceTarget t, RequestHead head, std::string already, Giveback done)
      : d_(d), client_(client), saved_data_(client->data), target_(std::move(t)), head_(std::move(head)),
        pending_(std::move(already)), done_(std::move(done)) {
    client_->data = this;
    uv_timer_init(d_.loop, &timer_);
    timer_.data = this;
  }

  void begin() {
    d_.relays.insert(this);
    SpaceState& s = d_.space(target_.id);
    ++s.open;
    switch (route_class(target_.inner_path)) {
      case RouteClass::kHostOnly: return refuse(Refusal::kHostOnlyRoute);
      case RouteClass::kRefusedAcrossBoundary: return refuse(Refusal::kRefusedAcrossBoundary);
      case RouteClass::kForward: break;
    }
    if (!websocket_path_allowed(target_.inner_path)) return refuse(Refusal::kSpaceSocketUnknown);
    if (directory_outside_space(target_.query, head_.headers, target_.id)) return refuse(Refusal::kDirectoryOutsideSpace);
    for (const HeaderField& h : head_.headers)
      if (header_value_unsafe(h.value) || header_value_unsafe(h.name)) return refuse(Refusal::kRequestUnreadable);
    if (s.sockets >= kMaxSocketsPerSpace) return refuse(Refusal::kSpaceSocketLimit);
    ++s.sockets;
    counted_ = true;
    d_.known(target_.id, [this](Result<bool> known) {
      if (ended_) return;
      if (!known) return refuse(Refusal::kSpaceUnreachable);
      if (!*known) return refuse(Refusal::kSpaceNotFound);
      d_.note_activity(target_.id);
      handshake();
    });
  }

  void abort() { end(); }

  void on_inner_data(const char* data, std::size_t length) override {
    if (ended_) return;
    d_.note_activity(target_.id);
    if (upgraded_) return to_client(std::string(data, length));
    answer_.append(data, length);
    const std::size_t head_end = answer_.find("\r\n\r\n");
    if (head_end == std::string::npos) {
      if (answer_.size() > kMaxHandshakeAnswerBytes) inner_gone(false);
      return;
    }
    if (head_end + 4 > kMaxHandshakeAnswerBytes) return inner_gone(false);
    uv_timer_stop(&timer_);
    const HandshakeAnswer a = parse_answer_head(std::string_view(answer_).substr(0, head_end + 2));
    std::string rest = answer_.substr(head_end + 4);
    answer_.clear();
    if (a.status == 401 && !retried_) {
      retried_ = true;
      d_.forget_session(target_.id);
      release_stream();
      return handshake();
    }
    if (a.status != 101) {
      release_stream();
      // The inside's own refusal keeps its status (a dev tunnel's 403 arrives as 403).
      const int status = a.status >= 200 && a.status <= 599 ? a.status : 502;
      if (d_.config.answered) d_.config.answered(status);
      const std::string body = refusal_body(Refusal::kSpaceSocketRefused);
      const std::string answer = "HTTP/1.1 " + std::to_string(status) +
                                 " Refused\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n"
                                 "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      to_client(answer);
      return end();
    }
    std::string out = "HTTP/1.1 101 Switching Protocols\r\n";
    for (const HeaderField& h : a.headers)
      if (websocket_answer_header_allowed(h.name)) out += h.name + ": " + h.value + "\r\n";
    out += "\r\n";
    upgraded_ = true;
    if (d_.config.answered) d_.config.answered(101);
    to_client(std::move(out));
    if (!rest.empty()) to_client(std::move(rest));
    if (!pending_.empty()) {
      stream_->write(std::move(pending_));
      pending_.clear();
    }
    read_client();
  }

  void on_inner_end(bool clean) override {
    if (ended_) return;
    if (!upgraded_) return refuse(Refusal::kSpaceUnreachable);
    if (!clean || stream_ == nullptr || waiting_exit_) return inner_gone(false);
    // EOF alone does not say who ended it: the bridge exits 0 only after the inner server closed
    // the connection (1012); a killed exec or a stopped container ends it otherwise (1011).
    waiting_exit_ = true;
    uv_timer_start(
        &timer_,
        [](uv_timer_t* t) noexcept { static_cast<SocketRelay*>(t->data)->inner_gone(false); },
        kExitWaitMs, 0);
    stream_->when_exited([this](bool ok) {
      uv_timer_stop(&timer_);
      if (!ended_) inner_gone(ok);
    });
  }
  void on_inner_drained() override {
    if (client_paused_) read_client();
  }

 private:
  void handshake() {
    d_.session(target_.id, [this](std::optional<Refusal> r) {
      if (ended_) return;
      if (r) return refuse(*r);
      d_.stream(target_.id, /*fresh=*/true, [this](InnerStream* st, std::optional<Failure> f) {
        if (ended_) {
          if (st != nullptr) d_.release(st, false);
          return;
        }
        if (f) return refuse(refusal_for(*f));
        stream_ = st;
        const SpaceState& s = d_.space(target_.id);
        const std::string query = strip_credential_query(target_.query);
        const std::string inner = "127.0.0.1:" + std::to_string(d_.config.inner_port);
        std::string out = "GET " + target_.inner_path + (query.empty() ? "" : "?" + query) + " HTTP/1.1\r\n";
        out += forwarded_request_headers(head_, true);
        // The ends negotiate key, version, protocol and extensions between themselves.
        for (const HeaderField& h : head_.headers)
          if (h.name.size() > 14 && iequal(h.name.substr(0, 14), "sec-websocket-")) out += h.name + ": " + h.value + "\r\n";
        out += "Host: " + inner + "\r\nOrigin: http://" + inner + "\r\nCookie: " + s.cookie +
               "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        stream_->attach(this);
        uv_timer_start(&timer_, [](uv_timer_t* t) noexcept {
          static_cast<SocketRelay*>(t->data)->refuse(Refusal::kSpaceUnreachable);
        }, kHandshakeDeadlineMs, 0);
        if (!stream_->write(std::move(out))) refuse(Refusal::kSpaceUnreachable);
        // A client leaving mid-handshake ends it at once.
        read_client();
      });
    });
  }

  void read_client() {
    if (reading_ || ended_) return;
    reading_ = true;
    client_paused_ = false;
    uv_read_start(
        client_,
        [](uv_handle_t* h, std::size_t, uv_buf_t* buf) noexcept {
          auto* self = static_cast<SocketRelay*>(h->data);
          *buf = uv_buf_init(self->buffer_, sizeof self->buffer_);
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept {
          auto* self = static_cast<SocketRelay*>(s->data);
          if (n == 0) return;
          if (n < 0) return self->end();  // the client left: the stream and its exec go too
          if (!self->upgraded_) {
            self->pending_.append(buf->base, static_cast<std::size_t>(n));
            if (self->pending_.size() > kMaxLeftover) self->end();
            return;
          }
          self->d_.note_activity(self->target_.id);
          if (self->stream_ == nullptr || !self->stream_->write(std::string(buf->base, static_cast<std::size_t>(n))))
            return self->end();
          if (self->stream_->queued() > kHighWater) {
            self->reading_ = false;
            self->client_paused_ = true;
            uv_read_stop(self->client_);
          }
        });
  }

  void to_client(std::string bytes) {
    if (client_gone_) return;
    ++writing_;
    write_client(d_, client_, std::move(bytes), [this](bool ok) {
      --writing_;
      if (!ok) {
        client_gone_ = true;
        if (!ended_) end();
      }
      if (stream_ != nullptr && uv_stream_get_write_queue_size(client_) < kHighWater / 2) stream_->resume();
      maybe_giveback();
    });
    if (stream_ != nullptr && uv_stream_get_write_queue_size(client_) > kHighWater) stream_->pause();
  }

  void inner_gone(bool clean) {
    if (ended_) return;
    release_stream();
    to_client(clean ? close_frame(1012, "space_closed") : close_frame(1011, "space_unreachable"));
    end();
  }

  void refuse(Refusal r) {
    if (ended_) return;
    if (upgraded_) return inner_gone(false);
    if (d_.config.answered) d_.config.answered(refusal_status(r));
    to_client(refusal_answer(r, false));
    end();
  }

  void release_stream() {
    if (stream_ == nullptr) return;
    InnerStream* st = stream_;
    stream_ = nullptr;
    d_.defer([this, st] { d_.release(st, false); });
  }

  void end() {
    if (ended_) return;
    ended_ = true;
    uv_timer_stop(&timer_);
    if (reading_) {
      reading_ = false;
      uv_read_stop(client_);
    }
    release_stream();
    d_.defer([this] {
      released_ = true;
      maybe_giveback();
    });
  }

  void maybe_giveback() {
    if (!ended_ || !released_ || writing_ != 0 || given_back_) return;
    given_back_ = true;
    SpaceState& s = d_.space(target_.id);
    if (s.open > 0) --s.open;
    if (counted_ && s.sockets > 0) --s.sockets;
    client_->data = saved_data_;
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), [](uv_handle_t* h) noexcept {
      auto* self = static_cast<SocketRelay*>(h->data);
      Giveback done = std::move(self->done_);
      uv_stream_t* client = self->client_;
      DispatcherImpl& d = self->d_;
      d.finished(self);
      delete self;
      done(client, {}, false);  // a socket's connection never goes back to HTTP
    });
  }

  DispatcherImpl& d_;
  uv_stream_t* client_;
  void* saved_data_;
  SpaceTarget target_;
  RequestHead head_;
  std::string pending_, answer_;
  Giveback done_;
  InnerStream* stream_ = nullptr;
  uv_timer_t timer_{};
  bool counted_ = false, upgraded_ = false, retried_ = false, reading_ = false,
       client_paused_ = false, waiting_exit_ = false;
  bool client_gone_ = false, ended_ = false, released_ = false, given_back_ = false;
  int writing_ = 0;
  char buffer_[64 * 1024];
};

void start_socket(DispatcherImpl& d, uv_stream_t* client, SpaceTarget target, RequestHead head, std::string already_read,
                  Giveback done) {
  auto* r = new SocketRelay(d, client, std::move(target), std::move(head), std::move(already_read), std::move(done));
  r->begin();
}

void abort_all_sockets(DispatcherImpl& d) {
  std::vector<SocketRelay*> all(d.relays.begin(), d.relays.end());
  for (SocketRelay* r : all) r->abort();
}

}  // namespace controller::dispatch
