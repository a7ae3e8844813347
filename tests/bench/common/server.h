// What the benchmarks' upstreams share: a non-blocking listening socket and the epoll loop they
// serve from, in a child forked into the benchmark namespace (fork_until_ready) and killed at the
// end; the loop itself never ends.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// A non-blocking listener on ip:port (SO_REUSEADDR); -1 after printing why to stderr.
int listen_ipv4(const std::string& ip, std::uint16_t port);

// Adds `listeners` to epfd (EPOLLIN), writes "ready\n" to ready_fd, then waits forever: a
// readable listener goes to on_accept, any other fd's events to on_event. Returns 1 when
// epoll or the ready pipe fails.
int serve_forever(int epfd, const std::vector<int>& listeners, int ready_fd, const std::function<void(int)>& on_accept,
                  const std::function<void(int, std::uint32_t)>& on_event);

}  // namespace bench
