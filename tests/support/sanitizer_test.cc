// Positive control for the asan preset: undefined behaviour and a heap overflow end the process
// with the sanitizer's report. A build that recovers from UBSan reports (no
// -fno-sanitize-recover=all) prints the report and returns, and the first test fails. Built only
// with GK_SANITIZE (tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <climits>
#include <cstdlib>
#include <memory>

namespace {

void overflow_a_signed_int() {
  volatile int big = INT_MAX;
  volatile int one = 1;
  volatile int sum = big + one;  // undefined behaviour
  (void)sum;
  std::exit(0);  // reached only when the report was not fatal
}

void write_past_a_heap_block() {
  auto block = std::make_unique<char[]>(16);
  volatile char* bytes = block.get();
  bytes[16] = 1;  // one past the end
  std::exit(0);
}

TEST(SanitizerDeathTest, UndefinedBehaviourReportIsFatal) {
  EXPECT_EXIT(overflow_a_signed_int(), [](int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); },
              "runtime error: signed integer overflow");
}

TEST(SanitizerDeathTest, HeapOverflowReportIsFatal) {
  EXPECT_EXIT(write_past_a_heap_block(), [](int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); },
              "AddressSanitizer: heap-buffer-overflow");
}

}  // namespace
