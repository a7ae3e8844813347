// What every listener and connection of `gatekeeper serve` shares: the loop, the options, the
// live policy (mode, allowlist, grants), the journal, the metrics and the resolver. One per
// process; lives on serve_main's stack for the whole loop run.
#pragma once

#include <uv.h>

#include <array>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "appliance/serve/journal.h"
#include "appliance/serve/metrics.h"
#include "appliance/serve/options.h"
#include "policy/address.h"
#include "policy/control_messages.h"
#include "policy/corridor.h"
#include "policy/secret.h"

namespace appliance::serve {

class CorridorConnection;
class NameResolver;
class TcpListener;
class TlsContext;
class UpstreamPool;

struct ServeContext {
  ServeContext(uv_loop_t* l, ServeOptions o) : loop(l), options(std::move(o)), journal(l, metrics) {}

  uv_loop_t* loop;
  ServeOptions options;
  Metrics metrics;
  Journal journal;
  policy::NetworkPolicy network;               // initial: allowlist, empty (nothing allowed)
  // Ranges the operator blocks on top of the table: --block at start, POST /blocked later.
  std::vector<policy::Range> blocked = options.blocked;
  std::map<std::string, policy::Grant> grants;  // used by the window
  NameResolver* resolver = nullptr;
  // The window: the key every window request carries (set by POST /window-key, held
  // like a secret), the TLS client context, the upstream pool, and the ports really bound (for
  // the own-listener rule).
  std::optional<policy::Secret> window_key;
  const TlsContext* tls = nullptr;
  UpstreamPool* upstream_pool = nullptr;
  std::array<std::uint16_t, kListenerCount> own_ports{};
  std::array<TcpListener*, kListenerCount> listeners{};
  std::size_t open_tunnels = 0;
  // Every corridor connection past its CONNECT decision, so a stricter policy reaches live tunnels.
  std::list<CorridorConnection*> corridor_connections;

  // Own interface addresses, refreshed at most once a second (a later-added interface is
  // covered; the reference read them once at start, docs/reference-behaviour.md#window-grants).
  const std::vector<policy::Address>& own_addresses();
  std::vector<policy::Address> own_cache;
  std::uint64_t own_cache_at = 0;
  bool own_cache_valid = false;

  [[nodiscard]] ListenerGauges gauges() const;
};

}  // namespace appliance::serve
