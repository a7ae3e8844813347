// A child whose stdin and stdout are a byte stream we drive (the space's git over the place's
// exec), under one host deadline. The child runs in its own process group; at the deadline, past
// the output cap, or when the stream is dropped, the whole group gets SIGKILL, so a `docker exec`
// (or a grandchild that kept stdout open) cannot outlive the transfer on the host. Its stderr is
// collected up to the cap and only ever shown, never parsed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller::code {

inline constexpr std::size_t kTransferOutputCap = 1u << 20;  // stdout + stderr of one transfer

class ExecStream {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts argv (execvp, no shell). `what` names the operation in every message.
  static Result<std::unique_ptr<ExecStream>> start(const std::vector<std::string>& argv, Clock::time_point deadline, std::string what);
  // The same with its own cap on stdout + stderr (code out's pack arrives on stdout).
  static Result<std::unique_ptr<ExecStream>> start(const std::vector<std::string>& argv, Clock::time_point deadline, std::string what,
                                                   std::size_t output_cap);
  ~ExecStream();  // kills the group if it still runs
  ExecStream(const ExecStream&) = delete;
  ExecStream& operator=(const ExecStream&) = delete;

  Result<void> write_all(std::string_view bytes);
  void close_stdin();
  // Exactly n bytes of stdout (fails on EOF, deadline or cap).
  Result<std::string> read_exact(std::size_t n);
  // What stdout has (at most max bytes), waiting for some; empty once stdout has ended.
  Result<std::string> read_some(std::size_t max);
  // Waits for the child to exit within the deadline; returns its exit status (128+N for a signal).
  Result<int> finish();
  void kill_group();
  [[nodiscard]] std::string stderr_tail() const;  // ≤ 2,000 bytes, control characters replaced
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  ExecStream() = default;
  // Polls once: drains stderr, and stdout into buffer_; false with a failure at deadline/cap.
  Result<void> pump(bool want_stdout, bool want_stdin, int max_wait_ms = -1);
  Failure failure(Code code, const std::string& why);
  // With --timings, one line: the wall time from start to the child's end (once).
  void print_timing();

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  bool exited_ = false;
  int status_ = 0;
  Clock::time_point deadline_;
  Clock::time_point started_ = Clock::now();  // for --timings
  bool timed_ = false;
  std::string what_, buffer_, err_text_;
  std::size_t received_ = 0;
  std::size_t output_cap_ = kTransferOutputCap;
};

}  // namespace controller::code
