// One non-blocking TCP socket, plain or TLS (BoringSSL on the fd itself), with the same read and
// write for the benchmark's client and its upstream: each call says whether it moved bytes, must
// wait for the socket to be readable or writable, or met EOF or an error.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace bench {

enum class Io : std::uint8_t { kMoved, kWantRead, kWantWrite, kEof, kError };

struct IoResult {
  Io status = Io::kError;
  std::size_t bytes = 0;  // when kMoved
};

class Stream {
 public:
  Stream() = default;
  ~Stream() { reset(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Takes fd (non-blocking). With ssl, TLS runs on it (the caller set the accept or connect state).
  void open(int fd, bssl::UniquePtr<SSL> ssl);
  void reset();  // closes the socket (no close_notify: both peers are ours and read to a length)
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] bool tls() const { return ssl_ != nullptr; }

  IoResult handshake();  // kMoved once done (at once for plain)
  IoResult read(char* buffer, std::size_t capacity);
  IoResult write(const char* data, std::size_t length);
  // What the last kError was ("recv: ECONNRESET", "TLS: CERTIFICATE_VERIFY_FAILED", ...).
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  IoResult tls_result(int ret, const char* what);
  IoResult socket_result(long ret, Io again, const char* what);
  int fd_ = -1;
  bssl::UniquePtr<SSL> ssl_;
  std::string error_;
};

}  // namespace bench
