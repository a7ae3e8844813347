#include "tests/bench/window/tls.h"

#include <openssl/x509.h>

namespace bench {
namespace {

constexpr unsigned char kAlpnHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

}  // namespace

bssl::UniquePtr<SSL_CTX> upstream_tls_context(const gk_it::TestPki& pki) {
  bssl::UniquePtr<SSL_CTX> ctx(SSL_CTX_new(TLS_method()));
  if (!ctx || SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1 ||
      SSL_CTX_use_certificate(ctx.get(), pki.leaf.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx.get(), pki.leaf_key.get()) != 1) {
    return nullptr;
  }
  return ctx;
}

bssl::UniquePtr<SSL_CTX> client_tls_context(const std::string& ca_file) {
  bssl::UniquePtr<SSL_CTX> ctx(SSL_CTX_new(TLS_method()));
  if (!ctx || SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1 ||
      SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr) != 1 ||
      SSL_CTX_set_alpn_protos(ctx.get(), kAlpnHttp11, sizeof kAlpnHttp11) != 0) {
    return nullptr;
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  return ctx;
}

bssl::UniquePtr<SSL> client_tls_session(SSL_CTX* ctx, const std::string& host) {
  bssl::UniquePtr<SSL> ssl(SSL_new(ctx));
  if (!ssl || SSL_set_tlsext_host_name(ssl.get(), host.c_str()) != 1 ||
      X509_VERIFY_PARAM_set1_host(SSL_get0_param(ssl.get()), host.data(), host.size()) != 1) {
    return nullptr;
  }
  SSL_set_connect_state(ssl.get());
  return ssl;
}

}  // namespace bench
