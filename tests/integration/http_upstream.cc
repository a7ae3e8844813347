#include "tests/integration/http_upstream.h"

#include <openssl/bio.h>
#include <openssl/ec_key.h>
#include <openssl/evp.h>
#include <openssl/nid.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "policy/number.h"
#include "tests/integration/harness.h"

namespace gk_it {
namespace {

bssl::UniquePtr<EVP_PKEY> make_key() {
  bssl::UniquePtr<EC_KEY> ec(EC_KEY_new_by_curve_name(NID_X9_62_prime256v1));
  if (!ec || EC_KEY_generate_key(ec.get()) != 1) return nullptr;
  bssl::UniquePtr<EVP_PKEY> key(EVP_PKEY_new());
  if (!key || EVP_PKEY_assign_EC_KEY(key.get(), ec.release()) != 1) return nullptr;
  return key;
}

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  bssl::UniquePtr<X509_EXTENSION> ext(X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

bssl::UniquePtr<X509> make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
                                bool ca, const std::string& san, long serial) {
  bssl::UniquePtr<X509> x(X509_new());
  if (!x) return nullptr;
  X509_set_version(x.get(), X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 86400);
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const std::uint8_t*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : x.get();
  X509_set_issuer_name(x.get(), X509_get_subject_name(signer));
  X509_set_pubkey(x.get(), key);
  bool ok = add_ext(x.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE") &&
            add_ext(x.get(), signer, NID_key_usage, ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature") &&
            add_ext(x.get(), signer, NID_subject_key_identifier, "hash");
  if (!ca) {
    ok = ok && add_ext(x.get(), signer, NID_ext_key_usage, "serverAuth") &&
         add_ext(x.get(), signer, NID_authority_key_identifier, "keyid:always") &&
         add_ext(x.get(), signer, NID_subject_alt_name, san.c_str());
  }
  if (!ok || X509_sign(x.get(), issuer_key, EVP_sha256()) == 0) return nullptr;
  return x;
}

struct Stream {
  int fd;
  SSL* ssl;
  std::string buffered;
  bool read_more() {
    char buf[16384];
    int n = 0;
    if (ssl != nullptr) {
      n = SSL_read(ssl, buf, sizeof buf);
    } else {
      n = static_cast<int>(recv(fd, buf, sizeof buf, 0));
    }
    if (n <= 0) return false;
    buffered.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  bool write(std::string_view bytes) {
    if (ssl == nullptr) return send_all(fd, bytes);
    while (!bytes.empty()) {
      const int n = SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  bool line(std::string& out) {
    while (buffered.find("\r\n") == std::string::npos) {
      if (!read_more()) return false;
    }
    const auto at = buffered.find("\r\n");
    out = buffered.substr(0, at);
    buffered.erase(0, at + 2);
    return true;
  }
  bool exactly(std::size_t n, std::string& out) {
    while (buffered.size() < n) {
      if (!read_more()) return false;
    }
    out = buffered.substr(0, n);
    buffered.erase(0, n);
    return true;
  }
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_credential(const std::string& name) {
  return name == "authorization" || name == "x-api-key" || name == "cookie" || name == "proxy-authorization" ||
         name.find("key") != std::string::npos || name.find("auth") != std::string::npos ||
         name.find("token") != std::string::npos;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes.data(), bytes.size());
  return hash.hex();
}

TestPki make_test_pki(const std::string& dir, const std::vector<std::string>& names) {
  TestPki pki;
  bssl::UniquePtr<EVP_PKEY> ca_key = make_key();
  pki.leaf_key = make_key();
  if (!ca_key || !pki.leaf_key) return pki;
  bssl::UniquePtr<X509> ca = make_cert(ca_key.get(), "gatekeeper test CA", nullptr, ca_key.get(), true, "", 1);
  std::string san;
  for (const std::string& n : names) san += (san.empty() ? "DNS:" : ",DNS:") + n;
  if (!ca) return pki;
  pki.leaf = make_cert(pki.leaf_key.get(), names.front(), ca.get(), ca_key.get(), false, san, 2);
  if (!pki.leaf) return pki;
  pki.ca_file = dir + "/ca.pem";
  bssl::UniquePtr<BIO> out(BIO_new_file(pki.ca_file.c_str(), "w"));
  if (!out || PEM_write_bio_X509(out.get(), ca.get()) != 1) return pki;
  out.reset();
  chmod(pki.ca_file.c_str(), 0644);  // the gatekeeper child runs as an unprivileged uid
  pki.ok = true;
  return pki;
}

HttpUpstream::HttpUpstream(int listen_fd, const TestPki* pki) : listen_fd_(listen_fd) {
  if (pki != nullptr) {
    ctx_.reset(SSL_CTX_new(TLS_method()));
    SSL_CTX_use_certificate(ctx_.get(), pki->leaf.get());
    SSL_CTX_use_PrivateKey(ctx_.get(), pki->leaf_key.get());
  }
  acceptor_ = std::thread([this] { serve(); });
}

HttpUpstream::~HttpUpstream() {
  stopping_ = true;
  release_sse();
  shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& w : workers_) w.join();
  close(listen_fd_);
}

std::vector<SeenRequest> HttpUpstream::requests() {
  std::lock_guard<std::mutex> lock(mutex_);
  return seen_;
}

void HttpUpstream::release_sse() {
  std::lock_guard<std::mutex> lock(sse_mutex_);
  sse_release_ = true;
  sse_cv_.notify_all();
}

void HttpUpstream::serve() {
  while (!stopping_) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_ || errno == EINVAL) return;
      continue;
    }
    ++connections;
    std::lock_guard<std::mutex> lock(mutex_);
    workers_.emplace_back([this, fd] { session(fd); });
  }
}

void HttpUpstream::session(int fd) {
  set_timeout(fd, 30000);
  bssl::UniquePtr<SSL> ssl;
  if (ctx_) {
    ssl.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl.get(), fd);
    if (SSL_accept(ssl.get()) != 1) {
      close(fd);
      return;
    }
  }
  Stream s{fd, ssl.get(), {}};
  while (!stopping_) {
    std::string request_line;
    if (!s.line(request_line)) break;
    SeenRequest seen;
    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.rfind(' ');
    seen.method = request_line.substr(0, sp1);
    seen.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::uint64_t length = 0;
    bool malformed = false;
    bool chunked = false;
    std::string header;
    while (s.line(header) && !header.empty()) {
      const auto colon = header.find(':');
      const std::string name = lower(header.substr(0, colon));
      std::string value = header.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      seen.header_names.push_back(name);
      if (name == "host") seen.host = value;
      if (name == "content-length") {
        // A length that does not read: a 400, and the request is not counted as seen.
        const std::optional<std::uint64_t> n = policy::parse_number<std::uint64_t>(value);
        if (!n) {
          malformed = true;
        } else {
          length = *n;
        }
      }
      if (name == "transfer-encoding") chunked = lower(value) == "chunked";
      if (is_credential(name)) seen.credential_sha256[name] = sha256_hex(value);
    }
    std::string body;
    if (chunked) {
      std::string size_line;
      while (s.line(size_line)) {
        const std::optional<std::uint64_t> chunk =
            policy::parse_number<std::uint64_t>(size_line.substr(0, size_line.find(';')), 16);
        if (!chunk) {
          malformed = true;
          break;
        }
        const std::uint64_t n = *chunk;
        if (n == 0) {
          std::string trailer;
          while (s.line(trailer) && !trailer.empty()) {
          }
          break;
        }
        std::string piece, crlf;
        if (!s.exactly(n, piece) || !s.exactly(2, crlf)) break;
        body += piece;
      }
    } else if (length > 0) {
      s.exactly(length, body);
    }
    if (malformed) {
      s.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      break;
    }
    seen.body_sha256 = sha256_hex(body);
    const std::string target = seen.target;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seen_.push_back(seen);
    }
    ++hits;
    const std::string path = target.substr(0, target.find('?'));
    auto ends_with = [&](std::string_view suffix) {
      return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("/sse")) {
      s.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
      s.write("b\r\ndata: one\n\n\r\n");
      std::unique_lock<std::mutex> lock(sse_mutex_);
      sse_released_in_time = sse_cv_.wait_for(lock, std::chrono::seconds(10), [&] { return sse_release_; });
      lock.unlock();
      s.write("b\r\ndata: two\n\n\r\n0\r\n\r\n");
      continue;
    }
    if (ends_with("/big")) {
      constexpr std::size_t kBig = 16u << 20;
      s.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kBig) + "\r\n\r\n");
      std::string piece(1 << 16, '\0');
      for (std::size_t sent = 0; sent < kBig; sent += piece.size()) {
        fill_pattern(7, sent, piece.data(), piece.size());
        if (!s.write(piece)) break;
      }
      continue;
    }
    if (ends_with("/eof")) {
      s.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close\n");
      break;
    }
    if (ends_with("/drop")) break;  // read, then close without a byte (a kept connection lost)
    if (ends_with("/hang")) {
      while (s.read_more()) {
      }
      ++hang_closed;
      break;
    }
    const std::string answer = ends_with("/upload") ? seen.body_sha256 + "\n" : "ok " + target + "\n";
    s.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\nX-Upstream-Hop: 1\r\n"
            "Content-Length: " + std::to_string(answer.size()) + "\r\n\r\n" + answer);
  }
  if (ssl) SSL_shutdown(ssl.get());
  close(fd);
}

}  // namespace gk_it
