#include "tests/bench/window/stream.h"

#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bench {

void Stream::open(int fd, bssl::UniquePtr<SSL> ssl) {
  reset();
  fd_ = fd;
  ssl_ = std::move(ssl);
  error_.clear();
  if (ssl_) {
    // A retried SSL_write may pass the same bytes from a moved buffer; writes may be partial.
    SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_set_fd(ssl_.get(), fd);
  }
}

void Stream::reset() {
  ssl_.reset();
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

IoResult Stream::tls_result(int ret, const char* what) {
  if (ret > 0) return {Io::kMoved, static_cast<std::size_t>(ret)};
  switch (SSL_get_error(ssl_.get(), ret)) {
    case SSL_ERROR_WANT_READ:
      return {Io::kWantRead, 0};
    case SSL_ERROR_WANT_WRITE:
      return {Io::kWantWrite, 0};
    case SSL_ERROR_ZERO_RETURN:
      return {Io::kEof, 0};
    case SSL_ERROR_SYSCALL:
      // A TCP FIN without close_notify: the peer closed, as plain HTTP would.
      if (ERR_peek_error() == 0 && ret == 0) return {Io::kEof, 0};
      error_ = std::string(what) + ": " + std::strerror(errno);
      return {Io::kError, 0};
    default: {
      char text[256];
      ERR_error_string_n(ERR_get_error(), text, sizeof text);
      ERR_clear_error();
      error_ = std::string(what) + ": " + text;
      return {Io::kError, 0};
    }
  }
}

IoResult Stream::socket_result(long ret, Io again, const char* what) {
  if (ret > 0) return {Io::kMoved, static_cast<std::size_t>(ret)};
  if (ret == 0) return {Io::kEof, 0};
  if (errno == EAGAIN || errno == EINTR) return {again, 0};
  error_ = std::string(what) + ": " + std::strerror(errno);
  return {Io::kError, 0};
}

IoResult Stream::handshake() {
  if (!ssl_) return {Io::kMoved, 0};
  const int ret = SSL_do_handshake(ssl_.get());
  return ret == 1 ? IoResult{Io::kMoved, 0} : tls_result(ret, "TLS handshake");
}

IoResult Stream::read(char* buffer, std::size_t capacity) {
  if (ssl_) return tls_result(SSL_read(ssl_.get(), buffer, static_cast<int>(capacity)), "TLS read");
  return socket_result(recv(fd_, buffer, capacity, 0), Io::kWantRead, "recv");
}

IoResult Stream::write(const char* data, std::size_t length) {
  if (ssl_) return tls_result(SSL_write(ssl_.get(), data, static_cast<int>(length)), "TLS write");
  const ssize_t n = send(fd_, data, length, MSG_NOSIGNAL);
  if (n == 0) return {Io::kWantWrite, 0};
  return socket_result(n, Io::kWantWrite, "send");
}

}  // namespace bench
