// The bounded disk on a remote engine's host (remote_disk.h): the helpers' rights, the scripts'
// arguments, and the strict reading of what the helpers answer.
#include "controller/remote_disk.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace controller {
namespace {

bool has(const std::vector<std::string>& a, const std::string& word) {
  return std::find(a.begin(), a.end(), word) != a.end();
}

std::vector<std::string> values_of(const std::vector<std::string>& a, const std::string& flag) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == flag) out.push_back(a[i + 1]);
  return out;
}

TEST(RemoteDiskTest, TheMakingHelperHasTheLoopRightsAndTheHostRootButIsNotPrivileged) {
  const std::vector<std::string> a =
      remote_disk_helper_argv("sha256:" + std::string(64, 'a'), {"--label", "x=y"}, true);
  EXPECT_FALSE(has(a, "--privileged"));
  EXPECT_EQ(values_of(a, "--cap-drop"), std::vector<std::string>{"ALL"});
  EXPECT_EQ(values_of(a, "--cap-add"), (std::vector<std::string>{"SYS_ADMIN", "SYS_CHROOT"}));
  EXPECT_EQ(values_of(a, "--device-cgroup-rule"),
            (std::vector<std::string>{"b 7:* rwm", "c 10:237 rwm"}));
  EXPECT_EQ(values_of(a, "--mount"), std::vector<std::string>{"type=bind,src=/,dst=/host"});
  EXPECT_EQ(values_of(a, "--network"), std::vector<std::string>{"none"});
  EXPECT_TRUE(has(a, "--rm"));
  EXPECT_TRUE(has(a, "no-new-privileges"));
  // The image is the last word before the script's own arguments.
  EXPECT_EQ(a.back(), "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(a[a.size() - 2], "--");
}

TEST(RemoteDiskTest, TheReadingHelperHasNoRightsAndNoHostMount) {
  const std::vector<std::string> a = remote_disk_helper_argv("img", {}, false);
  EXPECT_TRUE(values_of(a, "--cap-add").empty());
  EXPECT_TRUE(values_of(a, "--mount").empty());
  EXPECT_TRUE(values_of(a, "--device-cgroup-rule").empty());
  EXPECT_EQ(values_of(a, "--user"), std::vector<std::string>{"65534:65534"});
  EXPECT_TRUE(has(a, "--read-only"));
}

TEST(RemoteDiskTest, TheMakeScriptRunsInTheHostsRootWithTheReservedRangeAndEachImage) {
  const std::vector<std::string> a =
      remote_make_args("/var/lib/spacectl/disks", "70000:70000", 1ll << 30,
                       {{"/d/home.img", 40001}, {"/d/work.img", 59999}});
  ASSERT_GE(a.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(a.begin(), a.begin() + 4),
            (std::vector<std::string>{"chroot", "/host", "/bin/sh", "-c"}));
  EXPECT_EQ(a[5], "sh");
  const std::vector<std::string> rest(a.begin() + 6, a.end());
  EXPECT_EQ(rest, (std::vector<std::string>{"/var/lib/spacectl/disks", "70000:70000", "1073741824",
                                            std::to_string(kLoopIndexFirst),
                                            std::to_string(kLoopIndexCount), "/d/home.img", "40001",
                                            "/d/work.img", "59999"}));
  // Created exclusively, nosuid/nodev come from the volume; the filesystem is ext4 owned by the
  // space.
  EXPECT_NE(a[4].find("set -C"), std::string::npos);
  EXPECT_NE(a[4].find("mkfs.ext4"), std::string::npos);
  EXPECT_NE(a[4].find("root_owner=$owner"), std::string::npos);
}

TEST(RemoteDiskTest, MakeAnswersExactlyOneReservedNumberPerImage) {
  const int first = kLoopIndexFirst, last = kLoopIndexFirst + kLoopIndexCount - 1;
  Result<std::vector<int>> ok =
      parse_remote_make(std::to_string(first) + "\n" + std::to_string(last) + "\n", 2);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(*ok, (std::vector<int>{first, last}));
  EXPECT_FALSE(parse_remote_make(std::to_string(first - 1) + "\n" + std::to_string(first) + "\n",
                                 2));  // below the range
  EXPECT_FALSE(parse_remote_make(std::to_string(first) + "\n" + std::to_string(last + 1) + "\n",
                                 2));                                // above it
  EXPECT_FALSE(parse_remote_make(std::to_string(first) + "\n", 2));  // one short
  EXPECT_FALSE(parse_remote_make(std::to_string(first) + "\n" + std::to_string(first) + "\n7\n",
                                 2));  // one more
  EXPECT_FALSE(parse_remote_make(std::to_string(first) + "\n /dev/loop0\n", 2));
  EXPECT_FALSE(parse_remote_make("", 2));
}

TEST(RemoteDiskTest, ProbeLinesAreReadStrictlyAndOnlyForTheNumbersAsked) {
  const std::vector<int> asked = {40001, 40002, 40003, 40004};
  const std::string out =
      "40001|1|524288|/var/lib/spacectl/disks/o-home.img\n"  // attached, 256 MiB
      "40002|1|0|\n"                                         // exists, holds nothing
      "40003|0||\n"                                          // no such device
      "40005|1|8|/etc/passwd\n"                              // not asked
      "40004|1|x|/a\n"                                       // malformed size
      "io|0\n";
  const RemoteDiskView v = parse_remote_probe(out, asked);
  ASSERT_EQ(v.loops.count(40001), 1u);
  EXPECT_TRUE(v.loops.at(40001).attached);
  EXPECT_EQ(v.loops.at(40001).bytes, 256ll << 20);
  EXPECT_EQ(v.loops.at(40001).backing_file, "/var/lib/spacectl/disks/o-home.img");
  ASSERT_EQ(v.loops.count(40002), 1u);
  EXPECT_TRUE(v.loops.at(40002).exists);
  EXPECT_FALSE(v.loops.at(40002).attached);
  ASSERT_EQ(v.loops.count(40003), 1u);
  EXPECT_FALSE(v.loops.at(40003).exists);
  EXPECT_EQ(v.loops.count(40004), 0u);
  EXPECT_EQ(v.loops.count(40005), 0u);
  EXPECT_EQ(v.io_weight, std::optional<bool>(false));
}

TEST(RemoteDiskTest, ANumberSaidTwiceOrThriceIsBelievedNever) {
  const RemoteDiskView v =
      parse_remote_probe("40001|1|8|/a\n40001|1|8|/b\n40001|1|8|/a\n", {40001});
  EXPECT_EQ(v.loops.count(40001), 0u);
  EXPECT_FALSE(v.io_weight.has_value());
  EXPECT_EQ(parse_remote_probe("io|1\n", {}).io_weight, std::optional<bool>(true));
  EXPECT_FALSE(parse_remote_probe("io|yes\n", {}).io_weight.has_value());
}

}  // namespace
}  // namespace controller
