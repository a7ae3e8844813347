// The loop test fixture: the gatekeeper's corridor, window and control listeners on 127.0.0.1
// (port 0), in this process, on a loop the test turns, with a scripted resolver instead of
// c-ares. No root, no namespace, no child process: a contributor runs it on a laptop, and the
// asan preset runs it under ASan and UBSan. Every test ends by proving no handle is left open
// (uv_loop_close() == 0) after the listeners, the pool, the resolver and the journal closed.
//
// What it cannot reach without root: an allowed dial. The table refuses loopback, and the test
// build's public range (198.18.0.0/15) is not an address of this host, so a tunnel or a window
// exchange that was allowed is the integration tests' (tests/integration/, network namespaces).
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "appliance/dns/resolver.h"
#include "appliance/serve/context.h"
#include "appliance/serve/listener.h"
#include "appliance/window/upstream.h"

namespace gk_loop_test {

// Answers what the test scripted, on a later loop turn (as c-ares does), or holds every query
// until release() when held.
class ScriptedResolver final : public appliance::serve::NameResolver {
 public:
  explicit ScriptedResolver(uv_loop_t* loop);
  ~ScriptedResolver() override;

  void answer(const std::string& name, std::vector<std::string> addresses);
  void fail(const std::string& name, const std::string& detail);
  void hold(bool held) { held_ = held; }
  void release();
  void close();

  Query* resolve(const std::string& name, Callback callback, void* owner) override;
  void cancel(Query* query) override;
  [[nodiscard]] std::size_t outstanding() const noexcept override { return pending_.size(); }

  std::vector<std::string> asked;
  int cancelled = 0;

 private:
  struct Scripted final : Query {
    std::string name;
    Callback callback = nullptr;
    void* owner = nullptr;
  };
  static void on_turn(uv_timer_t* timer) noexcept;

  uv_timer_t timer_{};
  bool closed_ = false;
  bool held_ = false;
  std::map<std::string, appliance::serve::Resolution> script_;
  std::list<std::unique_ptr<Scripted>> pending_;
};

struct Reply {
  std::string bytes;  // everything until the gatekeeper closed
  bool closed = false;
};

class LoopFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Turns the loop until `done` holds or `ms` pass.
  bool run_until(const std::function<bool()>& done, int ms = 5000);
  // A connection to one of our listeners on 127.0.0.1 (non-blocking), -1 on failure.
  int connect_to(std::uint16_t port);
  // Sends `request`, then reads until the gatekeeper closes (or `ms` pass).
  Reply exchange(std::uint16_t port, const std::string& request, int ms = 5000);
  // A control-channel request; returns the whole answer.
  std::string control(const std::string& method, const std::string& path,
                      const std::string& body = "");
  // True when the journal holds a record with this decision word.
  bool journalled(const std::string& decision);

  uv_loop_t loop_{};
  std::unique_ptr<appliance::serve::ServeContext> ctx_;
  std::unique_ptr<ScriptedResolver> resolver_;
  std::unique_ptr<appliance::serve::UpstreamPool> pool_;
  std::unique_ptr<appliance::serve::TcpListener> corridor_;
  std::unique_ptr<appliance::serve::TcpListener> window_;
  std::unique_ptr<appliance::serve::TcpListener> control_;
  std::uint16_t corridor_port_ = 0;
  std::uint16_t window_port_ = 0;
  std::uint16_t control_port_ = 0;
};

}  // namespace gk_loop_test
