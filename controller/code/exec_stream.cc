#include "controller/code/exec_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "controller/process_timings.h"

namespace controller::code {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<ExecStream>> ExecStream::start(const std::vector<std::string>& argv, Clock::time_point deadline, std::string what) {
  return start(argv, deadline, std::move(what), kTransferOutputCap);
}

Result<std::unique_ptr<ExecStream>> ExecStream::start(const std::vector<std::string>& argv, Clock::time_point deadline, std::string what,
                                                      std::size_t output_cap) {
  if (argv.empty()) return fail(Code::kInternal, what + ": empty argv");
  signal(SIGPIPE, SIG_IGN);  // a receiver that exits early must not kill us
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int* p : {in, out, err, exec_pipe}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    return fail(Code::kCodeTransferFailed, what + ": pipe: " + std::strerror(e));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    execvp(args[0], args.data());
    const int e = errno;
    ssize_t ignored = write(exec_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  if (pid < 0) {
    const int e = errno;
    for (int* p : {in, out, err, exec_pipe}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    return fail(Code::kCodeTransferFailed, what + ": fork: " + std::strerror(e));
  }
  setpgid(pid, pid);
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  close_fd(exec_pipe[1]);
  int child_errno = 0;
  ssize_t got = 0;
  do {
    got = read(exec_pipe[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  close_fd(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    waitpid(pid, nullptr, 0);
    close_fd(in[1]);
    close_fd(out[0]);
    close_fd(err[0]);
    return fail(Code::kCodeTransferFailed, what + ": cannot start " + argv[0] + ": " + std::strerror(child_errno));
  }
  std::unique_ptr<ExecStream> s(new ExecStream());
  s->pid_ = pid;
  s->in_ = in[1];
  s->out_ = out[0];
  s->err_ = err[0];
  s->deadline_ = deadline;
  s->output_cap_ = output_cap;
  s->what_ = std::move(what);
  for (int fd : {s->in_, s->out_, s->err_}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return s;
}

ExecStream::~ExecStream() {
  if (!exited_) {
    kill_group();
    waitpid(pid_, nullptr, 0);
  }
  print_timing();
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

void ExecStream::kill_group() {
  // Never signal a pid that is not a real child's: -1 or 0 would hit every process or our group.
  if (pid_ > 1) kill(-pid_, SIGKILL);
}

Failure ExecStream::failure(Code code, const std::string& why) {
  kill_group();
  std::string message = what_ + ": " + why;
  const std::string tail = stderr_tail();
  if (!tail.empty()) message += "; the space printed: " + tail;
  return fail(code, message);
}

std::string ExecStream::stderr_tail() const {
  std::string t = err_text_.size() > 2000 ? err_text_.substr(err_text_.size() - 2000) : err_text_;
  for (char& c : t) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

Result<void> ExecStream::pump(bool want_stdout, bool want_stdin, int max_wait_ms) {
  pollfd fds[3];
  nfds_t n = 0;
  int i_out = -1, i_err = -1, i_in = -1;
  if (want_stdout && out_ >= 0) { i_out = static_cast<int>(n); fds[n++] = {out_, POLLIN, 0}; }
  if (err_ >= 0) { i_err = static_cast<int>(n); fds[n++] = {err_, POLLIN, 0}; }
  if (want_stdin && in_ >= 0) { i_in = static_cast<int>(n); fds[n++] = {in_, POLLOUT, 0}; }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
  if (left <= 0) return failure(Code::kCodeTransferFailed, "timed out (the process group was killed)");
  if (n == 0) return {};
  const int wait = max_wait_ms >= 0 && max_wait_ms < left ? max_wait_ms : static_cast<int>(left);
  const int ready = poll(fds, n, wait);
  if (ready < 0 && errno != EINTR) return failure(Code::kCodeTransferFailed, std::string("poll: ") + std::strerror(errno));
  char buffer[65536];
  auto drain = [&](int& fd, std::string& into) -> Result<void> {
    const ssize_t r = read(fd, buffer, sizeof buffer);
    if (r > 0) {
      into.append(buffer, static_cast<std::size_t>(r));
      received_ += static_cast<std::size_t>(r);
      if (received_ > output_cap_) {
        return failure(Code::kCodeTransferFailed, "printed more than " + std::to_string(output_cap_) +
                                                      " bytes (the process group was killed)");
      }
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
      close_fd(fd);
    }
    return {};
  };
  if (i_err >= 0 && (fds[i_err].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    if (auto r = drain(err_, err_text_); !r) return r;
    if (err_text_.size() > 8192) err_text_.erase(0, err_text_.size() - 4096);
  }
  if (i_out >= 0 && (fds[i_out].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    if (auto r = drain(out_, buffer_); !r) return r;
  }
  (void)i_in;
  return {};
}

Result<void> ExecStream::write_all(std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    if (in_ < 0) return failure(Code::kCodeTransferFailed, "the receiver closed its input");
    const ssize_t w = write(in_, bytes.data() + done, bytes.size() - done);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EINTR) return failure(Code::kCodeTransferFailed, "the receiver closed its input");
    // Keep stdout and stderr drained while waiting, so a receiver that talks cannot block us.
    if (auto r = pump(true, true); !r) return r;
  }
  return {};
}

void ExecStream::close_stdin() { close_fd(in_); }

Result<std::string> ExecStream::read_exact(std::size_t n) {
  while (buffer_.size() < n) {
    if (out_ < 0) return failure(Code::kCodeTransferFailed, "the receiver ended its output early");
    if (auto r = pump(true, false); !r) return r.error();
  }
  std::string out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  return out;
}

Result<std::string> ExecStream::read_some(std::size_t max) {
  while (buffer_.empty() && out_ >= 0) {
    if (auto r = pump(true, false); !r) return r.error();
  }
  std::string out = buffer_.substr(0, max);
  buffer_.erase(0, out.size());
  return out;
}

void ExecStream::print_timing() {
  if (timed_ || !process_timings_on()) return;
  timed_ = true;
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
  std::fprintf(stderr, "timing: %7.1f ms  stream: %s\n", ms, what_.c_str());
}

Result<int> ExecStream::finish() {
  close_stdin();
  for (;;) {
    int status = 0;
    const pid_t w = waitpid(pid_, &status, WNOHANG);
    if (w == pid_) {
      exited_ = true;
      status_ = status;
      break;
    }
    if (w < 0 && errno != EINTR) return failure(Code::kCodeTransferFailed, "waitpid failed");
    if (Clock::now() >= deadline_) return failure(Code::kCodeTransferFailed, "timed out (the process group was killed)");
    if (out_ >= 0 || err_ >= 0) {
      if (auto r = pump(true, false, 20); !r) return r.error();
    } else {
      usleep(5000);
    }
  }
  // A grandchild left in the group (it kept a copy of a pipe) dies with the transfer.
  kill_group();
  print_timing();
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  return 128 + WTERMSIG(status_);
}

}  // namespace controller::code
