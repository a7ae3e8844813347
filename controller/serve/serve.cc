#include "controller/serve/serve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <iostream>

#include "controller/code/cli.h"
#include "controller/dispatch/dispatcher.h"
#include "controller/serve/activation.h"
#include "controller/serve/http_server.h"
#include "controller/serve/idle.h"
#include "controller/serve/keeper.h"
#include "controller/serve/metrics.h"
#include "controller/serve/operations.h"
#include "controller/serve/routes.h"
#include "controller/signals.h"
#include "controller/space_token.h"
#include "controller/sweep.h"
#include "controller/text.h"
#include "policy/number.h"

namespace controller::serve {

Result<std::string> read_token_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return fail(Code::kUsage, "serve --token-file " + path + ": " + std::strerror(errno));
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600) {
    close(fd);
    return fail(Code::kUsage, "serve --token-file " + path + ": must be a regular file of this user with mode 0600");
  }
  std::string text(600, '\0');
  const ssize_t n = read(fd, text.data(), text.size());
  close(fd);
  if (n < 0) return fail(Code::kUsage, "serve --token-file " + path + ": cannot read");
  text.resize(static_cast<std::size_t>(n));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  bool printable = true;
  for (const char c : text) printable = printable && c > 0x20 && c < 0x7f;
  if (text.size() < 32 || text.size() > 512 || !printable) {
    return fail(Code::kUsage, "serve --token-file " + path + ": the token is 32 to 512 printable characters without spaces");
  }
  return text;
}

namespace {

struct Loop {
  uv_loop_t loop{};
  uv_timer_t stop_timer{};
};

}  // namespace

int run_serve(const ServeOptions& options) {
  ServerConfig config;
  config.socket_path = options.socket_path.empty() ? options.state + "/serve.sock" : options.socket_path;
  // Started by a spacectl.socket unit: listen on the socket systemd made (activation.h).
  std::string activated_path;
  Result<int> activated = activated_socket(activated_path);
  if (!activated) {
    std::cerr << "spacectl: " << code_word(activated.error().code) << ": "
              << terminal_safe(activated.error().message) << "\n";
    return 2;
  }
  if (*activated >= 0) {
    if (!options.socket_path.empty()) {
      std::cerr << "spacectl: usage: serve --socket and socket activation exclude each other\n";
      return 2;
    }
    config.activated_fd = *activated;
    config.socket_path = activated_path;
  }
  if (!options.listen.empty()) {
    const std::size_t colon = options.listen.rfind(':');
    const std::string host = colon == std::string::npos ? std::string() : options.listen.substr(0, colon);
    const std::string port = colon == std::string::npos ? std::string() : options.listen.substr(colon + 1);
    const std::optional<std::uint16_t> p = policy::parse_number<std::uint16_t>(port);
    if (host != "127.0.0.1" || !p) {
      std::cerr << "spacectl: usage: serve --listen 127.0.0.1:PORT (loopback only)\n";
      return 2;
    }
    if (options.token_file.empty()) {
      std::cerr << "spacectl: usage: serve --listen needs --token-file (a bearer token in a 0600 file)\n";
      return 2;
    }
    Result<std::string> token = read_token_file(options.token_file);
    if (!token) {
      std::cerr << "spacectl: " << code_word(token.error().code) << ": " << terminal_safe(token.error().message) << "\n";
      return 2;
    }
    config.tcp_host = host;
    config.tcp_port = *p;
    config.token = *token;
  }

  Loop l;
  if (const int r = uv_loop_init(&l.loop); r != 0) {
    std::cerr << "spacectl serve: uv_loop_init: " << uv_strerror(r) << "\n";
    return 1;
  }
  Operations operations(&l.loop);
  Metrics metrics;
  operations.on_finished(
      [&metrics](const std::string& kind, const std::string& result, double seconds) {
        metrics.operation_finished(kind, result, seconds);
      });
  ServeContext ctx;
  ctx.metrics = &metrics;
  ctx.place_name = options.place_name;
  ctx.place_options = options.place_options;
  ctx.state = options.state;
  ctx.escape_binary = options.escape_binary;
  ctx.escape_test_image_file = options.escape_test_image_file;
  ctx.operations = &operations;
  IdleWatch idle(&l.loop, options.state, [&ctx] { return ctx.make_env(); });
  ctx.idle = &idle;
  // Helper-backed grants renewed before they expire (keeper.h).
  Keeper keeper(
      &l.loop, options.state, [&ctx] { return ctx.make_env(); },
      std::chrono::seconds(options.renew_window_seconds));

  // The dispatcher: requests for a space's inner server (controller/dispatch/). Its blocking
  // hooks run on the thread pool, each with a place of its own.
  dispatch::DispatcherConfig dc;
  dc.loop = &l.loop;
  dc.list_spaces = [&ctx]() -> Result<std::vector<std::string>> {
    Result<Env> env = ctx.make_env();
    if (!env) return env.error();
    Result<std::vector<SpaceSummary>> all = env->place->list();
    if (!all) return all.error();
    std::vector<std::string> ids;
    for (const SpaceSummary& s : *all) ids.push_back(s.id);
    return ids;
  };
  dc.connect = [&ctx](const std::string& id, std::uint16_t port) -> Result<std::vector<std::string>> {
    Result<Env> env = ctx.make_env();
    if (!env) return env.error();
    return env->place->connect(id, port);
  };
  dc.read_token = [&ctx](const std::string& id) -> Result<std::string> {
    Result<Env> env = ctx.make_env();
    if (!env) return env.error();
    return read_space_token(*env->place, id);
  };
  dc.activity = [&idle](const std::string& id) { idle.touch(id); };
  dc.answered = [&metrics](int status) { metrics.dispatcher_answered(status); };
  dispatch::Dispatcher dispatcher(dc);
  config.hand_off = [&dispatcher](uv_stream_t* client, std::string id, dispatch::RequestHead head, std::string already,
                                  dispatch::Giveback done) {
    dispatcher.take(client, std::move(id), std::move(head), std::move(already), std::move(done));
  };

  config.loop = &l.loop;
  config.route = make_router(ctx);
  config.answered = [&metrics](int status) { metrics.api_answered(status); };
  config.events = [&operations](const std::string& id, std::size_t seq, std::vector<nlohmann::json>& out, bool& finished,
                                std::size_t& next) { return operations.events_since(id, seq, out, finished, next); };
  Server server(config);
  operations.on_change([&server] { server.push_events(); });
  if (Result<void> r = server.listen(); !r) {
    std::cerr << "spacectl: " << code_word(r.error().code) << ": " << terminal_safe(r.error().message) << "\n";
    operations.close();
    dispatcher.close_all([] {});
    uv_run(&l.loop, UV_RUN_DEFAULT);
    uv_loop_close(&l.loop);
    return exit_status(r.error().code);
  }
  std::cerr << "spacectl serve: listening on " << config.socket_path
            << (config.activated_fd >= 0 ? " (socket activation)" : "");
  if (!config.tcp_host.empty()) std::cerr << " and " << config.tcp_host << ":" << server.tcp_port();
  std::cerr << "\n";
  idle.start([&dispatcher](const std::string& id) { return dispatcher.open_for(id); });
  keeper.start();
  if (options.sweep_at_start) {
    const std::int64_t grace = options.sweep_grace_seconds;
    operations.start("sweep", "", [&ctx, grace](const Say&) -> Result<nlohmann::json> {
      Result<Env> env = ctx.make_env();
      if (!env) return env.error();
      SweepOptions so;
      so.grace = std::chrono::seconds(grace);
      so.remove_refs = code::forget_refs;
      return as_document(sweep(*env->manager, so));
    });
  }

  // Stop signals are recorded by signals.cc; the loop looks every 200 ms.
  uv_timer_init(&l.loop, &l.stop_timer);
  struct Stopping {
    Server* server;
    Operations* operations;
    IdleWatch* idle;
    Keeper* keeper;
    dispatch::Dispatcher* dispatcher;
    bool begun = false;
  } stopping{&server, &operations, &idle, &keeper, &dispatcher};
  l.stop_timer.data = &stopping;
  uv_timer_start(
      &l.stop_timer,
      [](uv_timer_t* t) noexcept {
        auto* s = static_cast<Stopping*>(t->data);
        if (stop_requests() == 0 || s->begun) return;
        s->begun = true;
        std::cerr << "spacectl serve: stopping\n";
        s->idle->close();
        s->keeper->close();
        // The dispatcher first: the streams it holds come back to the server closed.
        s->dispatcher->close_all([] {});
        s->server->close_all([] {});
        // Operations see the stop too (their processes are killed, their rollback runs); the
        // loop ends once they are joined and the async handle is closed.
        uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
        s->operations->join();
        s->operations->close();
      },
      200, 200);
  uv_run(&l.loop, UV_RUN_DEFAULT);
  operations.join();
  uv_loop_close(&l.loop);
  return 0;
}

}  // namespace controller::serve
