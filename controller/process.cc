#include "controller/process.h"
#include "controller/process_timings.h"

#include "controller/signals.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace controller {
namespace {

using Clock = std::chrono::steady_clock;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

std::string tail(const std::string& text, std::size_t n) {
  std::string t = text.size() > n ? text.substr(text.size() - n) : text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  for (char& c : t) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return t;
}

}  // namespace

std::string ProcessOutcome::describe() const {
  if (spawn_failed) return std::string("cannot start: ") + std::strerror(spawn_errno);
  if (wait_errno != 0) return std::string("waitpid failed: ") + std::strerror(wait_errno) + "; its exit is unknown";
  if (interrupted) return "stopped by a signal to spacectl and killed";
  if (timed_out) return "timed out and was killed";
  if (output_too_large) return "printed more than its output cap and was killed";
  if (!exited) return "killed by signal " + std::to_string(signal);
  std::string s = "exit " + std::to_string(exit_code);
  std::string t = tail(err, 400);
  if (!t.empty()) s += ": " + t;
  return s;
}

static ProcessOutcome run_process_untimed(const ProcessRequest& request) {
  ProcessOutcome outcome;
  if (request.argv.empty()) {
    outcome.spawn_failed = true;
    outcome.spawn_errno = EINVAL;
    return outcome;
  }
  // A child that exits before reading its stdin must not kill us with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  const unsigned stops_at_start = stop_requests();
  auto stop_came = [&] { return stop_requests() != stops_at_start; };

  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
  bool pipes_ok = pipe2(exec_pipe, O_CLOEXEC) == 0;
  if (pipes_ok && !request.inherit_stdio) {
    pipes_ok = pipe2(in_pipe, O_CLOEXEC) == 0 && pipe2(out_pipe, O_CLOEXEC) == 0 &&
               pipe2(err_pipe, O_CLOEXEC) == 0;
  }
  if (!pipes_ok) {
    outcome.spawn_failed = true;
    outcome.spawn_errno = errno;
    for (int* p : {in_pipe, out_pipe, err_pipe, exec_pipe}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    return outcome;
  }

  std::vector<char*> argv;
  argv.reserve(request.argv.size() + 1);
  for (const std::string& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    outcome.spawn_failed = true;
    outcome.spawn_errno = errno;
    for (int* p : {in_pipe, out_pipe, err_pipe, exec_pipe}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    return outcome;
  }
  if (pid == 0) {
    if (!request.inherit_stdio) setpgid(0, 0);
    // Whatever spacectl's parent ignored or blocked is not passed on (an ignored SIGCHLD or
    // SIGINT would change how the child behaves).
    for (int s = 1; s < NSIG; ++s) {
      if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!request.inherit_stdio) {
      dup2(in_pipe[0], STDIN_FILENO);
      dup2(out_pipe[1], STDOUT_FILENO);
      dup2(err_pipe[1], STDERR_FILENO);
    }
    // Nothing but stdio passes to the child: a descriptor spacectl inherited without close-on-exec
    // (a caller's lock, a socket) would otherwise live on in every daemon the engine's CLI starts
    // (Podman's aardvark-dns and conmon outlive the call).
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < 65536; ++fd) {
        const int flags = fcntl(fd, F_GETFD);
        if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
      }
    }
    execvp(argv[0], argv.data());
    const int e = errno;
    ssize_t ignored = write(exec_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  if (!request.inherit_stdio) setpgid(pid, pid);  // both sides set it, so a kill right after fork still hits the group
  close_fd(exec_pipe[1]);
  close_fd(in_pipe[0]);
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);

  int child_errno = 0;
  ssize_t got = 0;
  do {
    got = read(exec_pipe[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  close_fd(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    close_fd(in_pipe[1]);
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    outcome.spawn_failed = true;
    outcome.spawn_errno = child_errno;
    return outcome;
  }

  const auto deadline = Clock::now() + request.timeout;
  std::size_t written = 0;
  if (!request.inherit_stdio) {
    set_nonblocking(in_pipe[1]);
    set_nonblocking(out_pipe[0]);
    set_nonblocking(err_pipe[0]);
    if (request.stdin_bytes.empty()) close_fd(in_pipe[1]);
    char buffer[65536];
    while (out_pipe[0] >= 0 || err_pipe[0] >= 0) {
      pollfd fds[3];
      nfds_t n = 0;
      int idx_in = -1, idx_out = -1, idx_err = -1;
      if (in_pipe[1] >= 0) { idx_in = static_cast<int>(n); fds[n++] = {in_pipe[1], POLLOUT, 0}; }
      if (out_pipe[0] >= 0) { idx_out = static_cast<int>(n); fds[n++] = {out_pipe[0], POLLIN, 0}; }
      if (err_pipe[0] >= 0) { idx_err = static_cast<int>(n); fds[n++] = {err_pipe[0], POLLIN, 0}; }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        outcome.timed_out = true;
        break;
      }
      if (stop_came()) {
        outcome.interrupted = true;
        break;
      }
      // At most 100 ms per wait, so a stop request is seen even when the signal hit another thread.
      const int ready = poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 100)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) continue;
      if (idx_in >= 0 && (fds[idx_in].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
        const ssize_t w = write(in_pipe[1], request.stdin_bytes.data() + written,
                                request.stdin_bytes.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) close_fd(in_pipe[1]);
        if (written == request.stdin_bytes.size()) close_fd(in_pipe[1]);
      }
      if (idx_out >= 0 && (fds[idx_out].revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
        const ssize_t r = read(out_pipe[0], buffer, sizeof buffer);
        if (r > 0 && request.on_output) {
          request.on_output(false, std::string_view(buffer, static_cast<std::size_t>(r)));
        } else if (r > 0) {
          outcome.out.append(buffer, static_cast<std::size_t>(r));
          if (outcome.out.size() > request.output_cap) {
            outcome.output_too_large = true;
            break;
          }
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          close_fd(out_pipe[0]);
        }
      }
      if (idx_err >= 0 && (fds[idx_err].revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
        const ssize_t r = read(err_pipe[0], buffer, sizeof buffer);
        if (r > 0 && request.on_output) {
          request.on_output(true, std::string_view(buffer, static_cast<std::size_t>(r)));
        } else if (r > 0) {
          outcome.err.append(buffer, static_cast<std::size_t>(r));
          if (outcome.err.size() > 2 * kStderrKept) outcome.err.erase(0, outcome.err.size() - kStderrKept);
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          close_fd(err_pipe[0]);
        }
      }
    }
    close_fd(in_pipe[1]);
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    if (outcome.err.size() > kStderrKept) outcome.err.erase(0, outcome.err.size() - kStderrKept);
  }

  int status = 0;
  unsigned forwarded = stops_at_start;
  for (;;) {
    const bool killing = outcome.timed_out || outcome.output_too_large || outcome.interrupted;
    if (killing) kill(-pid, SIGKILL);
    const pid_t w = waitpid(pid, &status, killing ? 0 : WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      // Never "exited 0": without a status nothing is known (ECHILD when SIGCHLD was ignored).
      outcome.wait_errno = errno;
      if (!request.inherit_stdio) kill(-pid, SIGKILL);
      return outcome;
    }
    if (request.inherit_stdio) {
      // Interactive: no deadline. A stop signal a process sent to spacectl goes on to the child;
      // one from the terminal already reached it (same process group).
      if (stop_requests() != forwarded) {
        forwarded = stop_requests();
        if (last_stop_was_sent()) kill(pid, last_stop_signal());
      }
      usleep(20000);
      continue;
    }
    // Output closed but the child still runs: wait for it within the same deadline.
    if (Clock::now() >= deadline) {
      outcome.timed_out = true;
      continue;
    }
    if (stop_came()) {
      outcome.interrupted = true;
      continue;
    }
    usleep(5000);
  }
  // The group may hold grandchildren that kept running after the leader exited.
  if (outcome.timed_out || outcome.output_too_large || outcome.interrupted) kill(-pid, SIGKILL);
  if (WIFEXITED(status)) {
    outcome.exited = true;
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

namespace {

std::atomic<bool> timings_on{false};

// "docker network create … gk-…-network": the program, its operation and the object (argv never
// holds a secret, so the words are safe to print).
std::string call_summary(const std::vector<std::string>& argv) {
  std::string out = argv[0].substr(argv[0].rfind('/') + 1);
  std::size_t words = 0;
  for (std::size_t i = 1; i < argv.size() && words < 2; ++i) {
    if (argv[i].empty() || argv[i][0] == '-') break;
    out += " " + argv[i];
    ++words;
    if (argv[i] != "network" && argv[i] != "volume" && argv[i] != "image" &&
        argv[i] != "container") {
      break;
    }
  }
  if (argv.size() > words + 1) out += " … " + argv.back().substr(0, 60);
  return out;
}

}  // namespace

void set_process_timings(bool on) { timings_on.store(on); }

bool process_timings_on() { return timings_on.load(); }

ProcessOutcome run_process(const ProcessRequest& request) {
  if (!timings_on.load() || request.argv.empty()) return run_process_untimed(request);
  const auto start = std::chrono::steady_clock::now();
  ProcessOutcome o = run_process_untimed(request);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "timing: %7.1f ms  %s\n", ms, call_summary(request.argv).c_str());
  return o;
}

}  // namespace controller
