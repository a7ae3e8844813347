#include "appliance/serve_main.h"

#include <csignal>
#include <cstdio>
#include <memory>

#include "appliance/control/server.h"
#include "appliance/corridor/corridor.h"
#include "appliance/dns/resolver.h"
#include "appliance/loop/handle.h"
#include "appliance/serve/confine.h"
#include "appliance/serve/context.h"
#include "appliance/serve/interfaces.h"
#include "appliance/serve/listener.h"
#include "appliance/tls/tls_client.h"
#include "appliance/window/upstream.h"
#include "appliance/window/window.h"

namespace appliance::serve {

const std::vector<policy::Address>& ServeContext::own_addresses() {
  const std::uint64_t now = uv_now(loop);
  if (!own_cache_valid || now - own_cache_at >= 1000) {
    auto fresh = interface_addresses();
    if (fresh) {
      own_cache = std::move(fresh.value());
      own_cache_valid = true;
      own_cache_at = now;
    }
  }
  return own_cache;
}

ListenerGauges ServeContext::gauges() const {
  ListenerGauges g;
  for (std::size_t i = 0; i < kListenerCount; ++i) {
    g.open_sockets[i] = listeners[i] == nullptr ? 0 : listeners[i]->open_sockets();
  }
  g.open_tunnels = open_tunnels;
  g.dns_outstanding = resolver == nullptr ? 0 : resolver->outstanding();
  return g;
}

namespace {

struct Runtime {
  ServeContext* ctx = nullptr;
  std::unique_ptr<Resolver> resolver;
  std::unique_ptr<UpstreamPool> upstream_pool;  // the window's upstream connections
  std::unique_ptr<TcpListener> corridor;
  std::unique_ptr<TcpListener> window;
  std::unique_ptr<TcpListener> control;
  uv_signal_t sigterm{};
  uv_signal_t sigint{};
  bool stopping = false;
};

int startup_problem(const std::string& what) {
  std::fprintf(stderr, "gatekeeper: %s\n", what.c_str());
  return 2;
}

std::string endpoint_text(const policy::Address& address, std::uint16_t port) {
  const std::string a = address.to_string();
  return (address.is_v4() ? a : "[" + a + "]") + ":" + std::to_string(port);
}

void shut_down(Runtime& rt) {
  if (rt.stopping) return;
  rt.stopping = true;
  // Stop accepting first, then close every connection and tunnel, then the resolver and timers.
  for (TcpListener* l : {rt.corridor.get(), rt.window.get(), rt.control.get()}) {
    if (l != nullptr) l->shut_down();
  }
  if (rt.upstream_pool) rt.upstream_pool->shut_down();
  if (rt.resolver) rt.resolver->close();
  rt.ctx->journal.close();
  uv_close(loop::as_handle(&rt.sigterm), nullptr);
  uv_close(loop::as_handle(&rt.sigint), nullptr);
}

void on_signal(uv_signal_t* handle, int) noexcept {
  shut_down(*static_cast<Runtime*>(handle->data));
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(std::string(kServeUsage).c_str(), stdout);
      return 0;
    }
    if (a == "--print-seccomp") {
      std::fputs(seccomp_table_text().c_str(), stdout);
      return 0;
    }
  }
  std::vector<std::string> serve_args = args;
#ifdef GATEKEEPER_TEST_BUILD
  const bool test_forbidden_syscall = take_test_forbidden_syscall_flag(serve_args);
  if (!take_test_descriptor_limit(serve_args)) {
    return startup_problem("--test-descriptor-limit needs 0..999999");
  }
#endif
  bool unsafe_no_confinement = false;
#if defined(GATEKEEPER_TEST_BUILD) && defined(GK_SANITIZER_BUILD)
  unsafe_no_confinement = take_unsafe_test_no_confinement_flag(serve_args);
  if (unsafe_no_confinement) {
    std::fputs(
        "gatekeeper: UNSAFE: --unsafe-test-no-confinement: no seccomp filter, capabilities "
        "or limits are applied (sanitizer test build, leak checks only)\n",
        stderr);
  }
#endif
  auto parsed = parse_serve_options(serve_args);
  if (!parsed) return startup_problem(parsed.error().message + " (see gatekeeper serve --help)");
  ServeOptions options = std::move(parsed.value());

  auto local =
      options.bind ? own_bind_address(*options.bind) : address_in_subnet(*options.inner_subnet);
  if (!local) return startup_problem(local.error().message);
  const policy::Address listen_address = local.value();
  const policy::Address loopback = policy::Address::v4(0x7f000001);

  // The window's CA bundle is opened now, before confinement forbids opening files (it is read
  // when the first TLS session starts).
  auto tls = TlsContext::open(options.ca_file);
  if (!tls) return startup_problem(tls.error().message);

  // A write to a peer that already closed must be an error value, never a signal.
  std::signal(SIGPIPE, SIG_IGN);

  uv_loop_t loop;
  if (int rc = uv_loop_init(&loop); rc != 0) {
    return startup_problem(std::string("uv_loop_init: ") + uv_err_name(rc));
  }
  int exit_code = 0;
  {
    ServeContext ctx(&loop, options);
    Runtime rt;
    rt.ctx = &ctx;
    auto resolver = Resolver::create(&loop, options.dns_servers);
    if (!resolver) {
      exit_code = startup_problem(resolver.error().message);
    } else {
      rt.resolver = std::move(resolver.value());
      ctx.resolver = rt.resolver.get();
      ctx.tls = tls.value().get();
      rt.upstream_pool = std::make_unique<UpstreamPool>(ctx, options.max_upstream_sockets);
      ctx.upstream_pool = rt.upstream_pool.get();
      ctx.own_addresses();
      rt.corridor = std::make_unique<TcpListener>(
          ctx, policy::Listener::kCorridor, options.max_corridor_sockets, make_corridor_connection);
      rt.window = std::make_unique<TcpListener>(ctx, policy::Listener::kWindow,
                                                options.max_window_sockets, make_window_connection);
      rt.control = std::make_unique<TcpListener>(
          ctx, policy::Listener::kControl, options.max_control_sockets, make_control_connection);
      ctx.listeners = {rt.corridor.get(), rt.window.get(), rt.control.get()};
      // Bind order: corridor, window, control last (an answer on /health means all are up).
      auto corridor_port = rt.corridor->listen_on(listen_address, options.corridor_port);
      policy::Result<std::uint16_t> window_port = policy::Error{"not bound"};
      policy::Result<std::uint16_t> control_port = policy::Error{"not bound"};
      if (corridor_port) window_port = rt.window->listen_on(listen_address, options.window_port);
      if (corridor_port && window_port) {
        control_port = rt.control->listen_on(loopback, options.control_port);
      }
      if (corridor_port && window_port && control_port) {
        ctx.own_ports = {corridor_port.value(), window_port.value(), control_port.value()};
      }
      uv_signal_init(&loop, &rt.sigterm);
      uv_signal_init(&loop, &rt.sigint);
      rt.sigterm.data = &rt;
      rt.sigint.data = &rt;
      if (!corridor_port || !window_port || !control_port) {
        const policy::Error& e = !corridor_port ? corridor_port.error()
                                 : !window_port ? window_port.error()
                                                : control_port.error();
        exit_code = startup_problem(e.message);
        shut_down(rt);
      } else {
        // Without its SIGTERM handler the place could not stop the gatekeeper cleanly.
        int rc = uv_signal_start(&rt.sigterm, on_signal, SIGTERM);
        if (rc == 0) rc = uv_signal_start(&rt.sigint, on_signal, SIGINT);
        if (rc != 0) {
          exit_code = startup_problem(std::string("uv_signal_start: ") + uv_err_name(rc));
          shut_down(rt);
        }
      }
      // Self-confinement: after every bind and file read above, before the ready line
      // and the first accept (uv_run).
      if (exit_code == 0 && !unsafe_no_confinement) {
        if (auto confined = confine(options); !confined) {
          exit_code = startup_problem(confined.error().message);
          shut_down(rt);
        }
      }
      if (exit_code == 0) {
        std::printf("gatekeeper: ready corridor=%s window=%s control=%s\n",
                    endpoint_text(listen_address, corridor_port.value()).c_str(),
                    endpoint_text(listen_address, window_port.value()).c_str(),
                    endpoint_text(loopback, control_port.value()).c_str());
        std::fflush(stdout);
#ifdef GATEKEEPER_TEST_BUILD
        if (test_forbidden_syscall) arm_test_forbidden_syscall(&loop);
#endif
      }
      uv_run(&loop, UV_RUN_DEFAULT);
    }
    if (!resolver) {
      ctx.journal.close();
      uv_run(&loop, UV_RUN_DEFAULT);
    }
  }
  if (uv_loop_close(&loop) != 0) {
    int open = 0;
    uv_walk(
        &loop, [](uv_handle_t*, void* arg) noexcept { ++*static_cast<int*>(arg); }, &open);
    std::fprintf(stderr, "gatekeeper: %d handles still open at exit\n", open);
    return 1;
  }
  return exit_code;
}

}  // namespace appliance::serve
