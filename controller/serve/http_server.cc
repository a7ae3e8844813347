#include "controller/serve/http_server.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "controller/text.h"

namespace controller::serve {

using nlohmann::json;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Constant time over the expected value's length (the token's length is not a secret).
bool same_secret(std::string_view got, std::string_view want) {
  unsigned char diff = got.size() == want.size() ? 0 : 1;
  for (std::size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(want[i] ^ (i < got.size() ? got[i] : 0));
  return diff == 0 && !want.empty();
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string head_of(int status, std::string_view content_type, std::size_t length, bool close, bool has_length = true) {
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  h += "Content-Type: " + std::string(content_type) + "\r\n";
  if (has_length) h += "Content-Length: " + std::to_string(length) + "\r\n";
  h += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n";
  if (close) h += "Connection: close\r\n";
  return h + "\r\n";
}

}  // namespace

std::string Request::header(std::string_view name) const {
  for (const appliance::http::Header& h : headers) {
    if (iequals(h.name, name)) return h.value;
  }
  return {};
}

// ---- one client connection ----

class Connection {
 public:
  Connection(Server& server, uv_stream_t* stream, bool tcp) : server_(server), stream_(stream), tcp_(tcp) {
    stream_->data = this;
    uv_timer_init(stream_->loop, &timer_);
    timer_.data = this;
  }

  void start() {
    next_request();
    // A stream that cannot be read is closed, never left to hang.
    if (uv_read_start(stream_, on_alloc, on_read) != 0) close();
  }

  [[nodiscard]] bool handed_off() const { return state_ == State::kHandedOff; }

  void close() {
    if (closing_) return;
    closing_ = true;
    if (reader_) server_.readers().remove(this);
    uv_read_stop(stream_);
    uv_timer_stop(&timer_);
    closes_ = 2;
    uv_close(reinterpret_cast<uv_handle_t*>(stream_), on_stream_closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), on_timer_closed);
  }

  // SSE: writes what is new; ends the stream once the operation finished.
  void pump() {
    if (closing_) return;
    std::vector<json> events;
    bool finished = false;
    std::size_t next = next_seq_;
    if (!server_.config().events || !server_.config().events(operation_, next_seq_, events, finished, next)) {
      write("event: end\ndata: {\"state\":\"unknown\"}\n\n", true);
      return;
    }
    std::string out;
    for (const json& e : events) out += "id: " + std::to_string(e.value("seq", 0)) + "\nevent: progress\ndata: " + json_text(e) + "\n\n";
    next_seq_ = next;
    if (finished) out += "event: end\ndata: {}\n\n";
    if (!out.empty()) write(out, finished);
  }

 private:
  enum class State : std::uint8_t { kHead, kBody, kAnswering, kEvents, kHandedOff };

  void next_request() {
    state_ = State::kHead;
    request_ = Request{};
    parser_ = std::make_unique<appliance::http::MessageParser>(appliance::http::MessageParser::Kind::kRequest, ignore_);
    uv_timer_start(&timer_, on_deadline, kHeadDeadlineMs, 0);
  }

  static void on_alloc(uv_handle_t*, std::size_t suggested, uv_buf_t* buf) noexcept {
    buf->base = new char[suggested];
    buf->len = suggested;
  }

  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) noexcept {
    auto* self = static_cast<Connection*>(s->data);
    if (n > 0) self->pending_.append(buf->base, static_cast<std::size_t>(n));
    delete[] buf->base;
    if (n < 0) {
      self->close();
      return;
    }
    self->process();
  }

  static void on_deadline(uv_timer_t* t) noexcept { static_cast<Connection*>(t->data)->close(); }

  void process() {
    while (!closing_) {
      if (state_ == State::kHead) {
        if (pending_.empty()) return;
        if (pending_.size() > kMaxBodyBytes + appliance::http::kMaxRequestHeadBytes) {
          answer(error_response(400, "invalid_request", "request: too many bytes before a complete head"), true);
          return;
        }
        const appliance::http::MessageParser::Feed f = parser_->feed(pending_.data(), pending_.size());
        switch (f.status) {
          case appliance::http::MessageParser::Status::kNeedMore:
            pending_.erase(0, f.consumed);
            return;
          case appliance::http::MessageParser::Status::kError:
            answer(error_response(400, "invalid_request", "request: an unreadable HTTP/1.x head"), true);
            return;
          case appliance::http::MessageParser::Status::kComplete:
          case appliance::http::MessageParser::Status::kHeadDone:
            pending_.erase(0, f.consumed);
            if (!head_done()) return;
            continue;
        }
      }
      if (state_ == State::kBody) {
        if (pending_.size() < body_left_) {
          request_.body += pending_;
          body_left_ -= pending_.size();
          pending_.clear();
          return;
        }
        request_.body += pending_.substr(0, body_left_);
        pending_.erase(0, body_left_);
        body_left_ = 0;
        dispatch();
        continue;
      }
      return;  // answering, events, handed off: the rest waits
    }
  }

  // False when the request was answered or handed off here.
  bool head_done() {
    request_.method = std::string(parser_->method_name());
    request_.target = parser_->url();
    request_.headers = parser_->headers();
    const std::size_t q = request_.target.find('?');
    request_.path = request_.target.substr(0, q);
    request_.query = q == std::string::npos ? std::string() : request_.target.substr(q + 1);
    const std::string connection = request_.header("connection");
    keep_alive_ = !parser_->http10() && !iequals(connection, "close");
    if (request_.path.empty() || request_.path[0] != '/') {
      answer(error_response(400, "invalid_request", "request: the target is not an absolute path"), true);
      return false;
    }
    if (tcp_) {
      const std::string auth = request_.header("authorization");
      const std::string prefix = "Bearer ";
      if (auth.size() <= prefix.size() || auth.compare(0, prefix.size(), prefix) != 0 ||
          !same_secret(std::string_view(auth).substr(prefix.size()), server_.config().token)) {
        answer(error_response(401, "unauthorized", "request: a bearer token is required on TCP"), true);
        return false;
      }
    }
    if (server_.config().activity_any) server_.config().activity_any();
    // /api/spaces/<id>/<rest>: the space's inner server, through the dispatcher.
    static constexpr std::string_view kSpaces = "/api/spaces/";
    if (request_.path.compare(0, kSpaces.size(), kSpaces) == 0) {
      const std::size_t slash = request_.path.find('/', kSpaces.size());
      if (slash != std::string::npos && slash > kSpaces.size()) {
        hand_off(request_.path.substr(kSpaces.size(), slash - kSpaces.size()));
        return false;
      }
    }
    // Own routes: a body only by Content-Length, bounded.
    if (!request_.header("transfer-encoding").empty()) {
      answer(error_response(411, "length_required", "request: send the body with Content-Length"), true);
      return false;
    }
    const std::string length = request_.header("content-length");
    std::size_t n = 0;
    for (const char c : length) {
      if (c < '0' || c > '9' || n > kMaxBodyBytes) {
        n = kMaxBodyBytes + 1;
        break;
      }
      n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    if (n > kMaxBodyBytes) {
      answer(error_response(413, "body_too_large", "request: a body of at most 65536 bytes"), true);
      return false;
    }
    body_left_ = n;
    state_ = State::kBody;
    uv_timer_start(&timer_, on_deadline, kBodyDeadlineMs, 0);
    return true;
  }

  void hand_off(const std::string& id) {
    state_ = State::kHandedOff;
    uv_timer_stop(&timer_);
    uv_read_stop(stream_);
    if (!server_.config().hand_off) {
      answer(error_response(503, "dispatcher_unavailable", "request " + request_.path + ": this serve has no dispatcher"), true);
      return;
    }
    dispatch::RequestHead head;
    head.method = request_.method;
    head.target = request_.target;
    head.version = parser_->http10() ? "HTTP/1.0" : "HTTP/1.1";
    for (const appliance::http::Header& h : request_.headers) head.headers.push_back({h.name, h.value});
    std::string already = std::move(pending_);
    pending_.clear();
    server_.config().hand_off(stream_, id, std::move(head), std::move(already),
                                      [this](uv_stream_t*, std::string leftover, bool keep_alive) {
                                        stream_->data = this;
                                        if (!keep_alive || closing_) {
                                          close();
                                          return;
                                        }
                                        pending_ = std::move(leftover);
                                        next_request();
                                        if (uv_read_start(stream_, on_alloc, on_read) != 0) {
                                          close();
                                          return;
                                        }
                                        process();
                                      });
  }

  void dispatch() {
    uv_timer_stop(&timer_);
    state_ = State::kAnswering;
    Reply reply = server_.config().route(request_);
    // The body may hold a secret (grant add): wiped once the route has taken what it needs.
    explicit_bzero(request_.body.data(), request_.body.size());
    switch (reply.kind) {
      case Reply::Kind::kNow:
        answer(reply.now, !keep_alive_);
        return;
      case Reply::Kind::kLater: {
        auto* job = new Job{};
        job->work.data = job;
        job->connection = this;
        job->run = std::move(reply.later);
        ++jobs_;
        uv_read_stop(stream_);
        uv_queue_work(stream_->loop, &job->work, on_work, on_work_done);
        return;
      }
      case Reply::Kind::kEvents:
        state_ = State::kEvents;
        operation_ = reply.operation;
        reader_ = true;
        server_.readers().push_back(this);
        write(head_of(200, "text/event-stream", 0, true, false), false);
        pump();
        return;
    }
  }

  struct Job {
    uv_work_t work{};
    Connection* connection = nullptr;
    std::function<Response()> run;
    Response out;
  };
  static void on_work(uv_work_t* w) noexcept {
    auto* job = static_cast<Job*>(w->data);
    try {
      job->out = job->run();
    } catch (const std::exception& e) {
      job->out = error_response(500, "internal", std::string("serve: ") + e.what());
    }
  }
  static void on_work_done(uv_work_t* w, int) noexcept {
    auto* job = static_cast<Job*>(w->data);
    Connection* c = job->connection;
    --c->jobs_;
    if (c->closing_) {
      delete job;
      c->maybe_free();
      return;
    }
    c->answer(job->out, !c->keep_alive_);
    delete job;
    if (!c->closing_ && uv_read_start(c->stream_, on_alloc, on_read) != 0) c->close();
  }

  void answer(const Response& r, bool then_close) {
    if (server_.config().answered) server_.config().answered(r.status);
    const bool text = !r.content_type.empty();
    const std::string body = text ? r.text : json_text(r.body);
    write(head_of(r.status, text ? r.content_type : "application/json", body.size(), then_close) +
              body,
          then_close);
    if (then_close) return;
    next_request();
    process();
  }

  struct WriteReq {
    uv_write_t req{};
    std::string data;
    bool close = false;
    Connection* connection = nullptr;  // not the handle's data: the dispatcher may hold that meanwhile
  };
  void write(std::string data, bool then_close) {
    if (closing_) return;
    auto* w = new WriteReq{};
    w->data = std::move(data);
    w->close = then_close;
    w->connection = this;
    w->req.data = w;
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    if (uv_write(&w->req, stream_, &buf, 1, on_written) != 0) {
      delete w;
      close();
      return;
    }
    if (then_close) {
      uv_read_stop(stream_);
      uv_timer_stop(&timer_);
    }
  }
  static void on_written(uv_write_t* req, int status) noexcept {
    auto* w = static_cast<WriteReq*>(req->data);
    Connection* c = w->connection;
    const bool close_now = w->close || status < 0;
    delete w;
    if (close_now && c != nullptr) c->close();
  }

  static void on_stream_closed(uv_handle_t* h) noexcept {
    auto* c = static_cast<Connection*>(h->data);
    if (h->type == UV_TCP) {
      delete reinterpret_cast<uv_tcp_t*>(h);
    } else {
      delete reinterpret_cast<uv_pipe_t*>(h);
    }
    c->stream_ = nullptr;
    --c->closes_;
    c->maybe_free();
  }
  static void on_timer_closed(uv_handle_t* h) noexcept {
    auto* c = static_cast<Connection*>(h->data);
    --c->closes_;
    c->maybe_free();
  }
  void maybe_free() {
    if (closes_ == 0 && jobs_ == 0) {
      server_.forget(this);
      delete this;
    }
  }

  Server& server_;
  uv_stream_t* stream_;
  uv_timer_t timer_{};
  bool tcp_;
  State state_ = State::kHead;
  appliance::http::IgnoreBody ignore_;
  std::unique_ptr<appliance::http::MessageParser> parser_;
  std::string pending_;
  Request request_;
  std::size_t body_left_ = 0;
  bool keep_alive_ = true;
  bool closing_ = false;
  int closes_ = 0;
  int jobs_ = 0;
  bool reader_ = false;
  std::string operation_;
  std::size_t next_seq_ = 0;
};

// ---- the server ----

Server::Server(ServerConfig config) : config_(std::move(config)) {}
Server::~Server() = default;

Result<void> Server::listen() {
  struct stat st{};
  if (config_.activated_fd >= 0) {
    // Socket activation: the manager made and owns the socket file (activation.h checked it).
    pipe_ = new uv_pipe_t{};
    uv_pipe_init(config_.loop, pipe_, 0);
    pipe_->data = this;
    int rc = uv_pipe_open(pipe_, config_.activated_fd);
    if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(pipe_), 64, on_unix);
    if (rc != 0) {
      return fail(Code::kInternal, "serve: listen on the activated socket " + config_.socket_path +
                                       ": " + uv_strerror(rc));
    }
  } else if (lstat(config_.socket_path.c_str(), &st) == 0) {
    // The socket: refused when something that is not a stale socket of ours holds the path.
    if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
      return fail(Code::kUsage, "serve: " + config_.socket_path + " exists and is not a socket of this user");
    }
    // A socket nobody answers on is a dead serve's; one that answers is another serve's.
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, config_.socket_path.c_str(), sizeof addr.sun_path - 1);
    const bool alive = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (alive) return fail(Code::kSpaceBusy, "serve: another spacectl serve answers on " + config_.socket_path);
    if (unlink(config_.socket_path.c_str()) != 0) {
      return fail(Code::kInternal, "serve: unlink the stale socket " + config_.socket_path + ": " + std::strerror(errno));
    }
  }
  if (config_.activated_fd < 0) {
    if (config_.socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return fail(Code::kUsage, "serve: the socket path " + config_.socket_path +
                                    " is too long for a unix socket");
    }
    pipe_ = new uv_pipe_t{};
    uv_pipe_init(config_.loop, pipe_, 0);
    pipe_->data = this;
    // Made 0600 from the start: the umask covers the window between bind and chmod.
    const mode_t old = umask(0177);
    int rc = uv_pipe_bind(pipe_, config_.socket_path.c_str());
    umask(old);
    if (rc == 0) rc = chmod(config_.socket_path.c_str(), 0600) == 0 ? 0 : -errno;
    if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(pipe_), 64, on_unix);
    if (rc != 0) {
      return fail(Code::kInternal,
                  "serve: listen on " + config_.socket_path + ": " + uv_strerror(rc));
    }
  }
  int rc = 0;
  if (!config_.tcp_host.empty()) {
    tcp_ = new uv_tcp_t{};
    uv_tcp_init(config_.loop, tcp_);
    tcp_->data = this;
    sockaddr_in addr{};
    rc = uv_ip4_addr(config_.tcp_host.c_str(), config_.tcp_port, &addr);
    if (rc == 0) rc = uv_tcp_bind(tcp_, reinterpret_cast<const sockaddr*>(&addr), 0);
    if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(tcp_), 64, on_tcp);
    if (rc != 0) {
      return fail(Code::kUsage, "serve: listen on " + config_.tcp_host + ":" + std::to_string(config_.tcp_port) + ": " + uv_strerror(rc));
    }
    sockaddr_storage bound{};
    int len = sizeof bound;
    if (uv_tcp_getsockname(tcp_, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      bound_port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    }
  }
  return {};
}

void Server::on_unix(uv_stream_t* s, int status) noexcept {
  if (status == 0) static_cast<Server*>(s->data)->accept(s, false);
}
void Server::on_tcp(uv_stream_t* s, int status) noexcept {
  if (status == 0) static_cast<Server*>(s->data)->accept(s, true);
}

void Server::accept(uv_stream_t* listener, bool tcp) {
  uv_stream_t* client = tcp ? reinterpret_cast<uv_stream_t*>(new uv_tcp_t{}) : reinterpret_cast<uv_stream_t*>(new uv_pipe_t{});
  if (tcp) {
    uv_tcp_init(config_.loop, reinterpret_cast<uv_tcp_t*>(client));
  } else {
    uv_pipe_init(config_.loop, reinterpret_cast<uv_pipe_t*>(client), 0);
  }
  auto drop = [](uv_handle_t* h) noexcept {
    if (h->type == UV_TCP) {
      delete reinterpret_cast<uv_tcp_t*>(h);
    } else {
      delete reinterpret_cast<uv_pipe_t*>(h);
    }
  };
  if (uv_accept(listener, client) != 0 || all_.size() >= kMaxConnections || closed_) {
    uv_close(reinterpret_cast<uv_handle_t*>(client), drop);
    return;
  }
  if (!tcp) {
    // Only this user: the socket is 0600, and the peer's credentials must say so too.
    uv_os_fd_t fd = -1;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(client), &fd) != 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        cred.uid != geteuid()) {
      uv_close(reinterpret_cast<uv_handle_t*>(client), drop);
      return;
    }
  }
  auto* c = new Connection(*this, client, tcp);
  all_.push_back(c);
  c->start();
}

void Server::forget(Connection* c) {
  all_.remove(c);
  readers_.remove(c);
  if (closed_ && all_.empty() && closing_ == 0) {
    auto done = std::move(closed_);
    closed_ = [] {};
    done();
  }
}

void Server::push_events() {
  std::list<Connection*> copy = readers_;
  for (Connection* c : copy) c->pump();
}

void Server::close_all(std::function<void()> closed) {
  closed_ = std::move(closed);
  auto listener_closed = [](uv_handle_t* h) noexcept {
    auto* self = static_cast<Server*>(h->data);
    if (h->type == UV_TCP) {
      delete reinterpret_cast<uv_tcp_t*>(h);
    } else {
      delete reinterpret_cast<uv_pipe_t*>(h);
    }
    if (--self->closing_ == 0 && self->all_.empty() && self->closed_) {
      auto done = std::move(self->closed_);
      self->closed_ = [] {};
      done();
    }
  };
  if (pipe_ != nullptr) {
    ++closing_;
    uv_close(reinterpret_cast<uv_handle_t*>(pipe_), listener_closed);
    pipe_ = nullptr;
    // An activated socket's file belongs to the manager, which keeps listening on it.
    if (config_.activated_fd < 0) (void)unlink(config_.socket_path.c_str());
  }
  if (tcp_ != nullptr) {
    ++closing_;
    uv_close(reinterpret_cast<uv_handle_t*>(tcp_), listener_closed);
    tcp_ = nullptr;
  }
  // A stream the dispatcher holds comes back through its Giveback (Dispatcher::close_all first).
  std::list<Connection*> copy = all_;
  for (Connection* c : copy) {
    if (!c->handed_off()) c->close();
  }
}

}  // namespace controller::serve
