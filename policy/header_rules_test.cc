#include "policy/header_rules.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "policy/control_messages.h"
#include "policy/window.h"

namespace policy {
namespace {

TEST(HeaderRulesTest, EveryRowIsLowerCaseUniqueAndHasAReason) {
  std::set<std::string_view> names;
  for (const HeaderRow& row : stripped_request_headers()) {
    EXPECT_FALSE(row.reason.empty()) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    for (char c : row.name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << row.name;
    EXPECT_TRUE(row.prefix ? is_field_name(row.name.substr(0, row.name.size() - 1)) : is_field_name(row.name))
        << row.name;
  }
}

TEST(HeaderRulesTest, PathMethodAndForwardingOverridesAreStripped) {
  for (const char* name : {"X-Original-URL", "x-rewrite-url", "X-Original-URI", "X-HTTP-Method-Override",
                           "X-HTTP-Method", "X-Method-Override", "X-Forwarded-For", "X-Forwarded-Host",
                           "X-Forwarded-Proto", "X-Forwarded-Prefix", "x-forwarded-anything-new", "Forwarded",
                           "X-Real-IP", "True-Client-IP", "X-Host", "Via"}) {
    const HeaderRow* row = stripped_request_header(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_EQ(row->kind, HeaderClass::kRouting) << name;
  }
  // Just outside: names that only resemble a row pass.
  for (const char* name : {"x-forwarde", "Forwarded-For", "X-Original", "X-Request-Id", "anthropic-version",
                           "X-Stainless-Os"}) {
    EXPECT_EQ(stripped_request_header(name), nullptr) << name;
  }
}

TEST(HeaderRulesTest, CredentialHeadersIncludeEveryVendorKeyHeader) {
  for (const char* name : {"Authorization", "Proxy-Authorization", "X-Api-Key", "x-goog-api-key", "api-key",
                           "Cookie"}) {
    const HeaderRow* row = stripped_request_header(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_EQ(row->kind, HeaderClass::kCredential) << name;
    EXPECT_TRUE(grant_header_allowed(std::string(row->name))) << name;
  }
}

TEST(HeaderRulesTest, AGrantHeaderIsNeverHopByHopFramingOrRouting) {
  for (const char* name : {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "te",
                           "trailer", "upgrade", "expect", "proxy-connection", "x-forwarded-for", "forwarded",
                           "x-http-method-override", "x-original-url"}) {
    EXPECT_FALSE(grant_header_allowed(name)) << name;
  }
  EXPECT_TRUE(grant_header_allowed("x-custom-key"));
  EXPECT_TRUE(grant_header_allowed("authorization"));
}

TEST(HeaderRulesTest, UpstreamHeadersDropEveryRowAndKeepTheRest) {
  Grant grant;
  grant.upstream = parse_upstream_url("https://api.example.com/").value();
  std::vector<Header> in;
  for (const HeaderRow& row : stripped_request_headers()) {
    in.push_back({std::string(row.name) + (row.prefix ? "for" : ""), "v"});
  }
  in.push_back({"X-Request-Id", "keep-me"});
  in.push_back({"X-HTTP-METHOD-OVERRIDE", "DELETE"});
  const std::string out = upstream_request_headers(in, grant, BodyFraming::kNone, 0);
  EXPECT_EQ(out, "Host: api.example.com\r\nX-Request-Id: keep-me\r\n");
}

}  // namespace
}  // namespace policy
