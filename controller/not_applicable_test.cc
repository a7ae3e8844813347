// N/A is not a pass by default: the check of an escape report against the explicit list of cases
// allowed to be N/A on a place and image (escape-suite/not-applicable.txt).
#include "controller/testing/not_applicable.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

namespace controller::testing {
namespace {

const std::vector<AllowedNotApplicable> kAllowed = {
    {"docker", "space-default", "fs.readonly-usr", "the image has no /usr"},
    {"podman", "space-default", "res.no-swap", "another place's reason"},
};

TEST(NotApplicableListTest, ListedNotApplicableOnItsPlaceAndImagePasses) {
  const std::vector<ReportedCase> report = {{"fs.readonly-usr", "N/A", "create /usr/x: ENOENT"},
                                            {"fs.readonly-etc", "PASS", "EROFS"}};
  EXPECT_TRUE(not_applicable_problems(kAllowed, "docker", "space-default", report).empty());
}

TEST(NotApplicableListTest, UnlistedNotApplicableFails) {
  const std::vector<ReportedCase> report = {{"fs.readonly-usr", "N/A", "create /usr/x: ENOENT"},
                                            {"net.some-case", "N/A", "the probe gave up"}};
  const auto problems = not_applicable_problems(kAllowed, "docker", "space-default", report);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "net.some-case is N/A (the probe gave up) but not listed for docker/space-default");
}

TEST(NotApplicableListTest, ACaseListedForAnotherPlaceOrImageIsNotAllowedHere) {
  const std::vector<ReportedCase> report = {{"fs.readonly-usr", "N/A", "ENOENT"}, {"res.no-swap", "N/A", "no file"}};
  EXPECT_EQ(not_applicable_problems(kAllowed, "docker", "space-default", report).size(), 1u);
  EXPECT_EQ(not_applicable_problems(kAllowed, "docker", "space-node", report).size(), 2u);
}

TEST(NotApplicableListTest, ListedCaseThatPassedOrVanishedIsAStaleLine) {
  auto problems = not_applicable_problems(kAllowed, "docker", "space-default", {{"fs.readonly-usr", "PASS", "EROFS"}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "fs.readonly-usr is listed as N/A for docker/space-default but is PASS: remove the line");
  problems = not_applicable_problems(kAllowed, "docker", "space-default", {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("absent from the report"), std::string::npos);
}

TEST(NotApplicableListTest, ListedNotApplicableWithoutEvidenceFails) {
  const auto problems = not_applicable_problems(kAllowed, "docker", "space-default", {{"fs.readonly-usr", "N/A", ""}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "fs.readonly-usr is N/A without evidence");
}

TEST(NotApplicableListTest, ALineWithoutAReasonIsRefused) {
  std::string error;
  EXPECT_TRUE(parse_not_applicable("docker space-default fs.readonly-usr\n", &error).empty());
  EXPECT_EQ(error, "line 1: want <place> <image> <case> <reason>: docker space-default fs.readonly-usr");
}

// The repository's list parses, every line has a reason, and no case is listed twice.
TEST(NotApplicableListTest, TheRepositoryListParsesWithAReasonPerLine) {
  std::ifstream in(std::string(GK_SOURCE_DIR) + "/escape-suite/not-applicable.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  std::string error;
  const auto allowed = parse_not_applicable(text, &error);
  ASSERT_EQ(error, "");
  ASSERT_FALSE(allowed.empty());
  std::set<std::string> seen;
  for (const AllowedNotApplicable& a : allowed) {
    EXPECT_TRUE(seen.insert(a.place + " " + a.image + " " + a.case_id).second) << a.case_id << " listed twice";
    EXPECT_GT(a.reason.size(), 15u) << a.case_id << ": a reason a reviewer can check";
  }
}

}  // namespace
}  // namespace controller::testing
