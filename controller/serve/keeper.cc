#include "controller/serve/keeper.h"

#include <algorithm>
#include <iostream>

#include "controller/grants/source.h"
#include "controller/text.h"

namespace controller::serve {

using nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

SysTime renew_at(SysTime expires, std::optional<SysTime> obtained, seconds window) {
  std::chrono::system_clock::duration lead = window;
  if (obtained && *obtained < expires) lead = std::min(lead, (expires - *obtained) / 2);
  return expires - lead;
}

seconds keeper_backoff(int failures, seconds window) {
  seconds wait{30};
  for (int i = 1; i < failures && wait < window; ++i) wait *= 2;
  return std::max(kKeeperMinInterval, std::min(wait, window));
}

Keeper::Keeper(uv_loop_t* loop, std::string state, std::function<Result<Env>()> make_env,
               seconds window)
    : loop_(loop), state_(std::move(state)), make_env_(std::move(make_env)), window_(window) {
  work_.data = this;
}

void Keeper::start() {
  timer_ = new uv_timer_t{};
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  uv_timer_start(timer_, on_tick, 0, 0);
}

void Keeper::close() {
  closing_ = true;
  if (timer_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(timer_),
           [](uv_handle_t* h) noexcept { delete reinterpret_cast<uv_timer_t*>(h); });
  timer_ = nullptr;
}

void Keeper::on_tick(uv_timer_t* t) noexcept {
  auto* self = static_cast<Keeper*>(t->data);
  uv_queue_work(self->loop_, &self->work_, on_work, on_work_done);
}

void Keeper::on_work(uv_work_t* w) noexcept {
  auto* self = static_cast<Keeper*>(w->data);
  try {
    self->next_ = self->round();
  } catch (const std::exception& e) {
    std::cerr << "spacectl serve: keeper: " << e.what() << "\n";
    self->next_ = duration_cast<milliseconds>(kKeeperMaxInterval);
  }
}

void Keeper::on_work_done(uv_work_t* w, int) noexcept {
  auto* self = static_cast<Keeper*>(w->data);
  if (self->closing_ || self->timer_ == nullptr) return;
  uv_timer_start(self->timer_, on_tick, static_cast<std::uint64_t>(self->next_.count()), 0);
}

milliseconds Keeper::round() {
  const SysTime now = std::chrono::system_clock::now();
  SysTime next = now + kKeeperMaxInterval;
  Result<Env> env = make_env_();
  if (!env) return duration_cast<milliseconds>(kKeeperMaxInterval);
  Result<std::vector<SpaceSummary>> spaces = env->place->list();
  if (!spaces) return duration_cast<milliseconds>(kKeeperMaxInterval);

  struct Holder {
    std::string space, grant;
    SysTime expires;
    std::optional<SysTime> obtained;
    std::string expires_text;
  };
  std::map<std::vector<std::string>, std::vector<Holder>> holders;
  for (const SpaceSummary& s : *spaces) {
    if (s.space_state != "running" || s.gatekeeper_state != "running") continue;
    Result<SpaceRecord> record = read_record(state_, s.id);
    if (!record || !record->creation.state.empty()) continue;
    for (const GrantRecord& g : record->grants) {
      if (g.source.kind != grants::SourceKind::kHelper || g.expires_at.empty()) continue;
      const std::optional<SysTime> expires = grants::parse_rfc3339(g.expires_at);
      if (!expires) continue;
      holders[g.source.helper].push_back(
          {s.id, g.id, *expires, grants::parse_rfc3339(g.obtained_at), g.expires_at});
    }
  }
  // Sources no space holds any more are forgotten (their failure streak with them).
  for (auto it = sources_.begin(); it != sources_.end();) {
    it = holders.count(it->first) != 0 ? std::next(it) : sources_.erase(it);
  }

  for (auto& [argv, hs] : holders) {
    const std::string name = terminal_safe(argv[0]);
    SysTime due = SysTime::max();
    for (const Holder& h : hs) due = std::min(due, renew_at(h.expires, h.obtained, window_));
    SourceState& st = sources_[argv];
    const bool waiting = now < due || (st.failures > 0 && now < st.retry_at);
    if (!waiting) {
      Result<grants::Token> token = grants::fetch({grants::SourceKind::kHelper, {}, argv});
      if (token) {
        if (st.failures > 0) {
          std::cerr << "spacectl serve: keeper: secret helper " << name << " works again\n";
        }
        st = SourceState{};
        const std::string expires_text =
            token->expires ? grants::rfc3339(*token->expires) : std::string("never");
        for (const Holder& h : hs) {
          Result<SpaceLock> lock = SpaceLock::acquire(state_, h.space, "grant renew");
          if (!lock) {
            next = std::min(next,
                            now + kKeeperBusyRetry);  // busy: its old token stays, tried again soon
            continue;
          }
          if (Result<void> r = env->manager->replace_grant_locked(h.space, h.grant, *token); !r) {
            std::cerr << "spacectl serve: keeper: grant " << terminal_safe(h.grant) << " of space "
                      << h.space << ": " << code_word(r.error().code) << ": "
                      << terminal_safe(r.error().message) << "\n";
            next = std::min(next, now + kKeeperBusyRetry * 6);
            continue;
          }
          std::cerr << "spacectl serve: keeper: grant " << terminal_safe(h.grant) << " of space "
                    << h.space << " renewed (expires " << expires_text << ")\n";
        }
        if (token->expires) next = std::min(next, renew_at(*token->expires, now, window_));
        continue;
      }
      if (token.error().code == Code::kInterrupted) {
        return duration_cast<milliseconds>(kKeeperMaxInterval);
      }
      if (st.failures == 0) {
        std::cerr
            << "spacectl serve: keeper: " << code_word(token.error().code) << ": "
            << terminal_safe(token.error().message)
            << "; the current tokens stay until they expire; retrying with backoff (logged once)\n";
      }
      ++st.failures;
      st.retry_at = now + keeper_backoff(st.failures, window_);
    }
    if (st.failures > 0) {
      next = std::min(next, st.retry_at);
    } else {
      next = std::min(next, due);
    }
    // Expired without a new one: withdrawn, so the upstream never sees an expired token.
    for (const Holder& h : hs) {
      if (h.expires > now) {
        next = std::min(next, h.expires);
        continue;
      }
      const std::string key = h.space + "/" + h.grant + "/" + h.expires_text;
      if (withdrawn_.count(key) != 0) continue;
      Result<SpaceLock> lock = SpaceLock::acquire(state_, h.space, "grant withdraw");
      if (!lock) {
        next = std::min(next, now + kKeeperBusyRetry);
        continue;
      }
      if (Result<void> r = env->manager->withdraw_grant_locked(h.space, h.grant); r) {
        withdrawn_.insert(key);
        std::cerr << "spacectl serve: keeper: grant " << terminal_safe(h.grant) << " of space "
                  << h.space << " expired at " << h.expires_text
                  << " without a new token: withdrawn (needs access)\n";
      }
    }
  }
  const auto wait = duration_cast<milliseconds>(next - std::chrono::system_clock::now());
  return std::clamp(wait, duration_cast<milliseconds>(kKeeperMinInterval),
                    duration_cast<milliseconds>(kKeeperMaxInterval));
}

}  // namespace controller::serve
