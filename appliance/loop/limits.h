// The loop's sizes, defined once for every stream the gatekeeper relays (the corridor's tunnels,
// the window's client and upstream sides) and for the controller's servers.
#pragma once

#include <cstddef>

namespace appliance::loop {

// One read buffer (alloc_chunk): a TLS record and a bit, a good share of a socket buffer.
inline constexpr std::size_t kReadChunk = 64 * 1024;
// Read buffers kept for reuse when freed (alloc_chunk, free_chunk): enough for the reads of one
// loop turn's callbacks that do not keep their chunk (the window frees each after parsing it).
inline constexpr std::size_t kStockedChunks = 4;
// Backpressure: the side that feeds a stream stops being read while the stream's write queue is
// above kHighWater and is read again once it is below kLowWater (the gap keeps a slow reader
// from toggling reads on every write).
inline constexpr std::size_t kHighWater = 256 * 1024;
inline constexpr std::size_t kLowWater = 64 * 1024;
// Bytes a client may send before the other side is ready (the corridor before its 200, the window
// before its upstream connected); past it the client is not read until then (backpressure, not a
// refusal).
inline constexpr std::size_t kMaxHeldBytes = 64 * 1024;

}  // namespace appliance::loop
