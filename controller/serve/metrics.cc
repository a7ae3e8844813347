#include "controller/serve/metrics.h"

#include <cstdio>
#include <set>

namespace controller::serve {

namespace {

// A label value in the exposition format: backslash, double quote and newline escaped. Values
// are ours (operation kinds, state words), but a state word comes from a listing: escape anyway.
std::string label(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

void Metrics::operation_finished(const std::string& kind, const std::string& result,
                                 double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++operations_[{kind, result}];
  Histogram& h = durations_[kind];
  for (std::size_t i = 0; i < std::size(kDurationBuckets); ++i) {
    if (seconds <= kDurationBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::dispatcher_answered(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++dispatcher_[status];
}

void Metrics::api_answered(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++api_[status];
}

std::string Metrics::render(const SpaceList* list, std::size_t running) const {
  std::string out;
  const bool listed = list != nullptr;
  out +=
      "# HELP spacectl_place_up Whether the place answered the listing of this scrape (1) or not "
      "(0).\n";
  out += "# TYPE spacectl_place_up gauge\n";
  out += std::string("spacectl_place_up ") + (listed ? "1" : "0") + "\n";
  out += "# HELP spacectl_spaces Spaces of this owner by state (as GET /v1/spaces lists them).\n";
  out += "# TYPE spacectl_spaces gauge\n";
  if (listed) {
    // Every state serve lists, so a state with no space reads 0 rather than missing.
    std::map<std::string, std::uint64_t> by_state;
    for (const SpaceState state : kAllSpaceStates) by_state[std::string(state_word(state))] = 0;
    for (const SpaceView& s : list->spaces) ++by_state[std::string(state_word(s.state))];
    for (const auto& [state, n] : by_state) {
      out += "spacectl_spaces{state=\"" + label(state) + "\"} " + std::to_string(n) + "\n";
    }
  }
  out += "# HELP spacectl_operations_running Long operations running now.\n";
  out += "# TYPE spacectl_operations_running gauge\n";
  out += "spacectl_operations_running " + std::to_string(running) + "\n";

  std::lock_guard<std::mutex> lock(mutex_);
  out +=
      "# HELP spacectl_operations_total Long operations finished, by kind and result (done or "
      "failed).\n";
  out += "# TYPE spacectl_operations_total counter\n";
  for (const auto& [key, n] : operations_) {
    out += "spacectl_operations_total{kind=\"" + label(key.first) + "\",result=\"" +
           label(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP spacectl_operation_duration_seconds How long finished long operations took, by "
      "kind.\n";
  out += "# TYPE spacectl_operation_duration_seconds histogram\n";
  for (const auto& [kind, h] : durations_) {
    const std::string k = "kind=\"" + label(kind) + "\"";
    for (std::size_t i = 0; i < std::size(kDurationBuckets); ++i) {
      out += "spacectl_operation_duration_seconds_bucket{" + k + ",le=\"" +
             number(kDurationBuckets[i]) + "\"} " + std::to_string(h.buckets[i]) + "\n";
    }
    out += "spacectl_operation_duration_seconds_bucket{" + k + ",le=\"+Inf\"} " +
           std::to_string(h.count) + "\n";
    out += "spacectl_operation_duration_seconds_sum{" + k + "} " + number(h.sum) + "\n";
    out += "spacectl_operation_duration_seconds_count{" + k + "} " + std::to_string(h.count) + "\n";
  }
  out +=
      "# HELP spacectl_dispatcher_requests_total Requests and sockets for spaces' inner servers, "
      "by the status answered.\n";
  out += "# TYPE spacectl_dispatcher_requests_total counter\n";
  for (const auto& [status, n] : dispatcher_) {
    out += "spacectl_dispatcher_requests_total{status=\"" + std::to_string(status) + "\"} " +
           std::to_string(n) + "\n";
  }
  out += "# HELP spacectl_api_requests_total Answers of serve's own routes, by status.\n";
  out += "# TYPE spacectl_api_requests_total counter\n";
  for (const auto& [status, n] : api_) {
    out += "spacectl_api_requests_total{status=\"" + std::to_string(status) + "\"} " +
           std::to_string(n) + "\n";
  }
  return out;
}

}  // namespace controller::serve
