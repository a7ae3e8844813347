// Prometheus metrics of `spacectl serve` itself (GET /v1/metrics, text exposition format 0.0.4):
// spaces by state (read from the place at scrape time), operations by kind and result with their
// durations, dispatcher answers by status, serve's own API answers by status. Counters live in
// memory and start at zero with each serve. Thread-safe: operations end on threads of their own.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "controller/results.h"

namespace controller::serve {

// Upper bounds (seconds) of the operation duration histogram: a code in of a small project takes
// seconds, a create with its history a minute, an escape-test several minutes.
inline constexpr double kDurationBuckets[] = {1, 5, 15, 60, 300, 900, 3600};

class Metrics {
 public:
  void operation_finished(const std::string& kind, const std::string& result, double seconds);
  void dispatcher_answered(int status);
  void api_answered(int status);
  // The exposition text. `list` is what GET /v1/spaces lists (null when the place could not be
  // read: spacectl_place_up 0 and no space gauge, never a count of zero), `running` the
  // operations running now.
  [[nodiscard]] std::string render(const SpaceList* list, std::size_t running) const;

 private:
  struct Histogram {
    std::vector<std::uint64_t> buckets = std::vector<std::uint64_t>(std::size(kDurationBuckets), 0);
    std::uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> operations_;  // (kind, result)
  std::map<std::string, Histogram> durations_;                               // kind
  std::map<int, std::uint64_t> dispatcher_, api_;                            // status
};

}  // namespace controller::serve
