// Idle stop: `spacectl serve` stops a space (space first, then its gatekeeper) once it has seen no
// activity for the space's setting ({enabled, hours 1–168}; the record's, else serve's default,
// itself {enabled: true, hours: 4} until PUT /v1/idle-stop changes it). Activity it can see:
// requests and sockets of the dispatcher, the execs serve runs in the space (code in, history,
// escape-test, start), and bytes the gatekeeper relayed (its /metrics, read over the control
// channel at each check). A space idle stop stopped lists as `stopped-idle` until it is started
// or stopped by hand; so does one that exited with status 75 on its own (its gatekeeper is then
// stopped too). A space whose lock is held, or that the dispatcher has a request or socket open
// for, is never stopped. Checks run every minute.
//
// Tests only: SPACECTL_TEST_IDLE_STOP_SECONDS=N in serve's environment makes every enabled
// setting N seconds and checks run every second; serve says so on stderr at start.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/errors.h"
#include "controller/manager.h"
#include "controller/place.h"
#include "controller/records.h"

namespace controller::serve {

// A place and a manager of its own for one job (places are not shared between threads).
struct Env {
  std::unique_ptr<Place> place;
  std::unique_ptr<Manager> manager;
};

struct IdleSetting {
  bool enabled = true;
  int hours = 4;
};
inline constexpr IdleSetting kDefaultIdleSetting{};

// {enabled, hours} strictly (hours an integer 1..168); kInvalidArgument otherwise.
Result<IdleSetting> parse_idle_setting(const nlohmann::json& body);
nlohmann::json idle_setting_json(const IdleSetting& s);
// A space's idle stop (GET and PUT /v1/spaces/{id}/idle-stop): its setting, and whether serve's
// default applies (the record sets none).
struct SpaceIdleStop {
  std::string id;
  IdleSetting setting;
  bool is_default = false;
};
// {id, enabled, hours, default}
nlohmann::json to_json(const SpaceIdleStop& s);
// serve's default, kept in <state>/idle-stop.json (0600, atomic).
Result<IdleSetting> read_default_idle(const std::string& state);
Result<void> write_default_idle(const std::string& state, const IdleSetting& s);
// The sum of the gatekeeper_relayed_bytes_total lines of a /metrics text; -1 when none, or when
// one does not read as a count or the sum does not fit.
long long relayed_bytes(const std::string& metrics);

class IdleWatch {
 public:
  IdleWatch(uv_loop_t* loop, std::string state, std::function<Result<Env>()> make_env);
  // open_for: the dispatcher's open exchanges for a space (loop thread); may be empty.
  void start(std::function<std::size_t(const std::string&)> open_for);
  void close();
  // Any thread: the space did something now.
  void touch(const std::string& id);
  [[nodiscard]] std::chrono::seconds timeout_of(const IdleSetting& s) const;
  [[nodiscard]] bool test_override() const { return test_seconds_ > 0; }

 private:
  static void on_tick(uv_timer_t* t) noexcept;
  static void on_work(uv_work_t* w) noexcept;
  static void on_work_done(uv_work_t* w, int) noexcept;
  void check();  // thread pool

  uv_loop_t* loop_;
  std::string state_;
  std::function<Result<Env>()> make_env_;
  std::function<std::size_t(const std::string&)> open_for_;
  uv_timer_t* timer_ = nullptr;
  uv_work_t work_{};
  bool working_ = false;
  long long test_seconds_ = 0;
  std::mutex mutex_;
  std::map<std::string, std::chrono::steady_clock::time_point> last_;
  std::map<std::string, long long> bytes_;
  std::set<std::string> known_;  // ids seen running at the last check
};

}  // namespace controller::serve
