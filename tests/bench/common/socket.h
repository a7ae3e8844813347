// Blocking IPv4 TCP for the benchmarks' set-up and control steps (the timed clients are their own
// epoll loops): every read and write has a kIoTimeoutMs deadline.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tests/support/socket_io.h"

namespace bench {

inline constexpr int kIoTimeoutMs = 20000;
inline constexpr std::size_t kHeadMax = 16 * 1024;

// ip (an IPv4 literal the benchmark made) and port as a socket address.
sockaddr_in ipv4_address(const std::string& ip, std::uint16_t port);
// A connected socket, or -1 with *error ("connect(ip:port): <strerror>") when error is not null.
int connect_ipv4(const std::string& ip, std::uint16_t port, std::string* error);
int connect_loopback(std::uint16_t port);  // 127.0.0.1; -1 on failure
using gk_test::send_all;
// Reads until the end of an HTTP head ("\r\n\r\n"), EOF, an error or kHeadMax bytes. Reads in
// blocks, so it may take bytes after the head: only for peers that send nothing unasked after it.
std::string read_head(int fd);
// The status of an "HTTP/1.x NNN" head; 0 when it is not one.
int http_status(const std::string& head);

}  // namespace bench
