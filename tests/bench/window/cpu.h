// What one process (the window's gatekeeper, nginx's worker) spent on the CPU during a row's timed
// requests, a figure that depends far less on the machine's load than req/s does: its on-CPU time
// (the kernel's task clock of that process, in ns), its user and system share (utime and stime of
// /proc/<pid>/stat, in clock ticks), and the system calls it entered (the raw_syscalls:sys_enter
// tracepoint, counted by the kernel for that process). Both counters come from perf_event_open
// on the pid: root (or kernel.perf_event_paranoid ≤ 1) and a kernel with tracepoints. Hardware
// counters (instructions, cycles) are not used: a KVM guest often has none (perf stat answers
// "<not supported>" on the machine the README's figures come from).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace bench {

struct CpuUse {
  bool ok = false;                 // every counter was read
  std::uint64_t on_cpu_ns = 0;     // task clock
  std::uint64_t user_ticks = 0;    // utime
  std::uint64_t system_ticks = 0;  // stime
  std::uint64_t syscalls = 0;      // raw_syscalls:sys_enter
};

// Counts from construction to stop(); a pid ≤ 0 or a counter the kernel refused leaves ok false.
// The process must be single-threaded (the counters follow the one task of that pid).
class CpuMeter {
 public:
  explicit CpuMeter(pid_t pid);
  ~CpuMeter();
  CpuMeter(const CpuMeter&) = delete;
  CpuMeter& operator=(const CpuMeter&) = delete;

  [[nodiscard]] CpuUse stop();

 private:
  pid_t pid_;
  int clock_fd_ = -1;
  int syscalls_fd_ = -1;
  std::uint64_t user_start_ = 0;
  std::uint64_t system_start_ = 0;
  bool ticks_ok_ = false;
};

// The one worker process of an nginx master (the child of `master`); -1 when there is not one.
pid_t only_child(pid_t master);

}  // namespace bench
