// bench_dispatch: requests per second and p50 latency of a small GET through the dispatcher
// (a test acceptor standing in for `spacectl serve`, then a pooled `docker exec` stream and our
// bridge into the space) against the same GETs made directly inside the space (our inner test
// server's own client on the space's loopback). One keep-alive connection, sequential requests,
// after a warm-up. Prints a Markdown table; never asserts.
// Needs a Docker engine and the images (`cmake --build <dir> --target images`).
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "controller/dispatch/dispatcher.h"
#include "controller/dispatch/testing/harness.h"
#include "controller/docker_place.h"
#include "controller/manager.h"
#include "controller/space_token.h"
#include "policy/number.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string self_dir() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  std::string path(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  return path.substr(0, path.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> asked =
      argc > 1 ? policy::parse_number<int>(argv[1]) : std::optional<int>(2000);
  if (!asked || *asked < 10 || *asked > 10000000) {
    std::fprintf(stderr,
                 "usage: bench_dispatch [REQUESTS]: a whole number 10..10000000, not '%s'\n",
                 argv[1]);
    return 2;
  }
  const int requests = *asked;
  const std::string bin = self_dir();
  controller::PlaceOptions o;
  o.owner = "benchdispatch" + controller::random_hex(4);
  o.gatekeeper_image_file = bin + "/gatekeeper-image.id";
  o.space_image_file = bin + "/space-image.id";
  o.seccomp_space = bin + "/seccomp/space.json";
  o.seccomp_gatekeeper = bin + "/seccomp/gatekeeper.json";
  o.bridge_binary = bin + "/spacectl-bridge";
  controller::DockerPlace place(o);
  char tmpl[] = "/tmp/bench-dispatch-XXXXXX";
  const std::string state = ::mkdtemp(tmpl);
  controller::Manager m{place, state};
  controller::CreateRequest request;
  request.memory_bytes = 512ll << 20;
  auto created = m.create(request);
  if (!created) {
    std::cerr << "bench_dispatch: create: " << created.error().message << "\n";
    return 2;
  }
  const std::string id = created->space.summary.id;
  int rc = 0;
  auto cleanup = [&] {
    (void)place.remove(id);
    std::filesystem::remove_all(state);
  };
  auto server = controller::read_small_file(bin + "/dispatch-inner-server", 16u << 20);
  const std::string token_path(controller::kTokenPath);
  if (!server) {
    std::cerr << "bench_dispatch: " << server.error().message << "\n";
    cleanup();
    return 2;
  }
  auto put = place.exec(id, controller::ExecTarget::kSpace, {"sh", "-c", "cat > /tmp/inner && chmod 755 /tmp/inner"}, *server,
                        std::chrono::seconds(60));
  auto start = place.exec(id, controller::ExecTarget::kSpace,
                          {"sh", "-c", "(/tmp/inner http 27600 " + token_path + " >/tmp/inner.log 2>&1 &) && sleep 1"}, {},
                          std::chrono::seconds(30));
  if (!put || put->exit_code != 0 || !start || start->exit_code != 0) {
    std::cerr << "bench_dispatch: the inner server did not start\n";
    cleanup();
    return 2;
  }

  // Direct: inside the space, on its loopback.
  auto direct = place.exec(id, controller::ExecTarget::kSpace,
                           {"/tmp/inner", "bench", "27600", token_path, std::to_string(requests)}, {}, std::chrono::minutes(10));
  long long direct_total = 0, direct_p50 = 0;
  if (direct && direct->exit_code == 0) {
    // "n <n> total_us <t> p50_us <p>\n"
    std::istringstream words(direct->out);
    std::string n_key, n, total_key, total_text, p50_key, p50_text;
    words >> n_key >> n >> total_key >> total_text >> p50_key >> p50_text;
    const std::optional<long long> t = policy::parse_number<long long>(total_text);
    const std::optional<long long> p = policy::parse_number<long long>(p50_text);
    if (n_key != "n" || total_key != "total_us" || p50_key != "p50_us" || !t || !p) {
      std::fprintf(stderr, "bench_dispatch: the inner server's bench line does not read: %s\n",
                   direct->out.c_str());
      cleanup();
      return 1;
    }
    direct_total = *t;
    direct_p50 = *p;
  }

  // Through the dispatcher.
  std::vector<long long> us;
  long long total = 0;
  std::atomic<int> streams{
      0};  // bridge streams the dispatcher opened (each one docker exec); counted on the pool
  {
    controller::dispatch::testing::Acceptor acceptor(
        [&place, &streams](controller::dispatch::DispatcherConfig& c) {
          c.list_spaces = [&place]() -> controller::Result<std::vector<std::string>> {
            auto all = place.list();
            if (!all) return all.error();
            std::vector<std::string> ids;
            for (const auto& s : *all) ids.push_back(s.id);
            return ids;
          };
          c.connect = [&place, &streams](const std::string& i, std::uint16_t port) {
            ++streams;
            return place.connect(i, port);
          };
          c.read_token = [&place](const std::string& i) {
            return controller::read_space_token(place, i);
          };
        });
    {
    // Closed before the acceptor stops: its loop ends only when no connection is left.
    controller::dispatch::testing::Client client(acceptor.port());
    const std::string req = controller::dispatch::testing::get("/api/spaces/" + id + "/echo");
    for (int i = 0; i < 20; ++i) {  // warm-up: login, stream, placement
      client.send(req);
      if (client.read_answer().status != 200) rc = 1;
    }
    const auto t0 = Clock::now();
    for (int i = 0; i < requests && rc == 0; ++i) {
      const auto a = Clock::now();
      client.send(req);
      if (client.read_answer().status != 200) rc = 1;
      us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - a).count());
    }
    total = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    }
    acceptor.stop();
  }
  cleanup();
  if (rc != 0 || us.empty()) {
    std::cerr << "bench_dispatch: a request through the dispatcher failed\n";
    return 1;
  }
  std::sort(us.begin(), us.end());
  const long long p50 = us[(us.size() + 1) / 2 - 1];
  auto per_s = [&](long long t) { return t > 0 ? static_cast<double>(requests) * 1e6 / static_cast<double>(t) : 0.0; };
  std::printf("| path (%d sequential GETs, one keep-alive connection) | requests/s | p50 ms |\n| --- | ---: | ---: |\n",
              requests);
  std::printf("| direct, inside the space (127.0.0.1:27600) | %.0f | %.3f |\n", per_s(direct_total),
              static_cast<double>(direct_p50) / 1000.0);
  std::printf("| through the dispatcher (pooled docker exec + spacectl-bridge) | %.0f | %.3f |\n", per_s(total),
              static_cast<double>(p50) / 1000.0);
  // Login and the requests share the pool: 1 or 2 here means every request reused a stream.
  std::printf("\nbridge streams opened (docker exec): %d; load average at the end: ",
              streams.load());
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char line[128] = {};
    if (std::fgets(line, sizeof line, f) != nullptr) std::printf("%s", line);
    std::fclose(f);
  }
  return 0;
}
