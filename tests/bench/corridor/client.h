// The client side of every measurement (this process; the proxies and the upstream are others).
// A route is either direct TCP to the upstream or a CONNECT through a proxy on 127.0.0.1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct Route {
  std::string name;
  bool via_proxy = false;
  std::uint16_t proxy_port = 0;
  std::string target;       // CONNECT authority when via_proxy
  std::string upstream_ip;  // direct: where to connect (port 443)
};

// A connected socket that reaches the upstream (after the 200 when via a proxy); -1 and *error.
int open_route(const Route& route, std::string* error);
// Opens a route and sees PING answered by the upstream.
bool ping_route(const Route& route, std::string* error);

struct Latency {
  double p50_ms = 0;  // nearest rank (common/report.h)
  double p99_ms = 0;
  int failures = 0;
  std::string first_failure;
  bool ok = false;
  std::vector<double> samples;  // every successful connection, ms, ascending
};
// One Latency from the rounds of one path (samples pooled, failures summed).
Latency combine(const std::vector<Latency>& rounds);
// `count` fresh connections, one at a time: from connect() to the end of the 200 head (direct:
// until connect() returns). With ping_after, the time until PONG also counts: direct connect + one
// round trip to the upstream, the floor any CONNECT proxy's answer sits on.
Latency connect_latency(const Route& route, int count, bool ping_after);

enum class Flow : std::uint8_t { kDownload, kUpload };
struct Transfer {
  double mib_per_s = 0;
  bool ok = false;
  std::string error;
};
// `tunnels` routes opened first (not timed), then `bytes_each` moved through each at once; time
// from the first command to the last byte (download) or the last "OK" (upload).
Transfer transfer(const Route& route, int tunnels, std::uint64_t bytes_each, Flow flow);

// Opens `count` routes and pings through each; the caller closes the fds. Empty on failure.
std::vector<int> hold_tunnels(const Route& route, int count, std::string* error);

}  // namespace bench
