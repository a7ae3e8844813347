#include "controller/gatekeeper_channel.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "controller/signals.h"
#include "controller/spec.h"

namespace controller {

namespace {

std::string control_what(const std::string& id, const std::string& method,
                         const std::string& path) {
  return "gatekeeper control " + method + " " + path + " in " + names_for(id).gatekeeper;
}

Result<ExecOutput> control_exec(Place& place, const std::string& id, const std::string& method,
                                const std::string& path, const std::string& body) {
  const std::vector<std::string> argv = {std::string(kGatekeeperBinary), "control", method, path};
  Result<ExecOutput> r = place.exec(id, ExecTarget::kGatekeeper, argv, body, kControlTimeout);
  if (!r) return r.error();
  if (r->out.size() > kMaxControlAnswer) {
    return fail(Code::kGatekeeperRefused, control_what(id, method, path) + ": answer over 1 MiB");
  }
  return r;
}

// A control call that did not succeed: the gatekeeper's {"error": "..."} when it printed one.
Failure control_failure(const ExecOutput& r, const std::string& what) {
  nlohmann::json answer = nlohmann::json::parse(r.out, nullptr, false);
  if (!answer.is_discarded() && answer.is_object() && answer.contains("error") &&
      answer["error"].is_string()) {
    return fail(Code::kGatekeeperRefused, what + ": " + answer["error"].get<std::string>());
  }
  std::string err = r.err.substr(0, 300);
  while (!err.empty() && err.back() == '\n') err.pop_back();
  return fail(Code::kGatekeeperUnreachable,
              what + ": exit " + std::to_string(r.exit_code) + (err.empty() ? "" : ": " + err));
}

}  // namespace

Result<nlohmann::json> gatekeeper_control(Place& place, const std::string& id,
                                          const std::string& method, const std::string& path,
                                          const std::string& body) {
  Result<ExecOutput> r = control_exec(place, id, method, path, body);
  if (!r) return r.error();
  nlohmann::json answer = nlohmann::json::parse(r->out, nullptr, false);
  if (r->exit_code == 0 && !answer.is_discarded()) return answer;
  return control_failure(*r, control_what(id, method, path));
}

Result<std::string> gatekeeper_control_text(Place& place, const std::string& id,
                                            const std::string& method, const std::string& path) {
  Result<ExecOutput> r = control_exec(place, id, method, path, {});
  if (!r) return r.error();
  if (r->exit_code == 0) return std::move(r->out);
  return control_failure(*r, control_what(id, method, path));
}

Result<void> wait_gatekeeper_ready(Place& place, const std::string& id) {
  const auto deadline = std::chrono::steady_clock::now() + kReadyDeadline;
  std::string last = "no answer";
  std::chrono::milliseconds pause = kReadyFirstInterval;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop_requests() > 0) return fail(Code::kInterrupted, "gatekeeper " + names_for(id).gatekeeper + ": waiting for /health stopped by a signal");
    Result<nlohmann::json> health = gatekeeper_control(place, id, "GET", "/health");
    if (health && health->is_object() && health->value("ready", false)) return {};
    if (!health) {
      if (health.error().code == Code::kPlaceUnreachable ||
          health.error().code == Code::kSpaceNotFound) {
        return health.error();
      }
      last = health.error().message;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, kReadyInterval);
  }
  return fail(Code::kGatekeeperNotReady, "gatekeeper " + names_for(id).gatekeeper +
                                             ": /health not ready within 60 s; last: " + last);
}

Result<void> deliver_window_key(Place& place, const std::string& id, const std::string& key) {
  Result<nlohmann::json> r = gatekeeper_control(place, id, "POST", "/window-key", nlohmann::json{{"key", key}}.dump());
  if (!r) return r.error();
  return {};
}

}  // namespace controller
