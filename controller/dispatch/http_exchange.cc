// One forwarded request: rules, known space, session, a pooled stream, the request out (the
// user's credentials dropped, the space's session added), the answer back (allow-listed headers,
// nosniff, no redirects, page types as text, streamed with backpressure both ways).
#include <cstring>

#include "appliance/http/parser.h"
#include "controller/dispatch/internal.h"

namespace controller::dispatch {

namespace {

using appliance::http::MessageParser;

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

struct ClientWrite {
  uv_write_t req{};
  std::string bytes;
  std::function<void(bool)> done;
};

std::string chunk(const char* data, std::size_t n) {
  char size[24];
  const int k = std::snprintf(size, sizeof size, "%zx\r\n", n);
  std::string out(size, static_cast<std::size_t>(k));
  out.append(data, n);
  out += "\r\n";
  return out;
}

std::string reason_text(const std::string& inner) {
  std::string out;
  for (char c : inner.substr(0, 64))
    if (c >= 0x20 && c < 0x7f) out += c;
  return out.empty() ? "Status" : out;
}

}  // namespace

void write_client(DispatcherImpl& d, uv_stream_t* client, std::string bytes, std::function<void(bool)> done) {
  auto* w = new ClientWrite;
  w->bytes = std::move(bytes);
  w->done = std::move(done);
  w->req.data = w;
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  const int rc = uv_write(&w->req, client, &buf, 1, [](uv_write_t* r, int status) noexcept {
    auto* cw = static_cast<ClientWrite*>(r->data);
    auto cb = std::move(cw->done);
    delete cw;
    if (cb) cb(status == 0);
  });
  if (rc != 0) {
    auto cb = std::move(w->done);
    delete w;
    if (cb) d.defer([cb = std::move(cb)] { cb(false); });
  }
}

std::string forwarded_request_headers(const RequestHead& head, bool keep_length) {
  std::string out;
  for (const HeaderField& h : head.headers) {
    if (request_header_dropped(h.name)) continue;
    if (!keep_length && iequal(h.name, "content-length")) continue;
    if (header_value_unsafe(h.value) || header_value_unsafe(h.name)) continue;
    out += h.name + ": " + h.value + "\r\n";
  }
  return out;
}

class Exchange;

// The answer-head deadline's timer, apart from the exchange: its memory is freed in its close
// callback, which may run after the exchange is gone (owner is cleared first).
struct HeadTimer {
  uv_timer_t timer{};
  Exchange* owner = nullptr;
};

class Exchange final : public InnerStream::Sink, public appliance::http::BodySink {
 public:
  Exchange(DispatcherImpl& d, uv_stream_t* client, SpaceTarget t, RequestHead head, std::string already, Giveback done)
      : d_(d), client_(client), saved_data_(client->data), target_(std::move(t)), head_(std::move(head)),
        pending_(std::move(already)), done_(std::move(done)), body_sink_(*this),
        request_(MessageParser::Kind::kRequest, body_sink_) {
    client_->data = this;
    const std::string* conn = find_header(head_.headers, "connection");
    client_keep_ = head_.version == "HTTP/1.1" && !(conn != nullptr && iequal(*conn, "close"));
  }

  void begin() {
    d_.exchanges.insert(this);
    ++d_.space(target_.id).open;
    switch (route_class(target_.inner_path)) {
      case RouteClass::kHostOnly: return refuse(Refusal::kHostOnlyRoute);
      case RouteClass::kRefusedAcrossBoundary: return refuse(Refusal::kRefusedAcrossBoundary);
      case RouteClass::kForward: break;
    }
    if (directory_outside_space(target_.query, head_.headers, target_.id)) return refuse(Refusal::kDirectoryOutsideSpace);
    // The head again through the one strict parser: it frames the body we stream on.
    std::string raw = head_.method + " " + head_.target + " " + head_.version + "\r\n";
    for (const HeaderField& h : head_.headers) raw += h.name + ": " + h.value + "\r\n";
    raw += "\r\n";
    const MessageParser::Feed f = request_.feed(raw.data(), raw.size());
    if (f.status != MessageParser::Status::kHeadDone || f.consumed != raw.size()) return refuse(Refusal::kRequestUnreadable);
    has_body_ = request_.chunked() || (request_.has_length() && request_.length() > 0);
    if (!has_body_) {
      request_done_ = true;
      leftover_ = std::move(pending_);
      pending_.clear();
    }
    d_.known(target_.id, [this](Result<bool> known) {
      if (aborted_) return;
      if (!known) return refuse(Refusal::kSpaceUnreachable);
      if (!*known) return refuse(Refusal::kSpaceNotFound);
      d_.note_activity(target_.id);
      with_session();
    });
  }

  void abort() {
    if (aborted_) return;
    client_gone_ = true;
    end(false);
  }

  // InnerStream::Sink
  void on_inner_data(const char* data, std::size_t length) override {
    d_.note_activity(target_.id);
    const MessageParser::Feed f = response_->feed(data, length);
    if (aborted_) return;
    if (f.status == MessageParser::Status::kError) return inner_failed(Refusal::kSpaceAnswerUnreadable);
    if (f.status == MessageParser::Status::kComplete && f.consumed != length) inner_reusable_ = false;
  }
  void on_inner_end(bool clean) override {
    if (aborted_ || response_done_) return;
    if (clean && response_ && response_->ends_at_close()) {
      inner_reusable_ = false;
      if (response_->finish().status == MessageParser::Status::kComplete) return;
    }
    // A pooled stream that died before any answer byte: a bodyless request goes once more.
    if (!head_sent_ && !answer_started_ && stream_->reused() && !has_body_ && !resent_) {
      resent_ = true;
      d_.release(stream_, false);
      stream_ = nullptr;
      return with_stream();
    }
    inner_failed(Refusal::kSpaceUnreachable);
  }
  void on_inner_drained() override {
    if (client_paused_ && !request_done_) read_client();
  }

  // appliance::http::BodySink (the answer)
  bool on_head() override {
    answer_started_ = true;
    disarm_head_deadline();
    const int status = response_->status_code();
    if (status == 401) {
      unauthorized_ = true;
      return true;  // read through; decided at its end
    }
    if (redirect_refused(status)) {
      refusal_after_ = Refusal::kSpaceRedirected;
      return false;
    }
    send_head();
    return true;
  }
  void on_body(const char* data, std::size_t length) override {
    if (unauthorized_ || aborted_) return;
    to_client(chunked_out_ ? chunk(data, length) : std::string(data, length));
  }
  void on_complete() override {
    response_done_ = true;
    inner_reusable_ = inner_reusable_ && response_->keep_alive() && request_done_;
    if (unauthorized_) return retry_after_401();
    if (chunked_out_) to_client("0\r\n\r\n");
    end(client_keep_ && !close_delimited_);
  }

 private:
  struct RequestBody final : appliance::http::BodySink {
    explicit RequestBody(Exchange& e) : e_(e) {}
    bool on_head() override { return true; }
    void on_body(const char* data, std::size_t length) override { e_.body_out(data, length); }
    void on_complete() override { e_.body_complete(); }
    Exchange& e_;
  };

  void with_session() {
    d_.session(target_.id, [this](std::optional<Refusal> r) {
      if (aborted_) return;
      if (r) return refuse(*r);
      with_stream();
    });
  }

  void with_stream() {
    d_.stream(target_.id, false, [this](InnerStream* st, std::optional<Failure> f) {
      if (aborted_) {
        if (st != nullptr) d_.release(st, true);
        return;
      }
      if (f) return refuse(refusal_for(*f));
      stream_ = st;
      send_request();
    });
  }

  void send_request() {
    response_ = std::make_unique<MessageParser>(MessageParser::Kind::kResponse, *this);
    response_->set_head_request(iequal(head_.method, "HEAD"));
    answer_started_ = unauthorized_ = response_done_ = false;
    inner_reusable_ = true;
    const SpaceState& s = d_.space(target_.id);
    const std::string query = strip_credential_query(target_.query);
    std::string out = head_.method + " " + target_.inner_path + (query.empty() ? "" : "?" + query) + " HTTP/1.1\r\n";
    chunked_in_ = has_body_ && request_.chunked();
    out += forwarded_request_headers(head_, /*keep_length=*/!chunked_in_);
    out += "Host: 127.0.0.1:" + std::to_string(d_.config.inner_port) + "\r\n";
    out += "Cookie: " + s.cookie + "\r\n";
    out += "Accept-Encoding: identity\r\nConnection: keep-alive\r\n";
    if (chunked_in_) out += "Transfer-Encoding: chunked\r\n";
    out += "\r\n";
    stream_->attach(this);
    if (!stream_->write(std::move(out))) return inner_failed(Refusal::kSpaceUnreachable);
    if (has_body_ && !pending_.empty()) {
      std::string first = std::move(pending_);
      pending_.clear();
      client_bytes(first.data(), first.size());
    }
    if (!has_body_) arm_head_deadline();
    read_client();
  }

  void body_out(const char* data, std::size_t length) {
    if (stream_ == nullptr) return;
    stream_->write(chunked_in_ ? chunk(data, length) : std::string(data, length));
  }
  void body_complete() {
    request_done_ = true;
    if (chunked_in_ && stream_ != nullptr) stream_->write("0\r\n\r\n");
    arm_head_deadline();
  }

  // From the moment the request went in full until the answer's head: bounded.
  void arm_head_deadline() {
    if (stream_ == nullptr || answer_started_ || ended_) return;
    if (head_timer_ == nullptr) {
      head_timer_ = new HeadTimer;
      uv_timer_init(d_.loop, &head_timer_->timer);
      head_timer_->timer.data = head_timer_;
    }
    head_timer_->owner = this;
    uv_timer_start(
        &head_timer_->timer,
        [](uv_timer_t* t) noexcept {
          auto* ht = static_cast<HeadTimer*>(t->data);
          if (ht->owner != nullptr) ht->owner->head_deadline_passed();
        },
        d_.config.answer_head_deadline_ms, 0);
  }
  void disarm_head_deadline() {
    if (head_timer_ != nullptr) uv_timer_stop(&head_timer_->timer);
  }
  void close_head_timer() {
    if (head_timer_ == nullptr) return;
    head_timer_->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&head_timer_->timer),
             [](uv_handle_t* h) noexcept { delete static_cast<HeadTimer*>(h->data); });
    head_timer_ = nullptr;
  }

 public:
  // No answer head in time: one JSON answer, then the client's connection and the stream (its
  // bridge and exec killed) are closed; nothing of this request is tried again.
  void head_deadline_passed() {
    if (ended_ || answer_started_) return;
    client_keep_ = false;
    inner_failed(Refusal::kSpaceAnswerTimeout);
  }

 private:
  void client_bytes(const char* data, std::size_t n) {
    if (request_done_) {
      // Pipelined bytes (the next request): kept for serve, bounded.
      leftover_.append(data, n);
      if (leftover_.size() > kMaxLeftover) pause_client();
      return;
    }
    const MessageParser::Feed f = request_.feed(data, n);
    if (f.status == MessageParser::Status::kError) {
      client_keep_ = false;
      return inner_failed(Refusal::kRequestUnreadable);
    }
    if (f.status == MessageParser::Status::kComplete) {
      request_done_ = true;
      leftover_.append(data + f.consumed, n - f.consumed);
    }
    if (stream_ != nullptr && stream_->queued() > kHighWater) pause_client();
  }

  void read_client() {
    if (reading_client_ || aborted_) return;
    reading_client_ = true;
    client_paused_ = false;
    uv_read_start(
        client_,
        [](uv_handle_t* h, std::size_t, uv_buf_t* buf) noexcept {
          auto* self = static_cast<Exchange*>(h->data);
          *buf = uv_buf_init(self->client_buffer_, sizeof self->client_buffer_);
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept {
          auto* self = static_cast<Exchange*>(s->data);
          if (n == 0) return;
          if (n < 0) {
            // The client left (or half-closed): the exchange ends, the inner request with it.
            self->pause_client();
            self->client_gone_ = true;
            return self->end(false);
          }
          self->client_bytes(buf->base, static_cast<std::size_t>(n));
        });
  }
  void pause_client() {
    if (!reading_client_) return;
    reading_client_ = false;
    client_paused_ = true;
    uv_read_stop(client_);
  }

  void send_head() {
    const int status = response_->status_code();
    const bool no_body = response_->is_head_method() || iequal(head_.method, "HEAD") || status == 204 || status == 304;
    std::string content_type;
    for (const appliance::http::Header& h : response_->headers())
      if (iequal(h.name, "content-type")) content_type = h.value;
    const ServedType served = served_content_type(target_.inner_path, content_type);
    const bool sse = served.content_type.rfind("text/event-stream", 0) == 0;
    std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason_text(response_->reason()) + "\r\n";
    for (const appliance::http::Header& h : response_->headers()) {
      if (!response_header_allowed(h.name)) continue;
      if (iequal(h.name, "content-type") || iequal(h.name, "content-length")) continue;
      if (served.attachment && iequal(h.name, "content-disposition")) continue;
      if (sse && (iequal(h.name, "cache-control") || iequal(h.name, "x-accel-buffering"))) continue;
      out += h.name + ": " + h.value + "\r\n";
    }
    if (!(no_body && content_type.empty())) out += "Content-Type: " + served.content_type + "\r\n";
    if (served.attachment) out += "Content-Disposition: attachment\r\n";
    if (sse) out += "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n";
    out += "X-Content-Type-Options: nosniff\r\n";
    if (response_->has_length()) {
      out += "Content-Length: " + std::to_string(response_->length()) + "\r\n";
    } else if (!no_body) {
      if (head_.version == "HTTP/1.1") {
        chunked_out_ = true;
        out += "Transfer-Encoding: chunked\r\n";
      } else {
        close_delimited_ = true;
      }
    }
    out += std::string("Connection: ") + (client_keep_ && !close_delimited_ ? "keep-alive" : "close") + "\r\n\r\n";
    head_sent_ = true;
    if (d_.config.answered) d_.config.answered(status);
    to_client(std::move(out));
  }

  void to_client(std::string bytes) {
    if (client_gone_) return;
    ++writing_;
    write_client(d_, client_, std::move(bytes), [this](bool ok) {
      --writing_;
      if (!ok) client_gone_ = true;
      if (client_gone_ && !ended_) return end(false);
      if (stream_ != nullptr && uv_stream_get_write_queue_size(client_) < kHighWater / 2) stream_->resume();
      maybe_giveback();
    });
    if (stream_ != nullptr && uv_stream_get_write_queue_size(client_) > kHighWater) stream_->pause();
  }

  // Runs inside the answer parser's callback: the stream is handed back and the request goes
  // again on a later loop turn.
  void retry_after_401() {
    d_.forget_session(target_.id);
    InnerStream* st = stream_;
    stream_ = nullptr;
    const bool reusable = inner_reusable_;
    d_.defer([this, st, reusable] {
      d_.release(st, reusable);
      if (aborted_) return;
      if (has_body_) return refuse(Refusal::kSpaceSessionExpired);  // the body is gone: the client resends
      if (retried_401_) return refuse(Refusal::kSpaceLoginFailed);
      retried_401_ = true;
      with_session();
    });
  }

  void inner_failed(Refusal r) {
    if (refusal_after_) r = *refusal_after_;
    if (stream_ != nullptr) {
      d_.release(stream_, false);
      stream_ = nullptr;
    }
    if (head_sent_) return end(false);  // bytes went out: the connection is just closed
    refuse(r);
  }

  // One JSON answer while nothing was sent.
  void refuse(Refusal r) {
    if (ended_ || head_sent_) return end(false);
    head_sent_ = true;
    if (d_.config.answered) d_.config.answered(refusal_status(r));
    const bool keep = client_keep_ && request_done_ && r != Refusal::kRequestUnreadable;
    to_client(refusal_answer(r, keep));
    end(keep);
  }

  void end(bool keep) {
    if (ended_) return;
    ended_ = true;
    aborted_ = true;
    close_head_timer();
    keep_ = keep && !client_gone_ && request_done_;
    pause_client();
    if (stream_ != nullptr) {
      InnerStream* st = stream_;
      stream_ = nullptr;
      const bool reusable = response_done_ && inner_reusable_;
      // Not from inside the parser's callback: the stream may be handed on at once.
      d_.defer([this, st, reusable] {
        d_.release(st, reusable);
        released_ = true;
        maybe_giveback();
      });
      return;
    }
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
    client_->data = saved_data_;
    Giveback done = std::move(done_);
    uv_stream_t* client = client_;
    std::string rest = keep_ ? std::move(leftover_) : std::string();
    const bool keep = keep_;
    d_.finished(this);
    delete this;
    done(client, std::move(rest), keep);
  }

  DispatcherImpl& d_;
  uv_stream_t* client_;
  void* saved_data_;
  SpaceTarget target_;
  RequestHead head_;
  std::string pending_, leftover_;
  Giveback done_;
  RequestBody body_sink_;
  MessageParser request_;
  std::unique_ptr<MessageParser> response_;
  InnerStream* stream_ = nullptr;
  HeadTimer* head_timer_ = nullptr;
  std::optional<Refusal> refusal_after_;
  bool client_keep_ = false, has_body_ = false, request_done_ = false, chunked_in_ = false, chunked_out_ = false;
  bool close_delimited_ = false, head_sent_ = false, answer_started_ = false, unauthorized_ = false;
  bool response_done_ = false, inner_reusable_ = true, resent_ = false, retried_401_ = false;
  bool reading_client_ = false, client_paused_ = false, client_gone_ = false, aborted_ = false, ended_ = false;
  bool keep_ = false, given_back_ = false, released_ = false;
  int writing_ = 0;
  char client_buffer_[64 * 1024];
};

void start_exchange(DispatcherImpl& d, uv_stream_t* client, SpaceTarget target, RequestHead head, std::string already_read,
                    Giveback done) {
  auto* e = new Exchange(d, client, std::move(target), std::move(head), std::move(already_read), std::move(done));
  e->begin();
}

void abort_all_exchanges(DispatcherImpl& d) {
  std::vector<Exchange*> all(d.exchanges.begin(), d.exchanges.end());
  for (Exchange* e : all) e->abort();
  abort_all_sockets(d);
}

}  // namespace controller::dispatch
