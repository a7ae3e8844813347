#include "tests/loop/fixture.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include "appliance/control/server.h"
#include "appliance/corridor/corridor.h"
#include "appliance/loop/handle.h"
#include "appliance/window/window.h"
#include "policy/address.h"
#include "tests/support/loopback.h"

namespace gk_loop_test {

using appliance::serve::Resolution;

ScriptedResolver::ScriptedResolver(uv_loop_t* loop) {
  uv_timer_init(loop, &timer_);
  timer_.data = this;
}

ScriptedResolver::~ScriptedResolver() = default;

void ScriptedResolver::answer(const std::string& name, std::vector<std::string> addresses) {
  Resolution r;
  r.ok = true;
  for (const std::string& a : addresses) r.addresses.push_back(policy::parse_answer(a).value());
  script_[name] = std::move(r);
}

void ScriptedResolver::fail(const std::string& name, const std::string& detail) {
  script_[name] = Resolution{false, detail, {}};
}

appliance::serve::NameResolver::Query* ScriptedResolver::resolve(const std::string& name,
                                                                 Callback callback, void* owner) {
  asked.push_back(name);
  auto q = std::make_unique<Scripted>();
  q->name = name;
  q->callback = callback;
  q->owner = owner;
  Query* handle = q.get();
  pending_.push_back(std::move(q));
  if (!held_ && !closed_) uv_timer_start(&timer_, on_turn, 0, 0);
  return handle;
}

void ScriptedResolver::cancel(Query* query) {
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->get() == query) {
      pending_.erase(it);
      ++cancelled;
      return;
    }
  }
}

void ScriptedResolver::release() {
  held_ = false;
  if (!closed_) uv_timer_start(&timer_, on_turn, 0, 0);
}

void ScriptedResolver::on_turn(uv_timer_t* timer) noexcept {
  auto* self = static_cast<ScriptedResolver*>(timer->data);
  while (!self->pending_.empty()) {
    std::unique_ptr<Scripted> q = std::move(self->pending_.front());
    self->pending_.pop_front();
    const auto found = self->script_.find(q->name);
    Resolution r =
        found != self->script_.end() ? found->second : Resolution{false, "ENOTFOUND", {}};
    q->callback(q->owner, std::move(r));
  }
}

void ScriptedResolver::close() {
  if (closed_) return;
  closed_ = true;
  uv_close(appliance::loop::as_handle(&timer_), nullptr);
}

void LoopFixture::SetUp() {
  // A write to a peer that already closed must be an error value, never a signal (as in serve).
  std::signal(SIGPIPE, SIG_IGN);
  ASSERT_EQ(uv_loop_init(&loop_), 0);
  appliance::serve::ServeOptions options;
  options.bind = "127.0.0.1";
  ctx_ = std::make_unique<appliance::serve::ServeContext>(&loop_, options);
  resolver_ = std::make_unique<ScriptedResolver>(&loop_);
  ctx_->resolver = resolver_.get();
  pool_ = std::make_unique<appliance::serve::UpstreamPool>(*ctx_, options.max_upstream_sockets);
  ctx_->upstream_pool = pool_.get();
  using appliance::serve::TcpListener;
  corridor_ = std::make_unique<TcpListener>(*ctx_, policy::Listener::kCorridor,
                                            options.max_corridor_sockets,
                                            appliance::serve::make_corridor_connection);
  window_ =
      std::make_unique<TcpListener>(*ctx_, policy::Listener::kWindow, options.max_window_sockets,
                                    appliance::serve::make_window_connection);
  control_ =
      std::make_unique<TcpListener>(*ctx_, policy::Listener::kControl, options.max_control_sockets,
                                    appliance::serve::make_control_connection);
  ctx_->listeners = {corridor_.get(), window_.get(), control_.get()};
  const policy::Address loopback = policy::Address::v4(0x7f000001);
  auto c = corridor_->listen_on(loopback, 0);
  auto w = window_->listen_on(loopback, 0);
  auto k = control_->listen_on(loopback, 0);
  ASSERT_TRUE(c && w && k);
  corridor_port_ = c.value();
  window_port_ = w.value();
  control_port_ = k.value();
  ctx_->own_ports = {corridor_port_, window_port_, control_port_};
}

void LoopFixture::TearDown() {
  // What serve does at SIGTERM: stop accepting, close every connection, the pool, the resolver
  // and the journal's timers; then the loop must end with nothing left open.
  for (auto* l : {corridor_.get(), window_.get(), control_.get()}) {
    if (l != nullptr) l->shut_down();
  }
  if (pool_) pool_->shut_down();
  if (resolver_) resolver_->close();
  if (ctx_) ctx_->journal.close();
  const bool quiet = run_until([&] { return uv_loop_alive(&loop_) == 0; }, 5000);
  EXPECT_TRUE(quiet) << "the loop still has active handles or requests after shutdown";
  const int rc = uv_loop_close(&loop_);
  EXPECT_EQ(rc, 0) << "a handle was left open";
  if (rc != 0) {
    // Close what is left so the next test does not inherit it (the failure is recorded).
    uv_walk(
        &loop_,
        [](uv_handle_t* h, void*) noexcept {
          if (uv_is_closing(h) == 0) uv_close(h, nullptr);
        },
        nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  }
  corridor_.reset();
  window_.reset();
  control_.reset();
  pool_.reset();
  resolver_.reset();
  ctx_.reset();
}

bool LoopFixture::run_until(const std::function<bool()>& done, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    uv_run(&loop_, UV_RUN_NOWAIT);
    usleep(200);
  }
  return true;
}

// The listen backlog takes the connection before the loop accepts it.
int LoopFixture::connect_to(std::uint16_t port) { return gk_test::connect_loopback(port, true); }

Reply LoopFixture::exchange(std::uint16_t port, const std::string& request, int ms) {
  Reply reply;
  const int fd = connect_to(port);
  if (fd < 0) return reply;
  std::size_t sent = 0;
  run_until(
      [&] {
        if (sent < request.size()) {
          const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
          if (n > 0) sent += static_cast<std::size_t>(n);
        }
        char buf[4096];
        for (;;) {
          const ssize_t n = ::read(fd, buf, sizeof buf);
          if (n > 0) {
            reply.bytes.append(buf, static_cast<std::size_t>(n));
            continue;
          }
          if (n == 0 || (n < 0 && errno != EAGAIN)) reply.closed = true;
          break;
        }
        return reply.closed;
      },
      ms);
  ::close(fd);
  // Let the gatekeeper see the close of a socket it lingers on.
  run_until([] { return false; }, 5);
  return reply;
}

std::string LoopFixture::control(const std::string& method, const std::string& path,
                                 const std::string& body) {
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!body.empty()) {
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  return exchange(control_port_, request).bytes;
}

bool LoopFixture::journalled(const std::string& decision) {
  return ctx_->journal.json().find("\"decision\":\"" + decision + "\"") != std::string::npos;
}

}  // namespace gk_loop_test
