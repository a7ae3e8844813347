// The process runner: deadline, output cap and stdin, each at its boundary.
#include <gtest/gtest.h>

#include <cerrno>

#include "controller/process.h"

namespace controller {
namespace {

TEST(ProcessTest, PassesStdinAndCapturesOutput) {
  ProcessRequest r;
  r.argv = {"cat"};
  r.stdin_bytes = std::string(200000, 'x');  // larger than a pipe buffer
  ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.succeeded());
  EXPECT_EQ(o.out.size(), 200000u);
}

TEST(ProcessTest, KillsTheWholeGroupAtTheDeadline) {
  ProcessRequest r;
  // `timeout` forks `sleep`: a grandchild holding the output pipe, which only a group kill ends early.
  r.argv = {"timeout", "30", "sleep", "30"};
  r.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ProcessTest, OutputAtTheCapPassesAndOneByteMoreIsKilled) {
  ProcessRequest r;
  r.argv = {"head", "-c", "1000", "/dev/zero"};
  r.output_cap = 1000;
  EXPECT_TRUE(run_process(r).succeeded());
  r.argv = {"head", "-c", "1001", "/dev/zero"};
  EXPECT_TRUE(run_process(r).output_too_large);
}

TEST(ProcessTest, MissingProgramIsENOENT) {
  ProcessRequest r;
  r.argv = {"spacectl-no-such-program"};
  ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.spawn_failed);
  EXPECT_EQ(o.spawn_errno, ENOENT);
}

}  // namespace
}  // namespace controller
