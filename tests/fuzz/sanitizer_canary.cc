// A positive control for the fuzz build, not a fuzz target: on the input "UB!!" it overflows a
// signed int. A fuzz build whose sanitizer reports are fatal exits non-zero on that input; one
// that recovers prints the report and exits 0, and .ci/check-tests refuses to fuzz with it.
#include <climits>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 4 && std::memcmp(data, "UB!!", 4) == 0) {
    volatile int big = INT_MAX;
    volatile int one = 1;
    volatile int sum = big + one;  // signed overflow: undefined behaviour UBSan reports
    (void)sum;
  }
  return 0;
}
