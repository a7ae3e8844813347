// The dispatcher's shared state: the known-space cache, the per-space pools and the facade.
#include "controller/dispatch/dispatcher.h"

#include <cstring>

#include "controller/dispatch/internal.h"

namespace controller::dispatch {

namespace {

struct Work {
  uv_work_t req{};
  DispatcherImpl* d = nullptr;
  std::function<void()> work, done;
};

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

const std::string* find_header(const std::vector<HeaderField>& headers, std::string_view name) {
  for (const HeaderField& h : headers)
    if (iequal(h.name, name)) return &h.value;
  return nullptr;
}

bool is_websocket_request(const RequestHead& head) {
  const std::string* up = find_header(head.headers, "upgrade");
  return up != nullptr && iequal(*up, "websocket");
}

DispatcherImpl::DispatcherImpl(DispatcherConfig c) : config(std::move(c)), loop(config.loop) {
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  idle_open_ = true;
}

void DispatcherImpl::defer(std::function<void()> fn) {
  deferred_.push_back(std::move(fn));
  if (!idle_open_) return;
  uv_idle_start(&idle_, [](uv_idle_t* h) noexcept {
    auto* d = static_cast<DispatcherImpl*>(h->data);
    std::vector<std::function<void()>> now;
    now.swap(d->deferred_);
    if (d->deferred_.empty()) uv_idle_stop(h);
    for (auto& f : now) f();
    if (!d->deferred_.empty()) uv_idle_start(h, h->idle_cb);
  });
}

DispatcherImpl::~DispatcherImpl() = default;

void DispatcherImpl::blocking(std::function<void()> work, std::function<void()> done) {
  auto* w = new Work;
  w->d = this;
  w->work = std::move(work);
  w->done = std::move(done);
  w->req.data = w;
  ++pending_work_;
  const int rc = uv_queue_work(
      loop, &w->req, [](uv_work_t* r) noexcept { static_cast<Work*>(r->data)->work(); },
      [](uv_work_t* r, int) noexcept {
        auto* wk = static_cast<Work*>(r->data);
        DispatcherImpl* d = wk->d;
        --d->pending_work_;
        if (!d->closing) wk->done();
        delete wk;
        d->maybe_closed();
      });
  if (rc != 0) {
    --pending_work_;
    w->work();
    w->done();
    delete w;
  }
}

SpaceState& DispatcherImpl::space(const std::string& id) {
  SpaceState& s = spaces_[id];
  s.id = id;
  return s;
}

void DispatcherImpl::note_activity(const std::string& id) {
  SpaceState& s = space(id);
  const Clock::time_point now = Clock::now();
  if (now - s.last_activity < std::chrono::seconds(1)) return;
  s.last_activity = now;
  if (config.activity) config.activity(id);
}

void DispatcherImpl::known(const std::string& id, std::function<void(Result<bool>)> answer) {
  const Clock::time_point now = Clock::now();
  const bool fresh = known_valid_ && now - known_at_ < kKnownFresh;
  if (fresh && known_.count(id) != 0) return answer(true);
  // Not held: read again only if the last read is old enough (≤ 2 listings a second for
  // wrong ids); concurrent misses share one read.
  if (fresh && now - known_at_ < kKnownRetry) return answer(false);
  known_waiters_.push_back([this, id, answer = std::move(answer)] {
    if (!known_failure_.empty()) return answer(fail(Code::kPlaceUnreachable, known_failure_));
    answer(known_.count(id) != 0);
  });
  if (known_reading_) return;
  known_reading_ = true;
  auto result = std::make_shared<Result<std::vector<std::string>>>(fail(Code::kInternal, "list spaces: not run"));
  blocking([this, result] { *result = config.list_spaces ? config.list_spaces() : fail(Code::kInternal, "list spaces: no hook"); },
           [this, result] {
             known_reading_ = false;
             known_at_ = Clock::now();
             if (*result) {
               known_ = std::set<std::string>(result->value().begin(), result->value().end());
               known_valid_ = true;
               known_failure_.clear();
             } else {
               known_valid_ = false;
               known_failure_ = result->error().message;
             }
             std::vector<std::function<void()>> waiters;
             waiters.swap(known_waiters_);
             for (auto& w : waiters) w();
           });
}

void DispatcherImpl::stream(const std::string& id, bool fresh, std::function<void(InnerStream*, std::optional<Failure>)> got) {
  SpaceState& s = space(id);
  if (!fresh) {
    while (!s.idle.empty()) {
      InnerStream* st = s.idle.back();
      s.idle.pop_back();
      if (st->broken()) {
        --s.streams;
        st->close();
        continue;
      }
      uv_timer_stop(&st->idle_timer);
      st->count_use();
      return got(st, std::nullopt);
    }
    if (s.streams >= kMaxStreamsPerSpace) {
      if (s.waiting.size() >= kMaxWaiting) return got(nullptr, fail(Code::kInternal, "space_busy"));
      s.waiting.push_back(std::move(got));
      return;
    }
    ++s.streams;
    return open_stream(id, true, std::move(got));
  }
  open_stream(id, false, std::move(got));
}

void DispatcherImpl::open_stream(const std::string& id, bool pooled,
                                 std::function<void(InnerStream*, std::optional<Failure>)> got) {
  auto argv = std::make_shared<Result<std::vector<std::string>>>(fail(Code::kInternal, "connect: not run"));
  const std::uint16_t port = config.inner_port;
  blocking([this, argv, id, port] { *argv = config.connect ? config.connect(id, port) : fail(Code::kInternal, "connect: no hook"); },
           [this, argv, id, pooled, got = std::move(got)] {
             auto failed = [this, id, pooled, &got](Failure f) {
               if (pooled) {
                 SpaceState& s = space(id);
                 --s.streams;
               }
               got(nullptr, std::move(f));
             };
             if (!*argv) return failed(argv->error());
             auto* st = new InnerStream(*this, id);
             st->pooled = pooled;
             std::string why;
             if (!st->spawn(argv->value(), why)) return failed(fail(Code::kCommandFailed, why));
             live_streams_.insert(st);
             st->count_use();
             got(st, std::nullopt);
           });
}

void DispatcherImpl::release(InnerStream* st, bool reusable) {
  SpaceState& s = space(st->space());
  st->detach();
  if (!st->pooled) {  // a WebSocket's own stream
    live_streams_.erase(st);
    return st->close();
  }
  if (reusable && !st->broken() && !closing) {
    if (!s.waiting.empty()) {
      auto next = std::move(s.waiting.front());
      s.waiting.pop_front();
      st->count_use();
      return next(st, std::nullopt);
    }
    s.idle.push_back(st);
    // Closed before the inner server's own keep-alive could close it under a request.
    uv_timer_start(&st->idle_timer, &DispatcherImpl::on_idle, kIdleStreamCloseMs, 0);
    return;
  }
  --s.streams;
  live_streams_.erase(st);
  st->close();
  if (!s.waiting.empty() && s.streams < kMaxStreamsPerSpace && !closing) {
    auto next = std::move(s.waiting.front());
    s.waiting.pop_front();
    ++s.streams;
    open_stream(s.id, true, std::move(next));
  }
}

void DispatcherImpl::on_idle(uv_timer_t* t) noexcept {
  auto* st = static_cast<InnerStream*>(t->data);
  // Leaves the idle list the same way as a stream that broke there.
  st->dispatcher().stream_gone(st);
}

void DispatcherImpl::stream_gone(InnerStream* st) {
  if (st == nullptr) return maybe_closed();
  SpaceState& s = space(st->space());
  for (auto it = s.idle.begin(); it != s.idle.end(); ++it) {
    if (*it == st) {
      s.idle.erase(it);
      --s.streams;
      live_streams_.erase(st);
      st->close();
      return;
    }
  }
}

void DispatcherImpl::forget_session(const std::string& id) {
  SpaceState& s = space(id);
  s.cookie.clear();
}

void DispatcherImpl::finished(Exchange* e) {
  exchanges.erase(e);
  maybe_closed();
}

void DispatcherImpl::finished(SocketRelay* r) {
  relays.erase(r);
  maybe_closed();
}

std::size_t DispatcherImpl::open_for(const std::string& id) const {
  auto it = spaces_.find(id);
  return it == spaces_.end() ? 0 : it->second.open;
}

void DispatcherImpl::take(uv_stream_t* client, std::string space_id, RequestHead head, std::string already_read, Giveback done) {
  const bool socket = is_websocket_request(head);
  if (closing) {
    if (config.answered) config.answered(refusal_status(Refusal::kSpaceUnreachable));
    write_client(*this, client, refusal_answer(Refusal::kSpaceUnreachable, false),
                 [client, done = std::move(done)](bool) { done(client, {}, false); });
    return;
  }
  std::optional<SpaceTarget> target = parse_space_target(head.target);
  if (!target || target->id != space_id) {
    const bool keep = !socket && head.version == "HTTP/1.1";
    if (config.answered) config.answered(refusal_status(Refusal::kSpaceNotFound));
    write_client(*this, client, refusal_answer(Refusal::kSpaceNotFound, keep),
                 [client, keep, done = std::move(done), rest = std::move(already_read)](bool ok) mutable {
                   done(client, ok && keep ? std::move(rest) : std::string(), ok && keep);
                 });
    return;
  }
  if (socket) return start_socket(*this, client, std::move(*target), std::move(head), std::move(already_read), std::move(done));
  start_exchange(*this, client, std::move(*target), std::move(head), std::move(already_read), std::move(done));
}

void DispatcherImpl::close_all(std::function<void()> closed) {
  closing = true;
  on_closed_ = std::move(closed);
  abort_all_exchanges(*this);
  for (auto& [id, s] : spaces_) {
    for (InnerStream* st : s.idle) {
      live_streams_.erase(st);
      st->close();
    }
    s.idle.clear();
    std::deque<std::function<void(InnerStream*, std::optional<Failure>)>> waiting;
    waiting.swap(s.waiting);
    for (auto& w : waiting) w(nullptr, fail(Code::kInterrupted, "the dispatcher is closing"));
    std::vector<std::function<void(std::optional<Refusal>)>> logins;
    logins.swap(s.login_waiters);
    for (auto& l : logins) l(Refusal::kSpaceUnreachable);
  }
  maybe_closed();
}

void DispatcherImpl::maybe_closed() {
  if (!closing || !on_closed_) return;
  if (pending_work_ != 0 || !exchanges.empty() || !relays.empty() || !deferred_.empty()) return;
  for (InnerStream* st : live_streams_) st->close();
  live_streams_.clear();
  if (!idle_open_) return;
  idle_open_ = false;
  // Streams delete themselves in their close callbacks; the idle handle's close comes after
  // theirs (libuv runs close callbacks in order), so `closed` runs once nothing is left.
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), [](uv_handle_t* h) noexcept {
    auto* d = static_cast<DispatcherImpl*>(h->data);
    auto cb = std::move(d->on_closed_);
    d->on_closed_ = nullptr;
    if (cb) cb();
  });
}

Dispatcher::Dispatcher(DispatcherConfig config) : impl_(std::make_unique<DispatcherImpl>(std::move(config))) {}
Dispatcher::~Dispatcher() = default;

void Dispatcher::take(uv_stream_t* client, std::string space_id, RequestHead head, std::string already_read, Giveback done) {
  impl_->take(client, std::move(space_id), std::move(head), std::move(already_read), std::move(done));
}

void Dispatcher::close_all(std::function<void()> closed) { impl_->close_all(std::move(closed)); }

std::size_t Dispatcher::open_for(const std::string& id) const { return impl_->open_for(id); }

}  // namespace controller::dispatch
