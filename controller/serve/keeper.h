// The keeper of `spacectl serve`: grants whose secret comes from a credential helper
// (controller/grants/source.h) are renewed before their token expires and replaced in the
// gatekeeper in place, for every running space that holds one.
//   - When: a token is renewed once `expires_at - min(window, lifetime / 2)` has come (window:
//     `serve --renew-window`, default 10 minutes; lifetime: expires_at - obtained_at, so a token
//     that lives less than two windows is renewed at half its life instead of at once, again
//     and again). A token without expires_at is never renewed (a start reads it again).
//   - One renewal per source at a time: grants naming the same helper argv, in any space, share
//     one run of it per round; rounds never overlap.
//   - A failed renewal is logged once (and once more when the source works again) and retried
//     with backoff (the round interval doubling, capped at the window); the token the gatekeeper
//     holds stays until it expires. At expiry without a new one the grant is withdrawn from the
//     gatekeeper (DELETE /grants/<id>), so the upstream never sees an expired token; the space is
//     then needs-access until a renewal, `grant refresh` or a start succeeds.
//   - A space whose lock is held is retried a few seconds later (never waited for).
// Rounds run on libuv's thread pool; the loop only keeps the timer.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/serve/idle.h"  // Env

namespace controller::serve {

inline constexpr std::chrono::seconds kDefaultRenewWindow{600};
inline constexpr std::chrono::seconds kKeeperMaxInterval{60};
inline constexpr std::chrono::seconds kKeeperMinInterval{1};
inline constexpr std::chrono::seconds kKeeperBusyRetry{5};

using SysTime = std::chrono::system_clock::time_point;

// When a token expiring at `expires`, obtained at `obtained` (unknown: nullopt), is due.
SysTime renew_at(SysTime expires, std::optional<SysTime> obtained, std::chrono::seconds window);
// The wait after the n-th failure in a row (n >= 1): 30 s doubling, at most the window (at least 1
// s).
std::chrono::seconds keeper_backoff(int failures, std::chrono::seconds window);

class Keeper {
 public:
  Keeper(uv_loop_t* loop, std::string state, std::function<Result<Env>()> make_env,
         std::chrono::seconds window);
  void start();  // the first round at once
  void close();

 private:
  struct SourceState {
    int failures = 0;
    SysTime retry_at{};
  };
  static void on_tick(uv_timer_t* t) noexcept;
  static void on_work(uv_work_t* w) noexcept;
  static void on_work_done(uv_work_t* w, int) noexcept;
  std::chrono::milliseconds round();  // thread pool; answers the wait until the next round

  uv_loop_t* loop_;
  std::string state_;
  std::function<Result<Env>()> make_env_;
  std::chrono::seconds window_;
  uv_timer_t* timer_ = nullptr;
  uv_work_t work_{};
  std::chrono::milliseconds next_{0};
  bool closing_ = false;
  // Touched only by rounds, which never overlap.
  std::map<std::vector<std::string>, SourceState> sources_;
  std::set<std::string> withdrawn_;  // "<space>/<grant>/<expires_at>" already withdrawn
};

}  // namespace controller::serve
