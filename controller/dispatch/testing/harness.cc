#include "controller/dispatch/testing/harness.h"

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <optional>
#include <string_view>

#include "appliance/http/parser.h"
#include "policy/number.h"

namespace controller::dispatch::testing {

using appliance::http::MessageParser;
using controller::dispatch::Dispatcher;
using controller::dispatch::DispatcherConfig;
using controller::dispatch::HeaderField;
using controller::dispatch::RequestHead;

namespace {

struct Conn : appliance::http::BodySink {
  uv_tcp_t tcp{};
  Acceptor::Impl* owner = nullptr;
  std::string buf;
  std::unique_ptr<MessageParser> parser;
  bool on_head() override { return true; }
  void on_body(const char*, std::size_t) override {}
  void on_complete() override {}
};

}  // namespace

struct Acceptor::Impl {
  uv_loop_t loop{};
  uv_tcp_t listener{};
  uv_async_t stop{};
  std::unique_ptr<Dispatcher> dispatcher;
  Acceptor* self = nullptr;
  int open_conns = 0;

  static void on_conn(uv_stream_t* server, int status) noexcept {
    auto* impl = static_cast<Impl*>(server->data);
    if (status != 0) return;
    auto* c = new Conn;
    c->owner = impl;
    uv_tcp_init(&impl->loop, &c->tcp);
    c->tcp.data = c;
    ++impl->open_conns;
    if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) return close_conn(c);
    c->parser = std::make_unique<MessageParser>(MessageParser::Kind::kRequest, *c);
    start_reading(c);
  }
  static void start_reading(Conn* c) {
    const int rc = uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t*, std::size_t s, uv_buf_t* b) noexcept {
          *b = uv_buf_init(new char[s], static_cast<unsigned>(s));
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* b) noexcept {
          auto* conn = static_cast<Conn*>(s->data);
          if (n > 0) conn->buf.append(b->base, static_cast<std::size_t>(n));
          delete[] b->base;
          if (n < 0) return close_conn(conn);
          if (n > 0) process(conn);
        });
    if (rc != 0) close_conn(c);  // a connection that cannot be read is dropped
  }
  static void close_conn(Conn* c) {
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) noexcept {
      auto* conn = static_cast<Conn*>(h->data);
      --conn->owner->open_conns;
      delete conn;
    });
  }
  // Parses one head from buf; hands a space request to the dispatcher.
  static void process(Conn* c) {
    if (c->buf.empty()) return;
    const MessageParser::Feed f = c->parser->feed(c->buf.data(), c->buf.size());
    if (f.status == MessageParser::Status::kError) return close_conn(c);
    if (f.status != MessageParser::Status::kHeadDone) {
      c->buf.erase(0, f.consumed);
      return;
    }
    RequestHead head;
    head.method = std::string(c->parser->method_name());
    head.target = c->parser->url();
    head.version = c->parser->http10() ? "HTTP/1.0" : "HTTP/1.1";
    for (const auto& h : c->parser->headers()) head.headers.push_back(HeaderField{h.name, h.value});
    std::string rest = c->buf.substr(f.consumed);
    c->buf.clear();
    c->parser = std::make_unique<MessageParser>(MessageParser::Kind::kRequest, *c);
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&c->tcp));
    const std::string prefix = "/api/spaces/";
    if (head.target.rfind(prefix, 0) != 0) return close_conn(c);
    std::string id = head.target.substr(prefix.size());
    id = id.substr(0, id.find_first_of("/?"));
    Impl* impl = c->owner;
    impl->dispatcher->take(reinterpret_cast<uv_stream_t*>(&c->tcp), id, std::move(head),
                           std::move(rest),
                           [impl](uv_stream_t* client, std::string leftover, bool keep) {
                             auto* conn = static_cast<Conn*>(client->data);
                             if (!keep) {
                               ++impl->self->givebacks_close;
                               return close_conn(conn);
                             }
                             ++impl->self->givebacks_keep;
                             conn->buf = std::move(leftover);
                             start_reading(conn);
                             process(conn);
                           });
  }
};

namespace {

// An acceptor that cannot listen on loopback leaves every test of it meaningless: stop there,
// naming the call.
void must(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "dispatch test acceptor: %s: %s\n", what, uv_strerror(rc));
    std::abort();
  }
}

}  // namespace

Acceptor::Acceptor(std::function<void(DispatcherConfig&)> configure)
    : impl_(std::make_unique<Impl>()) {
  impl_->self = this;
  must(uv_loop_init(&impl_->loop), "uv_loop_init");
  DispatcherConfig config;
  configure(config);
  config.loop = &impl_->loop;
  impl_->dispatcher = std::make_unique<Dispatcher>(std::move(config));
  uv_tcp_init(&impl_->loop, &impl_->listener);
  impl_->listener.data = impl_.get();
  sockaddr_in sin{};
  uv_ip4_addr("127.0.0.1", 0, &sin);
  must(uv_tcp_bind(&impl_->listener, reinterpret_cast<const sockaddr*>(&sin), 0), "uv_tcp_bind");
  must(uv_listen(reinterpret_cast<uv_stream_t*>(&impl_->listener), 128, &Impl::on_conn),
       "uv_listen");
  int len = sizeof sin;
  must(uv_tcp_getsockname(&impl_->listener, reinterpret_cast<sockaddr*>(&sin), &len),
       "uv_tcp_getsockname");
  port_ = ntohs(sin.sin_port);
  uv_async_init(&impl_->loop, &impl_->stop, [](uv_async_t* a) noexcept {
    auto* impl = static_cast<Impl*>(a->data);
    uv_close(reinterpret_cast<uv_handle_t*>(&impl->listener), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
    impl->dispatcher->close_all([] {});
  });
  impl_->stop.data = impl_.get();
  thread_ = std::thread([this] { uv_run(&impl_->loop, UV_RUN_DEFAULT); });
}

bool Acceptor::stop() {
  if (stopped_) return true;
  stopped_ = true;
  uv_async_send(&impl_->stop);
  thread_.join();
  // Client connections the tests left open: close them, then the loop must be empty.
  uv_walk(
      &impl_->loop,
      [](uv_handle_t* h, void*) noexcept {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      },
      nullptr);
  uv_run(&impl_->loop, UV_RUN_DEFAULT);
  impl_->dispatcher.reset();
  return uv_loop_close(&impl_->loop) == 0;
}

Acceptor::~Acceptor() { stop(); }

std::string Answer::header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (strcasecmp(n.c_str(), name.c_str()) == 0) return v;
  }
  return {};
}
bool Answer::has(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (strcasecmp(n.c_str(), name.c_str()) == 0) return true;
  }
  return false;
}

std::string code_of(const Answer& a) {
  const std::size_t at = a.body.find("\"code\":\"");
  if (at == std::string::npos) return {};
  return a.body.substr(at + 8, a.body.find('"', at + 8) - at - 8);
}

Client::Client(int port, int rcvbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (rcvbuf > 0) (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}
Client::Client(const std::string& unix_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, unix_path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}
bool Client::send(const std::string& bytes) {
  std::string_view d = bytes;
  while (!d.empty()) {
    const ssize_t n = ::send(fd_, d.data(), d.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    d.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}
// Waits up to timeout_ms for the socket to become readable. A signal (the SIGCHLD of a bridge
// the dispatcher killed, delivered to this thread) interrupts poll with EINTR: that is no answer
// and no timeout, so the wait goes on until its deadline.
bool Client::readable_within(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left < 0 ? 0 : left));
    if (ready > 0) return true;
    if (ready == 0 || errno != EINTR) return false;
  }
}
// One recv after poll said readable; false at end of stream or on an error (EINTR retried).
ssize_t Client::receive(char* into, std::size_t size) {
  for (;;) {
    const ssize_t n = ::recv(fd_, into, size, 0);
    if (n >= 0 || errno != EINTR) return n;
  }
}
bool Client::fill(int timeout_ms) {
  if (!readable_within(timeout_ms)) return false;
  char b[65536];
  const ssize_t n = receive(b, sizeof b);
  if (n <= 0) return false;
  buf_.append(b, static_cast<std::size_t>(n));
  return true;
}
void Client::close_write() { ::shutdown(fd_, SHUT_WR); }
bool Client::closed_within(int timeout_ms) {
  for (;;) {
    if (!readable_within(timeout_ms)) return false;
    char b[65536];
    const ssize_t n = receive(b, sizeof b);
    if (n <= 0) return true;
    buf_.append(b, static_cast<std::size_t>(n));
  }
}

Answer Client::read_answer(bool head_request, int timeout_ms) {
  struct Sink : appliance::http::BodySink {
    Answer* a;
    bool on_head() override { return true; }
    void on_body(const char* d, std::size_t n) override { a->body.append(d, n); }
    void on_complete() override {}
  } sink;
  Answer a;
  sink.a = &a;
  MessageParser p(MessageParser::Kind::kResponse, sink);
  p.set_head_request(head_request);
  for (;;) {
    if (!buf_.empty()) {
      const MessageParser::Feed f = p.feed(buf_.data(), buf_.size());
      if (f.status == MessageParser::Status::kError) return a;
      buf_.erase(0, f.consumed);
      if (f.status == MessageParser::Status::kComplete) break;
    }
    if (!fill(timeout_ms)) {
      if (p.finish().status != MessageParser::Status::kComplete) return a;
      break;
    }
  }
  a.ok = true;
  a.status = p.status_code();
  for (const auto& h : p.headers()) a.headers.emplace_back(h.name, h.value);
  return a;
}

Answer Client::read_upgrade(int timeout_ms) {
  Answer a;
  std::size_t end = std::string::npos;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill(timeout_ms)) return a;
  }
  const std::string head = buf_.substr(0, end + 2);
  buf_.erase(0, end + 4);
  if (head.size() < 12 || head.compare(0, 9, "HTTP/1.1 ") != 0) return a;
  // Three digits and a space, or no answer: "1x1" is not status 1.
  const std::optional<int> status = policy::parse_number<int>(std::string_view(head).substr(9, 3));
  if (!status || *status < 100 || head[12] != ' ') return a;
  a.status = *status;
  std::size_t at = head.find("\r\n") + 2;
  while (at < head.size()) {
    const std::size_t e = head.find("\r\n", at);
    const std::string line = head.substr(at, e - at);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.erase(0, 1);
      a.headers.emplace_back(line.substr(0, colon), v);
    }
    at = e + 2;
  }
  a.ok = true;
  return a;
}

std::string Client::read_bytes(std::size_t n, int timeout_ms) {
  while (buf_.size() < n && fill(timeout_ms)) {
  }
  std::string out = buf_.substr(0, n);
  buf_.erase(0, out.size());
  return out;
}

std::string get(const std::string& target, const std::string& extra, const std::string& method) {
  return method + " " + target + " HTTP/1.1\r\nHost: app.test\r\n" + extra + "\r\n";
}

std::string ws_upgrade(const std::string& target) {
  return "GET " + target +
         " HTTP/1.1\r\nHost: app.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
         "Origin: http://app.test\r\nCookie: user=secret\r\n\r\n";
}

std::string ws_frame(int opcode, const std::string& payload) {
  std::string f(1, static_cast<char>(0x80 | opcode));
  const unsigned char mask[4] = {0x11, 0x22, 0x33, 0x44};
  if (payload.size() < 126) {
    f += static_cast<char>(0x80 | payload.size());
  } else if (payload.size() < 65536) {
    f += static_cast<char>(0x80 | 126);
    f += static_cast<char>(payload.size() >> 8);
    f += static_cast<char>(payload.size() & 0xff);
  } else {
    f += static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i) {
      f += static_cast<char>((static_cast<std::uint64_t>(payload.size()) >> (i * 8)) & 0xff);
    }
  }
  f.append(reinterpret_cast<const char*>(mask), 4);
  for (std::size_t i = 0; i < payload.size(); ++i) f += static_cast<char>(payload[i] ^ mask[i % 4]);
  return f;
}

Frame read_frame(Client& c, int timeout_ms) {
  Frame fr;
  const std::string h = c.read_bytes(2, timeout_ms);
  if (h.size() != 2) return fr;
  std::uint64_t len = static_cast<unsigned char>(h[1]) & 0x7f;
  if (len == 126) {
    const std::string l = c.read_bytes(2, timeout_ms);
    if (l.size() != 2) return fr;
    len = (static_cast<unsigned char>(l[0]) << 8) | static_cast<unsigned char>(l[1]);
  } else if (len == 127) {
    const std::string l = c.read_bytes(8, timeout_ms);
    if (l.size() != 8) return fr;
    len = 0;
    for (char ch : l) len = (len << 8) | static_cast<unsigned char>(ch);
  }
  fr.payload = c.read_bytes(len, timeout_ms);
  fr.ok = fr.payload.size() == len;
  fr.opcode = static_cast<unsigned char>(h[0]) & 0x0f;
  return fr;
}

Child start_child(const std::vector<std::string>& argv) {
  Child c;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::dup2(p[1], 1);
    ::setpgid(0, 0);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  ::close(p[1]);
  char ch = 0;
  pollfd pf{p[0], POLLIN, 0};
  while (::poll(&pf, 1, 10000) > 0 && ::read(p[0], &ch, 1) == 1 && ch != '\n') c.first_line += ch;
  ::close(p[0]);
  return c;
}

void kill_child(Child& c) {
  if (c.pid <= 0) return;
  ::kill(-c.pid, SIGKILL);
  ::kill(c.pid, SIGKILL);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  c.pid = -1;
}

}  // namespace controller::dispatch::testing
