// Counters for GET /metrics (Prometheus text exposition format 0.0.4).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "policy/decision.h"
#include "policy/journal_record.h"

namespace appliance::serve {

inline constexpr std::size_t kListenerCount = 3;
inline std::size_t listener_index(policy::Listener listener) {
  return static_cast<std::size_t>(listener);
}

struct ListenerGauges {
  std::array<std::size_t, kListenerCount> open_sockets{};
  std::size_t open_tunnels = 0;
  std::size_t dns_outstanding = 0;  // c-ares queries not yet answered, cancelled ones included
};

class Metrics {
 public:
  void accepted(policy::Listener l) { ++accepted_[listener_index(l)]; }
  void dropped_over_cap(policy::Listener l) { ++over_cap_[listener_index(l)]; }
  void decided(policy::Listener l, policy::Word w) { ++decisions_[{listener_index(l), w}]; }
  void refused(policy::Listener l, int status) { ++refusals_[{listener_index(l), status}]; }
  void relayed_up(std::uint64_t n) { bytes_up_ += n; }
  void relayed_down(std::uint64_t n) { bytes_down_ += n; }
  void tunnel_opened() { ++tunnels_total_; }

  [[nodiscard]] std::string prometheus(const ListenerGauges& gauges) const;

 private:
  std::array<std::uint64_t, kListenerCount> accepted_{};
  std::array<std::uint64_t, kListenerCount> over_cap_{};
  std::map<std::pair<std::size_t, policy::Word>, std::uint64_t> decisions_;
  std::map<std::pair<std::size_t, int>, std::uint64_t> refusals_;
  std::uint64_t bytes_up_ = 0;    // client → upstream
  std::uint64_t bytes_down_ = 0;  // upstream → client
  std::uint64_t tunnels_total_ = 0;
};

}  // namespace appliance::serve
