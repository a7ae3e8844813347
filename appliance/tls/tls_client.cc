#include "appliance/tls/tls_client.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace appliance::serve {

policy::Result<std::unique_ptr<TlsContext>> TlsContext::open(const std::string& ca_file) {
  std::unique_ptr<TlsContext> context(new TlsContext);
  context->ca_file_ = ca_file;
  context->ca_fd_.reset(::open(ca_file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!context->ca_fd_) {
    return policy::Error{"open CA bundle " + ca_file + ": " + std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(context->ca_fd_.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      static_cast<std::uint64_t>(st.st_size) > kMaxCaBundleBytes) {
    return policy::Error{"CA bundle " + ca_file + ": not a regular file of 1 byte to 4 MiB"};
  }
  return context;
}

SSL_CTX* TlsContext::get() const noexcept {
  if (!built_) {
    built_ = true;
    auto built = build();
    ca_fd_.reset();
    if (built) {
      ctx_ = std::move(built.value());
    } else {
      error_ = built.error().message;
    }
  }
  return ctx_.get();
}

policy::Result<bssl::UniquePtr<SSL_CTX>> TlsContext::build() const {
  // The descriptor was opened before confinement; reading it needs only read(2).
  std::string pem;
  char buffer[16 * 1024];
  while (true) {
    const ssize_t n = ::read(ca_fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return policy::Error{"read CA bundle " + ca_file_ + ": " + std::strerror(errno)};
    if (n == 0) break;
    if (pem.size() + static_cast<std::size_t>(n) > kMaxCaBundleBytes) {
      return policy::Error{"read CA bundle " + ca_file_ + ": larger than 4 MiB"};
    }
    pem.append(buffer, static_cast<std::size_t>(n));
  }
  bssl::UniquePtr<SSL_CTX> ctx(SSL_CTX_new(TLS_method()));
  if (!ctx) return policy::Error{"SSL_CTX_new: failed"};
  // TLS 1.0 and 1.1 are deprecated (RFC 8996).
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1) {
    return policy::Error{"SSL_CTX_set_min_proto_version(TLS 1.2): failed"};
  }
  // Every PEM certificate of the bundle goes into the store; one that does not parse makes the
  // count differ from the BEGIN lines, and the bundle is refused as a whole.
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  std::size_t expected = 0;
  for (std::size_t at = pem.find(kBegin); at != std::string::npos;
       at = pem.find(kBegin, at + kBegin.size())) {
    ++expected;
  }
  bssl::UniquePtr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return policy::Error{"BIO_new_mem_buf: failed"};
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
  std::size_t added = 0;
  while (bssl::UniquePtr<X509> cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
    if (X509_STORE_add_cert(store, cert.get()) != 1) break;
    ++added;
  }
  ERR_clear_error();  // the end of the bundle reads as a PEM error
  if (added == 0 || added != expected) {
    return policy::Error{"load CA bundle " + ca_file_ + ": not a readable PEM bundle"};
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  // The window speaks HTTP/1.1 upstream only.
  static const unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  if (SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof kAlpn) != 0) {
    return policy::Error{"SSL_CTX_set_alpn_protos: failed"};
  }
  return ctx;
}

policy::Result<std::unique_ptr<TlsSession>> TlsSession::start(const TlsContext& context,
                                                              const std::string& host,
                                                              bool host_is_ip) {
  std::unique_ptr<TlsSession> s(new TlsSession);
  SSL_CTX* ctx = context.get();
  if (ctx == nullptr) return policy::Error{context.error()};
  s->ssl_.reset(SSL_new(ctx));
  if (!s->ssl_) return policy::Error{"SSL_new: failed"};
  SSL* ssl = s->ssl_.get();
  bssl::UniquePtr<BIO> in(BIO_new(BIO_s_mem()));
  bssl::UniquePtr<BIO> out(BIO_new(BIO_s_mem()));
  if (!in || !out) return policy::Error{"BIO_new: failed"};
  s->in_ = in.get();
  s->out_ = out.get();
  SSL_set_bio(ssl, in.release(), out.release());
  SSL_set_connect_state(ssl);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (host_is_ip) {
    // RFC 6066 §3: SNI carries names only.
    if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) {
      return policy::Error{"verify ip " + host + ": failed"};
    }
  } else {
    if (SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
      return policy::Error{"SNI " + host + ": failed"};
    }
    // BoringSSL accepts a wildcard only as the whole left-most label (RFC 9525 §6.3).
    if (X509_VERIFY_PARAM_set1_host(param, host.data(), host.size()) != 1) {
      return policy::Error{"verify host " + host + ": failed"};
    }
  }
  return s;
}

TlsSession::Progress TlsSession::failure(int ssl_error, std::string& detail) {
  if (ssl_error == SSL_ERROR_ZERO_RETURN) return Progress::kClosed;
  detail = done_ ? "tls-error" : "tls-handshake";
  if (!done_ && SSL_get_verify_result(ssl_.get()) != X509_V_OK) detail = "tls-certificate";
  ERR_clear_error();  // nothing of this session may surface in another one
  return Progress::kFailed;
}

TlsSession::Progress TlsSession::handshake(std::string& detail) {
  if (done_) return Progress::kOk;
  const int rc = SSL_do_handshake(ssl_.get());
  if (rc == 1) {
    done_ = true;
    return Progress::kOk;
  }
  const int err = SSL_get_error(ssl_.get(), rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Progress::kOk;
  if (err == SSL_ERROR_ZERO_RETURN) {
    detail = "tls-handshake";
    return Progress::kFailed;
  }
  return failure(err, detail);
}

TlsSession::Progress TlsSession::receive(const char* data, std::size_t length,
                                         std::string& plaintext, std::string& detail) {
  if (length > 0 && BIO_write(in_, data, static_cast<int>(length)) != static_cast<int>(length)) {
    detail = "tls-memory";
    return Progress::kFailed;
  }
  if (!done_) {
    const Progress p = handshake(detail);
    if (p != Progress::kOk || !done_) return p;
  }
  char buffer[16 * 1024];
  while (true) {
    const int n = SSL_read(ssl_.get(), buffer, sizeof buffer);
    if (n > 0) {
      plaintext.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    const int err = SSL_get_error(ssl_.get(), n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Progress::kOk;
    return failure(err, detail);
  }
}

TlsSession::Progress TlsSession::send(std::string_view plaintext, std::string& detail) {
  while (!plaintext.empty()) {
    // A memory BIO takes everything: SSL_write only stops on a real failure.
    const int n = SSL_write(ssl_.get(), plaintext.data(),
                            static_cast<int>(std::min<std::size_t>(plaintext.size(), 1 << 20)));
    if (n <= 0) return failure(SSL_get_error(ssl_.get(), n), detail);
    plaintext.remove_prefix(static_cast<std::size_t>(n));
  }
  return Progress::kOk;
}

std::string TlsSession::take_output() {
  std::string out;
  const std::size_t pending = BIO_pending(out_);
  if (pending == 0) return out;
  out.resize(pending);
  const int n = BIO_read(out_, out.data(), static_cast<int>(pending));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

}  // namespace appliance::serve
