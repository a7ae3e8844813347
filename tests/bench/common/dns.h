// DNS for the benchmarks: dnsmasq inside the benchmark namespace as the only name server the
// gatekeeper is given, and one A query over UDP to it, which tells when it is up and gives the
// DNS round trip the gatekeeper pays (the corridor resolves once per tunnel, the window once per
// request; neither keeps a cache).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "tests/bench/common/netns.h"

namespace bench {

// Milliseconds until an answer to "A <name>" arrived from server:53; nullopt after timeout_ms.
std::optional<double> dns_query_ms(const std::string& server, const std::string& name, int timeout_ms);

// dnsmasq on <inside ip>:53 of `net`: `name` (inside `domain`) → the inside ip. The pid once it
// answers `name`; -1 with *error set (nothing left running) otherwise.
pid_t start_dnsmasq(const TestNetwork& net, const std::string& name, const std::string& domain, std::string* error);

// How often a benchmark asks dnsmasq for the context row: the median of these.
inline constexpr int kDnsSamples = 200;
// Median of kDnsSamples A queries for `name`, in ms; -1 when none was answered.
double dns_median_ms(const std::string& server, const std::string& name);

}  // namespace bench
