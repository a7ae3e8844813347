// The host guard of a Podman inner network. Podman keeps the gateway address on an internal
// network's bridge (its DNS server listens there) and only turns routing off, so a space on it
// could still connect to any service the host runs on that address or on any other host address
// (local delivery needs no routing). Docker's isolated gateway mode has no Podman equivalent; the
// guard is one DROP rule per address family in the host's INPUT chain for everything arriving on
// the bridge, tagged with the space (or probe) id. verify checks it is there before every start;
// the place check proves its effect by probing.
#pragma once

#include <string>
#include <string_view>

#include "controller/errors.h"

namespace controller {

// A Linux interface name (IFNAMSIZ - 1 bytes of [A-Za-z0-9_.-]): never an iptables option.
bool is_interface_name(std::string_view name);

// iptables and ip6tables: `-I INPUT -i IFACE -m comment --comment spacectl:TAG -j DROP`; and
// iptables `-I FORWARD -i IFACE -o IFACE … -j ACCEPT` so the bridge's own members reach each other
// where br_netfilter sends bridged frames through a FORWARD chain whose policy is DROP (Docker's).
Result<void> guard_add(const std::string& iface, const std::string& tag);
// Only the FORWARD same-bridge ACCEPT of guard_add, for a network whose members must reach each
// other but whose host address must stay reachable (the escape run's test upstream network on
// Podman, where its test resolver listens). guard_remove(tag) takes it away.
Result<void> bridge_members_accept(const std::string& iface, const std::string& tag);
// Both DROP rules are there (the FORWARD rule only lets the space reach its gatekeeper).
Result<bool> guard_present(const std::string& iface, const std::string& tag);
// Every rule tagged `tag`, on any interface, is gone (none is not an error): a network already
// removed no longer names its bridge.
Result<void> guard_remove(const std::string& tag);

}  // namespace controller
