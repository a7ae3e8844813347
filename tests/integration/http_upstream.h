// A test HTTP/1.1 upstream for the window, plain or TLS (a test CA made here with BoringSSL),
// served from a socket inside the test namespace. Keep-alive; one thread per connection. It
// records every request and, for credential headers, only the sha256 of their values.
//   <any>/sse     chunked: "data: one\n\n", then waits for release_sse(), then "data: two\n\n"
//   <any>/hang    reads the request, never answers, waits for the window to close
//   <any>/upload  answers the sha256 of the body it read
//   <any>/big     16 MiB of fill_pattern(7) with a Content-Length
//   <any>/eof     200 "until the close\n" with no length, then closes (RFC 9112 §6.3 item 8)
//   <any>/drop    reads the request, then closes without answering
//   anything else 200 "ok <target>\n"
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gk_it {

// A CA and a leaf certificate for `names` (DNS SANs), written as PEM into `dir`:
// ca.pem (the bundle to pass as --ca-file).
struct TestPki {
  bool ok = false;
  std::string ca_file;
  bssl::UniquePtr<X509> leaf;
  bssl::UniquePtr<EVP_PKEY> leaf_key;
};
TestPki make_test_pki(const std::string& dir, const std::vector<std::string>& names);

std::string sha256_hex(std::string_view bytes);

struct SeenRequest {
  std::string method, target, host;
  std::map<std::string, std::string> credential_sha256;  // lower-case name → sha256 of the value
  std::vector<std::string> header_names;                  // lower-case, in order
  std::string body_sha256;
};

class HttpUpstream {
 public:
  // listen_fd: from TestNet::listen_in_namespace. pki null: plain HTTP.
  HttpUpstream(int listen_fd, const TestPki* pki);
  ~HttpUpstream();
  std::vector<SeenRequest> requests();
  std::atomic<int> connections{0};
  std::atomic<int> hits{0};
  std::atomic<int> hang_closed{0};
  std::atomic<bool> sse_released_in_time{false};
  void release_sse();

 private:
  void serve();
  void session(int fd);
  int listen_fd_;
  bssl::UniquePtr<SSL_CTX> ctx_;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::vector<SeenRequest> seen_;
  std::atomic<bool> stopping_{false};
  std::mutex sse_mutex_;
  std::condition_variable sse_cv_;
  bool sse_release_ = false;
};

}  // namespace gk_it
