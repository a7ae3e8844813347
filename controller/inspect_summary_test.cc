// list from hostile engine answers (inspect_summary.h): a compromised or odd engine, or labels
// written by someone else, can only drop a value (named in refused_labels), never crash the host
// and never have a value shown that spacectl would not have written.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/inspect_summary.h"
#include "controller/spec.h"

namespace controller {
namespace {

using nlohmann::json;

const std::string kOwner = "owner1";
const std::string kId = "0123456789ab";

json container(const std::string& role, json labels_extra = json::object()) {
  json labels = {
      {"spacectl.space", "true"},      {"spacectl.space.owner", kOwner},
      {"spacectl.space.id", kId},      {"spacectl.space.role", role},
      {"spacectl.space.name", "mine"}, {"spacectl.space.created", "2026-01-02T03:04:05Z"}};
  labels.update(labels_extra);
  return {{"Id", "c1"},
          {"Image", "sha256:" + std::string(64, 'b')},
          {"State", {{"Status", "running"}, {"ExitCode", 0}}},
          {"Config",
           {{"Labels", labels},
            {"Env", {"GATEKEEPER_WINDOW=http://gatekeeper:8080/k/" + std::string(64, 'c')}}}}};
}

TEST(InspectSummaryTest, AnswersOfTheWrongShapeAreSkippedNotACrash) {
  for (const char* text : {"null", "1", "\"x\"", "{}", "[1, \"a\", null, [], {}]",
                           R"([{"Config": 7}])", R"([{"Config": {"Labels": []}}])",
                           R"([{"Config": {"Labels": {"spacectl.space.owner": 5}}}])",
                           R"([{"State": "running", "Config": {"Env": {}}}])"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(summarise_spaces(json::parse(text), {}, kOwner).empty());
  }
  // Ours by its labels, every other member of the wrong type: listed, states unknown, nothing
  // shown.
  json odd = container("space");
  odd["State"] = "running";
  odd["Config"]["Env"] = "GATEKEEPER_WINDOW=x";
  const std::vector<SpaceSummary> s = summarise_spaces(json::array({odd}), {}, kOwner);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].space_state, "unknown");
  EXPECT_EQ(s[0].window_url, "");
}

TEST(InspectSummaryTest, LabelValuesSpacectlNeverWritesAreShownEmptyAndNamed) {
  const json hostile = container("space", {{"spacectl.space.name", "evil\x1b]0;title\x07"},
                                           {"spacectl.space.created", "tomorrow"}});
  json gk =
      container("gatekeeper",
                {{"spacectl.space.name", std::string(101, 'n')},
                 {"org.opencontainers.image.version", std::string(kMaxImageLabelBytes + 1, 'v')},
                 {"org.opencontainers.image.revision", "abc\n"}});
  gk["Image"] = "alpine:latest";
  std::vector<SpaceSummary> s = summarise_spaces(json::array({hostile, gk}), {}, kOwner);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "");
  EXPECT_EQ(s[0].created,
            "2026-01-02T03:04:05Z");  // the gatekeeper's: a refused value never blanks the other's
  EXPECT_EQ(s[0].gatekeeper_image, "");
  EXPECT_EQ(s[0].gatekeeper_version, "");
  EXPECT_EQ(s[0].gatekeeper_revision, "");
  const std::vector<std::string> want = {"spacectl.space.name", "spacectl.space.created", "Image",
                                         "org.opencontainers.image.version",
                                         "org.opencontainers.image.revision"};
  EXPECT_EQ(s[0].refused_labels, want);
  // At the limits: a 100-byte name and a 128-byte version are shown.
  gk = container("gatekeeper",
                 {{"spacectl.space.name", std::string(100, 'n')},
                  {"org.opencontainers.image.version", std::string(kMaxImageLabelBytes, 'v')}});
  s = summarise_spaces(json::array({gk}), {}, kOwner);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, std::string(100, 'n'));
  EXPECT_EQ(s[0].gatekeeper_version, std::string(kMaxImageLabelBytes, 'v'));
  EXPECT_TRUE(s[0].refused_labels.empty());
}

TEST(InspectSummaryTest, AWindowVariableThatIsNotTheGatekeepersUrlIsNotShown) {
  for (const std::string& url :
       {"http://evil.example/k/" + std::string(64, 'c'),
        "http://gatekeeper:8080/k/" + std::string(63, 'c'),
        "http://gatekeeper:8080/k/" + std::string(64, 'C'), std::string("javascript:alert(1)")}) {
    json c = container("space");
    c["Config"]["Env"] = {"GATEKEEPER_WINDOW=" + url};
    const std::vector<SpaceSummary> s = summarise_spaces(json::array({c}), {}, kOwner);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].window_url, "") << url;
    EXPECT_EQ(s[0].refused_labels, std::vector<std::string>{"GATEKEEPER_WINDOW"});
  }
  const std::vector<SpaceSummary> ok =
      summarise_spaces(json::array({container("space")}), {}, kOwner);
  EXPECT_EQ(ok[0].window_url, "http://gatekeeper:8080/k/" + std::string(64, 'c'));
}

TEST(InspectSummaryTest, AnotherOwnersOrAMalformedIdIsNeverListed) {
  EXPECT_TRUE(
      summarise_spaces(json::array({container("space", {{"spacectl.space.owner", "other"}})}), {},
                       kOwner)
          .empty());
  EXPECT_TRUE(
      summarise_spaces(json::array({container("space", {{"spacectl.space.id", "../../etc"}})}), {},
                       kOwner)
          .empty());
  EXPECT_TRUE(summarise_spaces(json::array({container("probe")}), {}, kOwner).empty());
  // Networks alone name a space (its containers are missing); a network name that is no space's is
  // ignored.
  const std::vector<SpaceSummary> s = summarise_spaces(
      json::array(), {"gk-" + kId + "-network", "gk-zzzzzzzzzzzz-network", "gk-"}, kOwner);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].space_state, "missing");
}

}  // namespace
}  // namespace controller
