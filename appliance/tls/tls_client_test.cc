// The window's TLS context: the CA bundle is opened at start and read only when the first TLS
// session needs it; a missing, oversized or broken bundle is refused, each with its reason.
#include <gtest/gtest.h>
#include <openssl/ec_key.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "appliance/tls/tls_client.h"

namespace appliance::serve {
namespace {

// A self-signed CA certificate in PEM.
std::string ca_pem(const std::string& common_name) {
  bssl::UniquePtr<EC_KEY> ec(EC_KEY_new_by_curve_name(NID_X9_62_prime256v1));
  if (!ec || EC_KEY_generate_key(ec.get()) != 1) return "";
  bssl::UniquePtr<EVP_PKEY> key(EVP_PKEY_new());
  if (!key || EVP_PKEY_assign_EC_KEY(key.get(), ec.release()) != 1) return "";
  bssl::UniquePtr<X509> x(X509_new());
  X509_set_version(x.get(), X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(x.get(), name);
  X509_set_pubkey(x.get(), key.get());
  if (X509_sign(x.get(), key.get(), EVP_sha256()) == 0) return "";
  bssl::UniquePtr<BIO> out(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(out.get(), x.get());
  const std::uint8_t* data = nullptr;
  std::size_t length = 0;
  BIO_mem_contents(out.get(), &data, &length);
  return std::string(reinterpret_cast<const char*>(data), length);
}

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/gk-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    file_ = dir_ + "/ca.pem";
  }
  void TearDown() override {
    ::unlink(file_.c_str());
    ::rmdir(dir_.c_str());
  }
  void write(const std::string& text) {
    std::ofstream(file_, std::ios::binary | std::ios::trunc) << text;
  }
  static std::size_t certificates(SSL_CTX* ctx) {
    return sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx)));
  }
  std::string dir_;
  std::string file_;
};

TEST_F(TlsContextTest, ReadsTheBundleWhenTheFirstSessionNeedsItNotAtOpen) {
  write(ca_pem("first"));
  auto context = TlsContext::open(file_);
  ASSERT_TRUE(context) << context.error().message;
  // Rewritten after open (same file, same descriptor): what the context holds is what the file
  // says at first use.
  write(ca_pem("second") + ca_pem("third"));
  SSL_CTX* ctx = context.value()->get();
  ASSERT_NE(ctx, nullptr) << context.value()->error();
  EXPECT_EQ(certificates(ctx), 2u);
  EXPECT_EQ(context.value()->get(), ctx) << "built once";
  auto session = TlsSession::start(*context.value(), "upstream.test", false);
  EXPECT_TRUE(session);
}

TEST_F(TlsContextTest, RefusesAMissingFileADirectoryAndAnEmptyFileAtOpen) {
  auto missing = TlsContext::open(dir_ + "/absent.pem");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "open CA bundle " + dir_ + "/absent.pem: No such file or directory");
  auto directory = TlsContext::open(dir_);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message,
            "CA bundle " + dir_ + ": not a regular file of 1 byte to 4 MiB");
  write("");
  EXPECT_FALSE(TlsContext::open(file_));
}

TEST_F(TlsContextTest, RefusesABundleOneByteOverTheCapAndAcceptsOneAtIt) {
  const std::string cert = ca_pem("cap");
  std::string at_cap = cert;
  at_cap.resize(kMaxCaBundleBytes, '\n');  // trailing blank lines are allowed in PEM
  write(at_cap);
  auto fits = TlsContext::open(file_);
  ASSERT_TRUE(fits) << fits.error().message;
  EXPECT_NE(fits.value()->get(), nullptr) << fits.value()->error();
  write(at_cap + "\n");
  EXPECT_FALSE(TlsContext::open(file_));
}

TEST_F(TlsContextTest, ABundleWithABrokenCertificateGivesNoContextAndSaysWhy) {
  std::string broken = ca_pem("broken");
  broken[broken.size() / 2] = '*';
  write(ca_pem("good") + broken);
  auto context = TlsContext::open(file_);
  ASSERT_TRUE(context) << context.error().message;
  EXPECT_EQ(context.value()->get(), nullptr);
  EXPECT_EQ(context.value()->error(), "load CA bundle " + file_ + ": not a readable PEM bundle");
  EXPECT_EQ(context.value()->get(), nullptr) << "the same answer every time";
  auto session = TlsSession::start(*context.value(), "upstream.test", false);
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error().message, "load CA bundle " + file_ + ": not a readable PEM bundle");
}

}  // namespace
}  // namespace appliance::serve
