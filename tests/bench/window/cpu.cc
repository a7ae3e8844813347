#include "tests/bench/window/cpu.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "policy/number.h"

namespace bench {
namespace {

int open_counter(pid_t pid, std::uint32_t type, std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  // Counted from now on, in user and kernel mode, for that process on any CPU.
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::optional<std::uint64_t> read_counter(int fd) {
  std::uint64_t value = 0;
  if (fd < 0 || ::read(fd, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) {
    return std::nullopt;
  }
  return value;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tracepoint's id as tracefs names it.
std::optional<std::uint64_t> sys_enter_id() {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::string text = read_file(std::string(dir) + "/events/raw_syscalls/sys_enter/id");
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (auto id = policy::parse_number<std::uint64_t>(text)) return id;
  }
  return std::nullopt;
}

// utime and stime (fields 14 and 15 of /proc/<pid>/stat; the name in field 2 may hold spaces
// and parentheses, so the count starts after the last ')').
bool read_ticks(pid_t pid, std::uint64_t& user, std::uint64_t& system) {
  const std::string text = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::string_view rest = std::string_view(text).substr(close + 1);
  std::optional<std::uint64_t> fields[2];
  for (int field = 3; field <= 15 && !rest.empty(); ++field) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const std::size_t end = rest.find(' ');
    const std::string_view token = rest.substr(0, end);
    if (field >= 14) fields[field - 14] = policy::parse_number<std::uint64_t>(token);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  }
  if (!fields[0] || !fields[1]) return false;
  user = *fields[0];
  system = *fields[1];
  return true;
}

}  // namespace

CpuMeter::CpuMeter(pid_t pid) : pid_(pid) {
  if (pid_ <= 0) return;
  clock_fd_ = open_counter(pid_, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  if (const auto id = sys_enter_id()) syscalls_fd_ = open_counter(pid_, PERF_TYPE_TRACEPOINT, *id);
  ticks_ok_ = read_ticks(pid_, user_start_, system_start_);
}

CpuMeter::~CpuMeter() {
  if (clock_fd_ >= 0) ::close(clock_fd_);
  if (syscalls_fd_ >= 0) ::close(syscalls_fd_);
}

CpuUse CpuMeter::stop() {
  CpuUse use;
  const auto clock = read_counter(clock_fd_);
  const auto syscalls = read_counter(syscalls_fd_);
  std::uint64_t user = 0;
  std::uint64_t system = 0;
  if (!clock || !syscalls || !ticks_ok_ || !read_ticks(pid_, user, system)) return use;
  use.ok = true;
  use.on_cpu_ns = *clock;
  use.syscalls = *syscalls;
  use.user_ticks = user - user_start_;
  use.system_ticks = system - system_start_;
  return use;
}

pid_t only_child(pid_t master) {
  const std::string text = read_file("/proc/" + std::to_string(master) + "/task/" +
                                     std::to_string(master) + "/children");
  std::string_view v = text;
  while (!v.empty() && (v.back() == ' ' || v.back() == '\n')) v.remove_suffix(1);
  if (v.empty() || v.find(' ') != std::string_view::npos) return -1;
  return policy::parse_number<pid_t>(v).value_or(-1);
}

}  // namespace bench
