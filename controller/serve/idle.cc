#include "controller/serve/idle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "controller/spec.h"
#include "policy/number.h"

namespace controller::serve {

using nlohmann::json;

namespace {
constexpr std::chrono::seconds kCheckInterval{60};
constexpr std::chrono::seconds kMetricsTimeout{20};
}  // namespace

Result<IdleSetting> parse_idle_setting(const json& body) {
  if (!body.is_object() || body.size() != 2 || !body.contains("enabled") ||
      !body["enabled"].is_boolean() || !body.contains("hours") ||
      !body["hours"].is_number_integer()) {
    return fail(Code::kInvalidArgument, "idle stop: the setting is {\"enabled\": true|false, \"hours\": 1 to 168}");
  }
  const std::int64_t hours = body["hours"].get<std::int64_t>();
  if (hours < kMinIdleStopHours || hours > kMaxIdleStopHours) {
    return fail(Code::kInvalidArgument, "idle stop: hours " + std::to_string(hours) + " is outside 1 to 168");
  }
  return IdleSetting{body["enabled"].get<bool>(), static_cast<int>(hours)};
}

json idle_setting_json(const IdleSetting& s) { return {{"enabled", s.enabled}, {"hours", s.hours}}; }

json to_json(const SpaceIdleStop& s) {
  json out = idle_setting_json(s.setting);
  out["id"] = s.id;
  out["default"] = s.is_default;
  return out;
}

Result<IdleSetting> read_default_idle(const std::string& state) {
  const std::string path = state + "/idle-stop.json";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return kDefaultIdleSetting;
    return fail(Code::kRecordUnreadable, "idle stop default " + path + ": cannot open");
  }
  struct stat st{};
  std::string text(4096, '\0');
  const bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0;
  const ssize_t n = ok ? read(fd, text.data(), text.size()) : -1;
  close(fd);
  if (!ok || n < 0 || static_cast<std::size_t>(n) >= text.size()) {
    return fail(Code::kRecordUnreadable, "idle stop default " + path + ": not a private file of this user under 4 KiB");
  }
  text.resize(static_cast<std::size_t>(n));
  Result<IdleSetting> s = parse_idle_setting(json::parse(text, nullptr, false));
  if (!s) return fail(Code::kRecordUnreadable, "idle stop default " + path + ": " + s.error().message);
  return s;
}

Result<void> write_default_idle(const std::string& state, const IdleSetting& s) {
  const std::string path = state + "/idle-stop.json";
  const std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(Code::kRecordUnreadable, "idle stop default " + tmp + ": cannot create");
  const std::string text = idle_setting_json(s).dump() + "\n";
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return fail(Code::kRecordUnreadable, "idle stop default " + path + ": write failed");
  }
  return {};
}

long long relayed_bytes(const std::string& metrics) {
  long long total = -1;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("gatekeeper_relayed_bytes_total{", 0) != 0) continue;
    const std::size_t space = line.rfind(' ');
    // A counter that does not read (junk, a sign, past 2^63-1) or a sum past it: no reading at
    // all, so the idle clock is not reset by a number nobody relayed.
    const std::optional<long long> v =
        space == std::string::npos
            ? std::nullopt
            : policy::parse_number<long long>(std::string_view(line).substr(space + 1));
    if (!v || *v < 0) return -1;
    const long long before = total < 0 ? 0 : total;
    if (*v > std::numeric_limits<long long>::max() - before) return -1;
    total = before + *v;
  }
  return total;
}

IdleWatch::IdleWatch(uv_loop_t* loop, std::string state, std::function<Result<Env>()> make_env)
    : loop_(loop), state_(std::move(state)), make_env_(std::move(make_env)) {
  if (const char* t = std::getenv("SPACECTL_TEST_IDLE_STOP_SECONDS"); t != nullptr) {
    const std::optional<long long> v = policy::parse_number<long long>(t);
    if (v && *v > 0 && *v <= 86400) {
      test_seconds_ = *v;
    } else {
      std::cerr << "spacectl serve: warning: SPACECTL_TEST_IDLE_STOP_SECONDS='"
                << std::string(t).substr(0, 32)
                << "' is not a whole number of seconds 1..86400: ignored\n";
    }
  }
  work_.data = this;
}

std::chrono::seconds IdleWatch::timeout_of(const IdleSetting& s) const {
  if (test_seconds_ > 0) return std::chrono::seconds(test_seconds_);
  return std::chrono::hours(s.hours);
}

void IdleWatch::start(std::function<std::size_t(const std::string&)> open_for) {
  open_for_ = std::move(open_for);
  if (test_seconds_ > 0) {
    std::cerr << "spacectl serve: warning: SPACECTL_TEST_IDLE_STOP_SECONDS=" << test_seconds_
              << ": idle stop after that many seconds, checked every second (for tests only)\n";
  }
  timer_ = new uv_timer_t{};
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  const std::uint64_t every = test_seconds_ > 0 ? 1000 : static_cast<std::uint64_t>(kCheckInterval.count()) * 1000;
  uv_timer_start(timer_, on_tick, every, every);
}

void IdleWatch::close() {
  if (timer_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) noexcept { delete reinterpret_cast<uv_timer_t*>(h); });
  timer_ = nullptr;
}

void IdleWatch::touch(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  last_[id] = std::chrono::steady_clock::now();
}

void IdleWatch::on_tick(uv_timer_t* t) noexcept {
  auto* self = static_cast<IdleWatch*>(t->data);
  if (self->working_) return;
  // The dispatcher lives on this thread: its open exchanges count as activity now.
  if (self->open_for_) {
    std::set<std::string> known;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      known = self->known_;
    }
    for (const std::string& id : known) {
      if (self->open_for_(id) > 0) self->touch(id);
    }
  }
  self->working_ = true;
  uv_queue_work(self->loop_, &self->work_, on_work, on_work_done);
}

void IdleWatch::on_work(uv_work_t* w) noexcept {
  try {
    static_cast<IdleWatch*>(w->data)->check();
  } catch (const std::exception& e) {
    std::cerr << "spacectl serve: idle stop: " << e.what() << "\n";
  }
}

void IdleWatch::on_work_done(uv_work_t* w, int) noexcept { static_cast<IdleWatch*>(w->data)->working_ = false; }

void IdleWatch::check() {
  Result<Env> env = make_env_();
  if (!env) return;
  Result<SpaceList> list = env->manager->list();
  if (!list) return;
  const Result<IdleSetting> fallback = read_default_idle(state_);
  const IdleSetting standard = fallback ? *fallback : kDefaultIdleSetting;
  const auto now = std::chrono::steady_clock::now();
  std::set<std::string> running;
  for (const SpaceView& entry : list->spaces) {
    const std::string& id = entry.summary.id;
    if (entry.busy.value_or(false)) {
      touch(id);  // an action of its own is running
      continue;
    }
    // Exited 75 by itself with its gatekeeper still up: nothing inside can reach that gatekeeper.
    if (entry.summary.space_state == "exited" && entry.summary.gatekeeper_state == "running" &&
        entry.summary.space_exit_code == kIdleExitCode) {
      if (Result<SpaceLock> lock = SpaceLock::acquire(state_, id, "idle stop"); lock) (void)env->manager->stop_locked(id, true);
      continue;
    }
    if (entry.summary.space_state != "running" || entry.state == SpaceState::kPreparing) continue;
    running.insert(id);
    Result<SpaceRecord> record = read_record(state_, id);
    const IdleSetting setting = record && record->idle_stop.set ? IdleSetting{record->idle_stop.enabled, record->idle_stop.hours} : standard;
    if (!setting.enabled) continue;
    Result<ExecOutput> metrics = env->place->exec(id, ExecTarget::kGatekeeper, {std::string(kGatekeeperBinary), "control", "GET", "/metrics"},
                                                  {}, std::chrono::duration_cast<std::chrono::milliseconds>(kMetricsTimeout));
    const long long bytes = metrics && metrics->exit_code == 0 ? relayed_bytes(metrics->out) : -1;
    std::chrono::steady_clock::time_point last;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto [it, fresh] = last_.emplace(id, now);  // first seen: idle from now on
      if (bytes >= 0) {
        auto [b, first] = bytes_.emplace(id, bytes);
        if (!first && b->second != bytes) it->second = now;
        b->second = bytes;
      }
      last = it->second;
      (void)fresh;
    }
    if (now - last < timeout_of(setting)) continue;
    Result<SpaceLock> lock = SpaceLock::acquire(state_, id, "idle stop");
    if (!lock) continue;  // an action came meanwhile
    if (Result<SpaceStopped> stopped = env->manager->stop_locked(id, true); stopped) {
      std::cerr << "spacectl serve: idle stop: stopped space " << id << "\n";
      std::lock_guard<std::mutex> guard(mutex_);
      last_.erase(id);
      bytes_.erase(id);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  known_ = running;
}

}  // namespace controller::serve
