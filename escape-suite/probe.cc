#include "escape-suite/probe.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "policy/number.h"

namespace escape {

FileRead read_bounded(const std::string& path, std::size_t max_bytes) {
  FileRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    r.err = errno;
    return r;
  }
  char buf[4096];
  while (r.data.size() < max_bytes) {
    const std::size_t want = std::min(sizeof buf, max_bytes - r.data.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.err = errno;
      ::close(fd);
      return r;
    }
    if (n == 0) break;
    r.data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  r.ok = true;
  return r;
}

std::string errno_name(int err) {
  struct Name {
    int value;
    const char* name;
  };
  static constexpr Name kNames[] = {
      {EPERM, "EPERM"},           {ENOENT, "ENOENT"},           {ESRCH, "ESRCH"},
      {EINTR, "EINTR"},           {EIO, "EIO"},                 {ENXIO, "ENXIO"},
      {E2BIG, "E2BIG"},           {EBADF, "EBADF"},             {ECHILD, "ECHILD"},
      {EAGAIN, "EAGAIN"},         {ENOMEM, "ENOMEM"},           {EACCES, "EACCES"},
      {EFAULT, "EFAULT"},         {EBUSY, "EBUSY"},             {EEXIST, "EEXIST"},
      {ENODEV, "ENODEV"},         {ENOTDIR, "ENOTDIR"},         {EISDIR, "EISDIR"},
      {EINVAL, "EINVAL"},         {ENFILE, "ENFILE"},           {EMFILE, "EMFILE"},
      {ETXTBSY, "ETXTBSY"},       {EFBIG, "EFBIG"},             {ENOSPC, "ENOSPC"},
      {EROFS, "EROFS"},           {ENOSYS, "ENOSYS"},           {ENOTSOCK, "ENOTSOCK"},
      {EPROTOTYPE, "EPROTOTYPE"}, {ENOPROTOOPT, "ENOPROTOOPT"}, {EPROTONOSUPPORT, "EPROTONOSUPPORT"},
      {ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"}, {EOPNOTSUPP, "EOPNOTSUPP"},
      {EAFNOSUPPORT, "EAFNOSUPPORT"}, {EADDRINUSE, "EADDRINUSE"}, {EADDRNOTAVAIL, "EADDRNOTAVAIL"},
      {ENETDOWN, "ENETDOWN"},     {ENETUNREACH, "ENETUNREACH"}, {ECONNRESET, "ECONNRESET"},
      {ENOTCONN, "ENOTCONN"},     {ETIMEDOUT, "ETIMEDOUT"},     {ECONNREFUSED, "ECONNREFUSED"},
      {EHOSTUNREACH, "EHOSTUNREACH"}, {EHOSTDOWN, "EHOSTDOWN"}, {ENOTTY, "ENOTTY"},
      {EDQUOT, "EDQUOT"},         {ENOKEY, "ENOKEY"},           {ELOOP, "ELOOP"},
  };
  for (const Name& n : kNames) {
    if (n.value == err) return n.name;
  }
  return "errno " + std::to_string(err);
}

bool is_refusal(const Options& opts, int err) {
  return err == EPERM || err == EACCES || err == ENOSYS || err == EOPNOTSUPP ||
         err == opts.seccomp_errno;
}

std::string_view refusal_layer(const Options& opts, int err) {
  if (err == opts.seccomp_errno) return "seccomp";
  return err == ENOSYS ? "profile or kernel" : "kernel";
}

Outcome judge_syscall(const Options& opts, std::string_view what, long rc, int err) {
  if (rc >= 0) return fail(std::string(what) + " succeeded (" + std::to_string(rc) + ")");
  if (is_refusal(opts, err)) {
    return pass(std::string(what) + ": " + errno_name(err) + " (" +
                std::string(refusal_layer(opts, err)) + ")");
  }
  return fail(std::string(what) + ": " + errno_name(err) +
              " (reached the kernel's argument checks: nothing filtered it)");
}

Outcome judge_open_or_absent(const Options& opts, std::string_view what, long rc, int err,
                             const std::vector<int>& absent) {
  if (rc < 0 && std::find(absent.begin(), absent.end(), err) != absent.end()) {
    return pass(std::string(what) + ": " + errno_name(err) + " (not present)");
  }
  return judge_syscall(opts, what, rc, err);
}

ChildOutcome run_in_child(const std::function<std::string()>& fn, int timeout_ms, bool own_group) {
  ChildOutcome out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.report = "pipe2: " + errno_name(errno);
    return out;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.report = "fork: " + errno_name(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (own_group) ::setpgid(0, 0);
    const std::string text = fn();
    const std::size_t len = std::min(text.size(), kMaxChildReportBytes);
    std::size_t done = 0;
    while (done < len) {
      const ssize_t n = ::write(fds[1], text.data() + done, len - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  const std::int64_t deadline = now_ms() + timeout_ms;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (now_ms() >= deadline) {
      out.timed_out = true;
      if (own_group) ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    struct timespec ts = {0, 5 * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
  }
  if (own_group) ::kill(-pid, SIGKILL);  // whatever the group left behind
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  }
  char buf[1024];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    if (out.report.size() < kMaxChildReportBytes) out.report.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  return out;
}

Outcome syscall_in_child_expect(const Options& opts, std::string_view what, const std::function<long()>& call,
                                int expected_errno, int timeout_ms) {
  const ChildOutcome c = run_in_child(
      [&] {
        errno = 0;
        const long rc = call();
        const int err = errno;
        return std::to_string(rc) + " " + std::to_string(err);
      },
      timeout_ms);
  if (c.signal == SIGSYS) return pass(std::string(what) + ": killed by SIGSYS (seccomp)");
  if (c.timed_out) return inconclusive(std::string(what) + ": child did not finish in time");
  if (!c.exited || c.report.empty()) {
    return inconclusive(std::string(what) + ": child died (signal " + std::to_string(c.signal) + ") " + c.report);
  }
  const std::optional<ChildNumbers> n = child_numbers(c.report);
  if (!n) return inconclusive(std::string(what) + ": unreadable child report: " + c.report);
  const long long rc = n->first;
  const int err = n->second;
  if (rc >= 0) return fail(std::string(what) + " succeeded (" + std::to_string(rc) + ")");
  if (err == expected_errno) return pass(std::string(what) + ": " + errno_name(err) + " (the profile's errno)");
  (void)opts;
  return fail(std::string(what) + ": " + errno_name(err) + ", not the profile's " + errno_name(expected_errno) +
              ": the profile let the call reach the kernel");
}

Outcome syscall_in_child(const Options& opts, std::string_view what,
                         const std::function<long()>& call, int timeout_ms, bool segv_means_absent) {
  const ChildOutcome c = run_in_child(
      [&] {
        errno = 0;
        const long rc = call();
        const int err = errno;
        return std::to_string(rc) + " " + std::to_string(err);
      },
      timeout_ms);
  if (c.signal == SIGSYS) return pass(std::string(what) + ": killed by SIGSYS (seccomp)");
  if (c.signal == SIGSEGV && segv_means_absent) {
    return pass(std::string(what) + ": SIGSEGV (entry point not available)");
  }
  if (c.timed_out) return inconclusive(std::string(what) + ": child did not finish in time");
  if (!c.exited || c.report.empty()) {
    return inconclusive(std::string(what) + ": child died (signal " + std::to_string(c.signal) +
                        ") " + c.report);
  }
  const std::optional<ChildNumbers> n = child_numbers(c.report);
  if (!n) return inconclusive(std::string(what) + ": unreadable child report: " + c.report);
  return judge_syscall(opts, what, static_cast<long>(n->first), n->second);
}

std::string status_field(std::string_view text, std::string_view field) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    if (line.size() > field.size() && line.substr(0, field.size()) == field &&
        line[field.size()] == ':') {
      std::string_view v = line.substr(field.size() + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      return std::string(v);
    }
    pos = end + 1;
  }
  return "";
}

std::vector<std::string> split_lines(std::string_view text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size() && lines.size() < max_lines) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

std::vector<std::string> list_dir(const std::string& path, std::size_t max_entries) {
  std::vector<std::string> names;
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return names;
  while (names.size() < max_entries) {
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<int> numeric_pids(std::size_t max) {
  std::vector<int> pids;
  for (const std::string& name : list_dir("/proc", 65536)) {
    if (name.empty() || name.size() > 9) continue;
    const std::optional<int> pid = policy::parse_number<int>(name);
    if (!pid || *pid <= 0) continue;
    pids.push_back(*pid);
    if (pids.size() >= max) break;
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

std::string read_link(const std::string& path) {
  char buf[1024];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<std::size_t>(n));
}

std::int64_t now_ms() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<ChildNumbers> child_numbers(std::string_view report) {
  const std::size_t sp = report.find(' ');
  const std::optional<long long> first = policy::parse_number<long long>(report.substr(0, sp));
  if (!first) return std::nullopt;
  if (sp == std::string_view::npos) return ChildNumbers{*first, 0};
  const std::optional<int> second = policy::parse_number<int>(report.substr(sp + 1));
  if (!second) return std::nullopt;
  return ChildNumbers{*first, *second};
}

}  // namespace escape
