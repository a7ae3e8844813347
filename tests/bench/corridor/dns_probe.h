// One DNS A query over UDP to the benchmark's dnsmasq: tells when it is up, and gives the DNS
// round trip that the corridor pays on every CONNECT (it resolves each name once per tunnel and
// keeps no cache; squid and tinyproxy are given the address literal).
#pragma once

#include <optional>
#include <string>

namespace bench {

// Milliseconds until an answer to "A <name>" arrived from server:53; nullopt after timeout_ms.
std::optional<double> dns_query_ms(const std::string& server, const std::string& name, int timeout_ms);

}  // namespace bench
