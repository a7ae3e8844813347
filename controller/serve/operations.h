// Long work of `spacectl serve` (create, code in, history, escape-test) runs on a thread of its own
// and is answered at once (202) with an operation id; its progress lines become events a client
// reads as SSE. A finished operation stays listed (done or failed, with its failure) until it is
// dismissed or serve ends. Threads never touch libuv: they append under the mutex and wake the
// loop with uv_async_send.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/errors.h"

namespace controller::serve {

inline constexpr std::size_t kMaxEventsKept = 4096;  // per operation; older ones are dropped
inline constexpr std::size_t kMaxOperationsKept = 256;  // finished ones past it are forgotten, oldest first

struct Operation {
  std::string id, kind, space;
  std::string state = "running";  // running, done, failed
  std::string started;
  std::vector<nlohmann::json> events;  // {seq, step, time}
  std::size_t first_seq = 0;           // seq of events[0] (older ones dropped)
  nlohmann::json result;
  nlohmann::json failure;  // {code, message}
};

using Say = std::function<void(const std::string& step)>;
using Work = std::function<Result<nlohmann::json>(const Say& say)>;

class Operations {
 public:
  explicit Operations(uv_loop_t* loop);
  ~Operations();  // joins every thread (call close() on the loop first)
  Operations(const Operations&) = delete;
  Operations& operator=(const Operations&) = delete;

  // Starts `work` on a thread of its own; answers the new operation's id.
  std::string start(const std::string& kind, const std::string& space, Work work);
  // {id, kind, space, state, started, step, result?, failure?}; nullopt-like null when unknown.
  [[nodiscard]] nlohmann::json describe(const std::string& id) const;
  [[nodiscard]] nlohmann::json list() const;
  // Forgets a finished operation; false when unknown or still running.
  bool dismiss(const std::string& id);
  // Events from seq on, whether the operation has finished, and the next seq. False: unknown.
  bool events_since(const std::string& id, std::size_t seq, std::vector<nlohmann::json>& out, bool& finished,
                    std::size_t& next) const;
  [[nodiscard]] std::size_t running() const;
  // Runs on the loop after any operation changed (events to push to SSE readers).
  void on_change(std::function<void()> callback) { on_change_ = std::move(callback); }
  // Runs on the operation's thread as it ends: kind, "done" or "failed", seconds it took. Set
  // before the first start (metrics).
  void on_finished(std::function<void(const std::string&, const std::string&, double)> callback) {
    finished_ = std::move(callback);
  }
  void close();  // closes the async handle (the loop must run once more)
  void join();   // waits for every thread

 private:
  static void on_async(uv_async_t* handle) noexcept;
  void say(const std::shared_ptr<Operation>& op, const std::string& step);

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Operation>> ops_;
  std::vector<std::string> order_;  // ids, oldest first
  std::vector<std::thread> threads_;
  uv_async_t* async_ = nullptr;  // freed in its close callback
  std::function<void()> on_change_;
  std::function<void(const std::string&, const std::string&, double)> finished_;
};

}  // namespace controller::serve
