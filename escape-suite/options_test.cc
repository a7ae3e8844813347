#include "escape-suite/options.h"

#include <gtest/gtest.h>

namespace escape {
namespace {

TEST(OptionsTest, ParsesRunnerFlags) {
  const auto o = parse_options({"--format", "junit", "--output", "/tmp/r.xml", "--space-id", "3fa9",
                                "--gatekeeper", "10.9.0.1", "--corridor-port", "3128", "--allowed-target",
                                "example.com:443", "--probe-address", "192.168.1.5:8080", "--probe-address",
                                "[fd00::5]:80", "--pids-limit", "512", "--memory-limit", "1073741824",
                                "--allow-exhaustion", "--only", "net.*,dns.*", "--window-grant", "anthropic"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o.value().format, Format::kJunit);
  EXPECT_EQ(o.value().space_id, "3fa9");
  EXPECT_EQ(o.value().probe_addresses.size(), 2u);
  EXPECT_EQ(o.value().pids_limit, 512u);
  EXPECT_TRUE(o.value().allow_exhaustion);
  EXPECT_EQ(o.value().only, (std::vector<std::string>{"net.*", "dns.*"}));
  EXPECT_FALSE(o.value().gateway_unowned);  // only the runner's host check may claim it
  EXPECT_TRUE(parse_options({"--gateway-unowned"}).value().gateway_unowned);
  EXPECT_FALSE(o.value().progress);
  EXPECT_TRUE(parse_options({"--progress"}).value().progress);
}

TEST(OptionsTest, TakesAPlaceWithoutDnsAndPodmansMounts) {
  const auto d = parse_options({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value().engine, Engine::kDocker);
  EXPECT_FALSE(hosts_file_names(d.value()));
  const auto o = parse_options({"--engine", "podman", "--resolver", "none"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o.value().engine, Engine::kPodman);
  EXPECT_TRUE(hosts_file_names(o.value()));
  EXPECT_FALSE(parse_options({"--engine", "Podman"}).ok());
  EXPECT_FALSE(parse_options({"--engine", ""}).ok());
}

TEST(OptionsTest, TakesSarifAndHtmlFormats) {
  EXPECT_EQ(parse_options({"--format", "sarif"}).value().format, Format::kSarif);
  EXPECT_EQ(parse_options({"--format", "html"}).value().format, Format::kHtml);
}

TEST(OptionsTest, RefusesBadValues) {
  EXPECT_FALSE(parse_options({"--format", "xml"}).ok());
  EXPECT_FALSE(parse_options({"--format", "SARIF"}).ok());
  EXPECT_FALSE(parse_options({"--corridor-port", "65536"}).ok());
  EXPECT_TRUE(parse_options({"--corridor-port", "65535"}).ok());
  EXPECT_FALSE(parse_options({"--space-id", "../etc"}).ok());
  EXPECT_FALSE(parse_options({"--secret-sha256", "abc"}).ok());
  EXPECT_FALSE(parse_options({"--secret-sha256", std::string(64, 'A')}).ok());
  EXPECT_TRUE(parse_options({"--secret-sha256", std::string(64, 'a')}).ok());
  EXPECT_FALSE(parse_options({"--window-base", "https://gatekeeper:8080/k/x"}).ok());
  EXPECT_FALSE(parse_options({"--expect-uid", "0"}).ok());
  EXPECT_FALSE(parse_options({"--pids-limit"}).ok());
  EXPECT_FALSE(parse_options({"--bogus", "1"}).ok());
}

TEST(OptionsTest, RepeatedFlagsAreBoundedAtTheLimit) {
  std::vector<std::string> storage;
  for (std::size_t i = 0; i < kMaxRepeatedFlag + 1; ++i) storage.push_back("10.0.0." + std::to_string(i % 250));
  std::vector<std::string_view> args;
  for (std::size_t i = 0; i < kMaxRepeatedFlag; ++i) {
    args.emplace_back("--probe-address");
    args.emplace_back(storage[i]);
  }
  EXPECT_TRUE(parse_options(args).ok());
  args.emplace_back("--probe-address");
  args.emplace_back(storage.back());
  EXPECT_FALSE(parse_options(args).ok());
}

}  // namespace
}  // namespace escape
