// The run's TLS: a test CA and a leaf for the upstream's name, made at start with the integration
// tests' make_test_pki (tests/integration/http_upstream.h) in the run's temp dir; ca.pem is the
// gatekeeper's --ca-file and what the direct-TLS client verifies against, so both ends do the same
// work: TLS 1.2 or later, ALPN http/1.1, SNI and a name check for the upstream's host.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "tests/integration/http_upstream.h"

namespace bench {

// The upstream's context, serving pki.leaf; null when BoringSSL refused the certificate or key.
bssl::UniquePtr<SSL_CTX> upstream_tls_context(const gk_it::TestPki& pki);
// The direct client's context: chain verified against ca_file; null when it cannot be read.
bssl::UniquePtr<SSL_CTX> client_tls_context(const std::string& ca_file);
// A client session for `host` on ctx (SNI, name check, connect state).
bssl::UniquePtr<SSL> client_tls_session(SSL_CTX* ctx, const std::string& host);

}  // namespace bench
