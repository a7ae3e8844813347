// The one BoringSSL boundary (docs/decisions.md#one-boundary-per-c-library): a client context (CA
// bundle, TLS 1.2 minimum, peer verification on) and a client session on memory BIOs, driven by
// whoever owns the socket: ciphertext read from the socket goes in with receive(), ciphertext to
// write comes out of take_output(). Return values of BoringSSL are tested; the error queue is only
// cleared.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <string_view>

#include "appliance/loop/unique_fd.h"
#include "policy/result.h"

namespace appliance::serve {

inline constexpr std::string_view kDefaultCaFile = "/etc/ssl/certs/ca-certificates.crt";

// The CA bundle may not be larger than this (Debian's is about 220 KB).
inline constexpr std::size_t kMaxCaBundleBytes = 4 * 1024 * 1024;

class TlsContext {
 public:
  // Opens the CA bundle now (before self-confinement forbids opening files) and checks it is a
  // regular file of at most kMaxCaBundleBytes. It is read, parsed and BoringSSL is first touched
  // only when the first TLS session starts: a gatekeeper whose window never speaks TLS holds
  // neither the certificates nor BoringSSL's pages.
  static policy::Result<std::unique_ptr<TlsContext>> open(const std::string& ca_file);
  // The context, built on the first call: nullptr when the bundle could not be read or parsed
  // (then `error()` says why, and every later call answers the same).
  [[nodiscard]] SSL_CTX* get() const noexcept;
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  TlsContext() = default;
  [[nodiscard]] policy::Result<bssl::UniquePtr<SSL_CTX>> build() const;
  std::string ca_file_;
  // Built once, on first use, from a const context (the window holds it as const): a cache.
  mutable loop::UniqueFd ca_fd_;
  mutable bssl::UniquePtr<SSL_CTX> ctx_;
  mutable std::string error_;
  mutable bool built_ = false;
};

class TlsSession {
 public:
  // A client session for `host`: SNI when it is a name, and the certificate must match the name
  // (or the IP address when the upstream is an address literal).
  static policy::Result<std::unique_ptr<TlsSession>> start(const TlsContext& context,
                                                           const std::string& host,
                                                           bool host_is_ip);

  enum class Progress : std::uint8_t { kOk, kClosed, kFailed };

  // Drives the handshake; true once it is complete. On failure `detail` names why
  // ("tls-certificate", "tls-handshake").
  [[nodiscard]] bool handshake_done() const noexcept { return done_; }
  Progress handshake(std::string& detail);
  // Ciphertext from the peer: appended to the session; the plaintext available is appended to
  // `plaintext` (only once the handshake is done). kClosed: the peer sent close_notify.
  Progress receive(const char* data, std::size_t length, std::string& plaintext,
                   std::string& detail);
  // Encrypts `plaintext`; the ciphertext waits in take_output().
  Progress send(std::string_view plaintext, std::string& detail);
  // Ciphertext to write to the socket (may be empty).
  std::string take_output();

 private:
  TlsSession() = default;
  Progress failure(int ssl_error, std::string& detail);
  bssl::UniquePtr<SSL> ssl_;
  BIO* in_ = nullptr;   // owned by ssl_
  BIO* out_ = nullptr;  // owned by ssl_
  bool done_ = false;
};

}  // namespace appliance::serve
