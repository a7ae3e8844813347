#include "appliance/serve/metrics.h"

namespace appliance::serve {
namespace {

std::string_view name_of(std::size_t index) {
  return policy::listener_text(static_cast<policy::Listener>(index));
}

void line(std::string& out, std::string_view name, std::string_view labels, std::uint64_t value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  out += std::to_string(value);
  out += '\n';
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

}  // namespace

std::string Metrics::prometheus(const ListenerGauges& gauges) const {
  std::string out;
  header(out, "gatekeeper_connections_accepted_total", "counter", "Sockets accepted per listener.");
  for (std::size_t i = 0; i < kListenerCount; ++i) {
    line(out, "gatekeeper_connections_accepted_total",
         "listener=\"" + std::string(name_of(i)) + "\"", accepted_[i]);
  }
  header(out, "gatekeeper_connections_over_cap_total", "counter",
         "Sockets closed at once because the listener's socket cap was reached.");
  for (std::size_t i = 0; i < kListenerCount; ++i) {
    line(out, "gatekeeper_connections_over_cap_total",
         "listener=\"" + std::string(name_of(i)) + "\"", over_cap_[i]);
  }
  header(out, "gatekeeper_open_sockets", "gauge", "Sockets currently open per listener.");
  for (std::size_t i = 0; i < kListenerCount; ++i) {
    line(out, "gatekeeper_open_sockets", "listener=\"" + std::string(name_of(i)) + "\"",
         gauges.open_sockets[i]);
  }
  header(out, "gatekeeper_decisions_total", "counter",
         "Journal decisions per listener and decision word (detail omitted), notes included "
         "even when rate-limited.");
  for (const auto& [key, value] : decisions_) {
    line(out, "gatekeeper_decisions_total",
         "listener=\"" + std::string(name_of(key.first)) + "\",decision=\"" +
             std::string(policy::word_text(key.second)) + "\"",
         value);
  }
  header(out, "gatekeeper_refused_connections_total", "counter",
         "Connections answered with a refusal status line, per listener and status.");
  for (const auto& [key, value] : refusals_) {
    line(out, "gatekeeper_refused_connections_total",
         "listener=\"" + std::string(name_of(key.first)) + "\",status=\"" +
             std::to_string(key.second) + "\"",
         value);
  }
  header(out, "gatekeeper_open_tunnels", "gauge", "Corridor tunnels resolving, connecting or open.");
  line(out, "gatekeeper_open_tunnels", "", gauges.open_tunnels);
  header(out, "gatekeeper_dns_queries_outstanding", "gauge",
         "c-ares queries not yet answered, including those whose connection went away.");
  line(out, "gatekeeper_dns_queries_outstanding", "", gauges.dns_outstanding);
  header(out, "gatekeeper_tunnels_established_total", "counter", "Tunnels that answered 200.");
  line(out, "gatekeeper_tunnels_established_total", "", tunnels_total_);
  header(out, "gatekeeper_relayed_bytes_total", "counter", "Bytes relayed through tunnels.");
  line(out, "gatekeeper_relayed_bytes_total", "direction=\"upstream\"", bytes_up_);
  line(out, "gatekeeper_relayed_bytes_total", "direction=\"downstream\"", bytes_down_);
  return out;
}

}  // namespace appliance::serve
