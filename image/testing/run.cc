#include "image/testing/run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace image_testing {
namespace {

void close_if_open(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

RunOutcome run(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  RunOutcome outcome;
  if (argv.empty()) {
    outcome.spawn_error = "run: empty argv";
    return outcome;
  }
  std::vector<char*> c_argv;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);

  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    outcome.spawn_error = "pipe2: " + std::string(std::strerror(errno));
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) close_if_open(*fd);
    return outcome;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    outcome.spawn_error = "fork: " + std::string(std::strerror(errno));
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) close_if_open(*fd);
    return outcome;
  }
  if (pid == 0) {
    // Own process group: the deadline kills the program and everything it started.
    setpgid(0, 0);
    const int null_in = open("/dev/null", O_RDONLY);
    if (null_in < 0 || dup2(null_in, STDIN_FILENO) < 0 || dup2(out_pipe[1], STDOUT_FILENO) < 0 ||
        dup2(err_pipe[1], STDERR_FILENO) < 0) {
      _exit(126);
    }
    execvp(c_argv[0], c_argv.data());
    _exit(127);
  }
  close_if_open(out_pipe[1]);
  close_if_open(err_pipe[1]);

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::array<pollfd, 2> fds = {pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks = {&outcome.out, &outcome.err};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    const int ready = poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close_if_open(fds[i].fd);
      }
    }
  }
  close_if_open(fds[0].fd);
  close_if_open(fds[1].fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

std::string describe(const std::vector<std::string>& argv, const RunOutcome& outcome) {
  std::string text;
  for (const std::string& arg : argv) text += (text.empty() ? "" : " ") + arg;
  if (!outcome.spawn_error.empty()) return text + ": " + outcome.spawn_error;
  if (outcome.timed_out) text += ": timed out";
  text += ": exit " + std::to_string(outcome.exit_code);
  constexpr std::size_t kTail = 2000;
  const std::string& err = outcome.err;
  text += ": " + (err.size() > kTail ? err.substr(err.size() - kTail) : err);
  return text;
}

}  // namespace image_testing
