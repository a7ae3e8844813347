#include "tests/bench/common/report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>

namespace bench {

namespace {

std::string format_double(double v, int digits, bool sign) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string fixed(double v, int digits) { return format_double(v, digits, false); }

// "%+" rather than "+" + fixed(): GCC 12 warns (-Wrestrict, a false positive) on that concatenation.
std::string signed_fixed(double v, int digits) { return format_double(v, digits, true); }

std::string kib(long v) { return v < 0 ? "—" : std::to_string(v); }

std::string verdict(bool measured, bool pass, const std::string& value) {
  if (!measured) return "— (not measured)";
  return (pass ? "PASS " : "MISS ") + value;
}

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[nearest_rank(sorted.size(), q) - 1];
}

std::size_t nearest_rank(std::size_t n, double q) {
  // rank = ceil(q * n), in integer parts per million so 0.99 * 1000 is 990, not 990.0000000001.
  const auto ppm = static_cast<unsigned long long>(std::llround(std::clamp(q, 0.0, 1.0) * 1e6));
  const unsigned long long rank = (ppm * n + 999'999) / 1'000'000;
  return static_cast<std::size_t>(std::clamp<unsigned long long>(rank, 1, n));
}

Machine describe_machine() {
  Machine m;
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  m.date = date;
  utsname u{};
  uname(&u);
  m.kernel = u.release;
  m.nproc = sysconf(_SC_NPROCESSORS_ONLN);
  m.cpu = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      m.cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  return m;
}

void print_machine(const Machine& machine, const std::string& note) {
  std::printf("Machine: %ld vCPU (`nproc`), %s, Linux %s. %s\n\n", machine.nproc, machine.cpu.c_str(),
              machine.kernel.c_str(), note.c_str());
}

}  // namespace bench
