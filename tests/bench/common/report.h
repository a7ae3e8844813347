// What every benchmark table is printed with: number formats, PASS/MISS cells, percentiles and the
// machine line. A report for people, never an assertion.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bench {

std::string fixed(double v, int digits);         // "%.*f"
std::string signed_fixed(double v, int digits);  // "%+.*f"
std::string kib(long v);                         // "—" when negative (not measured)
// "PASS <value>" / "MISS <value>", or "— (not measured)".
std::string verdict(bool measured, bool pass, const std::string& value);
// The q-quantile (0..1) of an ascending vector by the nearest-rank method: the sample of rank
// ceil(q * n) (1-based, at least 1), no interpolation. p50 of 1..10 is 5, p99 of 1..1000 is 990.
// 0 for an empty vector.
double percentile(const std::vector<double>& sorted, double q);
// ceil(q * n), clamped to 1..n (n > 0).
std::size_t nearest_rank(std::size_t n, double q);

struct Machine {
  std::string date;  // "YYYY-MM-DD HH:MM UTC", when the run started
  std::string cpu;   // /proc/cpuinfo model name
  std::string kernel;
  long nproc = 0;
};
Machine describe_machine();
// "Machine: <n> vCPU (`nproc`), <cpu>, Linux <kernel>. <note>"
void print_machine(const Machine& machine, const std::string& note);

}  // namespace bench
