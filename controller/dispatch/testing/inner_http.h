// The HTTP side of dispatch-inner-server (inner_http.cc).
#pragma once

namespace controller::dispatch::testing {

// Serves the listening socket `fd` until killed: one thread per connection. Prints "listening <port>\n".
int serve_http(int fd, const char* token_file, int session_seconds);
// The benchmark's direct row, run inside the space: n keep-alive GETs after one login.
int bench_client(int port, const char* token_file, int n);

}  // namespace controller::dispatch::testing
