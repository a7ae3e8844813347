#include "controller/serve/operations.h"

#include <algorithm>
#include <chrono>

#include "controller/ids.h"
#include "controller/records.h"       // now_utc_iso

namespace controller::serve {

using nlohmann::json;

Operations::Operations(uv_loop_t* loop) {
  async_ = new uv_async_t{};
  uv_async_init(loop, async_, on_async);
  async_->data = this;
}

Operations::~Operations() { join(); }

void Operations::on_async(uv_async_t* handle) noexcept {
  auto* self = static_cast<Operations*>(handle->data);
  if (self != nullptr && self->on_change_) self->on_change_();
}

void Operations::close() {
  // Under the mutex: a thread finishing now either sends before the close or sees no handle.
  std::lock_guard<std::mutex> lock(mutex_);
  if (async_ == nullptr) return;
  async_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(async_), [](uv_handle_t* h) noexcept { delete reinterpret_cast<uv_async_t*>(h); });
  async_ = nullptr;
}

void Operations::join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) {
    if (t.joinable()) t.join();
  }
}

void Operations::say(const std::shared_ptr<Operation>& op, const std::string& step) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    op->events.push_back({{"seq", op->first_seq + op->events.size()}, {"step", step}, {"time", now_utc_iso()}});
    if (op->events.size() > kMaxEventsKept) {
      op->events.erase(op->events.begin());
      ++op->first_seq;
    }
    if (async_ != nullptr) uv_async_send(async_);
  }
}

std::string Operations::start(const std::string& kind, const std::string& space, Work work) {
  auto op = std::make_shared<Operation>();
  op->id = random_hex(8);
  op->kind = kind;
  op->space = space;
  op->started = now_utc_iso();
  std::lock_guard<std::mutex> lock(mutex_);
  ops_[op->id] = op;
  order_.push_back(op->id);
  // Forget the oldest finished ones past the cap.
  while (order_.size() > kMaxOperationsKept) {
    auto it = std::find_if(order_.begin(), order_.end(), [&](const std::string& id) { return ops_[id]->state != "running"; });
    if (it == order_.end()) break;
    ops_.erase(*it);
    order_.erase(it);
  }
  threads_.emplace_back([this, op, work = std::move(work)] {
    const auto began = std::chrono::steady_clock::now();
    Result<json> r = work([this, op](const std::string& step) { say(op, step); });
    if (finished_) {
      finished_(op->kind, r ? "done" : "failed",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    }
    std::lock_guard<std::mutex> done(mutex_);
    if (r) {
      op->state = "done";
      op->result = std::move(*r);
    } else {
      op->state = "failed";
      op->failure = {{"code", std::string(code_word(r.error().code))}, {"message", r.error().message}};
    }
    op->events.push_back({{"seq", op->first_seq + op->events.size()}, {"step", op->state}, {"time", now_utc_iso()}});
    if (async_ != nullptr) uv_async_send(async_);
  });
  return op->id;
}

namespace {
json describe_locked(const Operation& op) {
  json out = {{"id", op.id}, {"kind", op.kind}, {"space", op.space.empty() ? json(nullptr) : json(op.space)},
              {"state", op.state}, {"started", op.started},
              {"step", op.events.empty() ? json(nullptr) : op.events.back()["step"]}};
  if (op.state == "done") out["result"] = op.result;
  if (op.state == "failed") out["failure"] = op.failure;
  return out;
}
}  // namespace

json Operations::describe(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ops_.find(id);
  return it == ops_.end() ? json(nullptr) : describe_locked(*it->second);
}

json Operations::list() const {
  std::lock_guard<std::mutex> lock(mutex_);
  json out = json::array();
  for (const std::string& id : order_) out.push_back(describe_locked(*ops_.at(id)));
  return out;
}

bool Operations::dismiss(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ops_.find(id);
  if (it == ops_.end() || it->second->state == "running") return false;
  ops_.erase(it);
  order_.erase(std::remove(order_.begin(), order_.end(), id), order_.end());
  return true;
}

bool Operations::events_since(const std::string& id, std::size_t seq, std::vector<json>& out, bool& finished,
                              std::size_t& next) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ops_.find(id);
  if (it == ops_.end()) return false;
  const Operation& op = *it->second;
  const std::size_t from = seq < op.first_seq ? 0 : seq - op.first_seq;
  for (std::size_t i = from; i < op.events.size(); ++i) out.push_back(op.events[i]);
  next = op.first_seq + op.events.size();
  finished = op.state != "running";
  return true;
}

std::size_t Operations::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t n = 0;
  for (const auto& [id, op] : ops_) n += op->state == "running";
  return n;
}

}  // namespace controller::serve
