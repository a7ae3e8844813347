#include "tests/bench/window/client.h"
#include "policy/number.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "tests/bench/common/process.h"
#include "tests/bench/common/report.h"
#include "tests/bench/common/socket.h"
#include "tests/bench/window/http.h"
#include "tests/bench/window/stream.h"
#include "tests/bench/window/tls.h"

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kReadBuffer = 64 * 1024;

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What a whole answer in `in` is: not yet complete, complete, or a failure.
struct Answer {
  bool complete = false;
  bool close = false;  // Connection: close
  std::string failure;
};

Answer parse_answer(const std::string& in, bool eof) {
  Answer a;
  const std::size_t end = in.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (eof) a.failure = in.empty() ? "EOF before any answer byte" : "EOF inside the answer's head";
    return a;
  }
  const std::string_view head(in.data(), end);
  const int status = http_status(in);
  if (status != 200) {
    a.failure = "answer '" + std::string(head.substr(0, head.find('\r'))) + "'";
    return a;
  }
  if (header_value(head, "transfer-encoding")) {
    a.failure = "a chunked answer (this client reads Content-Length or to the close)";
    return a;
  }
  a.close = header_has_token(head, "connection", "close");
  const std::size_t body = in.size() - end - 4;
  const std::optional<std::string_view> length = header_value(head, "content-length");
  if (!length) {  // read to the close
    a.complete = eof;
    a.close = true;
    return a;
  }
  const std::optional<std::size_t> parsed = policy::parse_number<std::size_t>(*length);
  if (!parsed) {
    a.failure = "a Content-Length that is not a count";
    return a;
  }
  const std::size_t want = *parsed;
  if (body > want) {
    a.failure = "bytes after the answer";
  } else if (body == want) {
    a.complete = true;
  } else if (eof) {
    a.failure = "EOF after " + std::to_string(body) + " of " + std::to_string(want) + " body bytes";
  }
  return a;
}

class Runner {
 public:
  Runner(const Target& target, const Load& load)
      : target_(target),
        load_(load),
        conns_(static_cast<std::size_t>(load.clients)),
        rx_(kReadBuffer) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
  }
  ~Runner() {
    conns_.clear();
    close(epfd_);
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // `count` requests over every connection; timed ones are counted in `result_`.
  void phase(int count, bool timed) {
    timed_ = timed;
    to_start_ = count;
    in_flight_ = 0;
    failures_ = 0;
    result_ = LoadResult{};
    samples_.clear();
    samples_.reserve(static_cast<std::size_t>(count));
    const auto start = Clock::now();
    const auto deadline =
        start + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(load_.max_seconds > 0 ? load_.max_seconds : 1e6));
    const std::uint64_t accepted_before =
        load_.upstream_accepts != nullptr ? load_.upstream_accepts->load() : 0;
    last_progress_ = start;
    last_answer_ = start;
    auto last_sample = start - std::chrono::milliseconds(kRssSampleMs);
    std::optional<CpuMeter> meter;
    if (timed) meter.emplace(load_.cpu_pid);
    for (std::size_t i = 0; i < conns_.size() && to_start_ > 0; ++i) begin(i);
    std::vector<epoll_event> events(256);
    while (in_flight_ > 0 && result_.error.empty()) {
      const auto now = Clock::now();
      if (timed && load_.rss_pid > 0 &&
          now - last_sample >= std::chrono::milliseconds(kRssSampleMs)) {
        result_.rss_peak_kib = std::max(result_.rss_peak_kib, vm_rss_kib(load_.rss_pid));
        last_sample = now;
      }
      if (now >= deadline) {
        result_.capped = true;
        break;
      }
      if (now - last_progress_ >= std::chrono::milliseconds(kStallMs)) {
        result_.error = "no answer for " + std::to_string(kStallMs / 1000) + " s";
        break;
      }
      const int n =
          epoll_wait(epfd_, events.data(), static_cast<int>(events.size()), kRssSampleMs / 4);
      if (n < 0 && errno != EINTR) {
        result_.error = std::string("epoll_wait: ") + std::strerror(errno);
        break;
      }
      for (int e = 0; e < n && result_.error.empty(); ++e) {
        const std::size_t index = events[e].data.u64 & 0xffffffffu;
        Conn& c = conns_[index];
        if ((events[e].data.u64 >> 32) != c.generation) continue;  // an event for a closed socket
        on_event(index, events[e].events);
      }
    }
    if (meter) result_.cpu = meter->stop();
    // A capped or failed phase leaves requests in flight: their connections are dropped.
    for (Conn& c : conns_) {
      if (c.state != State::kIdle) drop(c);
    }
    if (!timed) return;
    if (load_.upstream_accepts != nullptr) {
      result_.upstream_opened = static_cast<long>(load_.upstream_accepts->load() - accepted_before);
    }
    result_.failures = failures_;
    result_.seconds = ms_between(start, last_answer_) / 1000.0;
    if (result_.completed > 0 && result_.seconds > 0) {
      result_.per_second = result_.completed / result_.seconds;
      std::sort(samples_.begin(), samples_.end());
      result_.p50_ms = percentile(samples_, 0.50);
      result_.p99_ms = percentile(samples_, 0.99);
      result_.samples = samples_;
    }
  }

  [[nodiscard]] const LoadResult& result() const { return result_; }

 private:
  enum class State : std::uint8_t { kIdle, kConnecting, kHandshake, kSending, kReading };
  struct Conn {
    Stream stream;
    State state = State::kIdle;
    std::uint32_t generation = 0;
    std::uint32_t interest = 0;
    std::string in;
    std::size_t sent = 0;
    Clock::time_point start;
    bool reused = false;   // this connection already carried an answer
    bool retried = false;  // the current request already moved to a new connection once
  };

  void begin(std::size_t index) {
    Conn& c = conns_[index];
    --to_start_;
    ++in_flight_;
    c.start = Clock::now();
    c.retried = false;
    if (c.stream.is_open()) {
      send_request(index);
    } else {
      connect_new(index);
    }
  }

  void send_request(std::size_t index) {
    Conn& c = conns_[index];
    c.state = State::kSending;
    c.sent = 0;
    c.in.clear();
    advance(index);
  }

  void connect_new(std::size_t index) {
    Conn& c = conns_[index];
    drop(c);
    if (timed_) ++result_.opened;
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const sockaddr_in sin = ipv4_address(target_.ip, target_.port);
    bssl::UniquePtr<SSL> ssl;
    if (target_.tls != nullptr) ssl = client_tls_session(target_.tls, target_.tls_host);
    c.stream.open(fd, std::move(ssl));
    c.reused = false;
    ++c.generation;
    c.interest = 0;
    const int rc = connect(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin);
    if (rc != 0 && errno != EINPROGRESS) {
      fail(index, "connect(" + target_.ip + ":" + std::to_string(target_.port) +
                      "): " + std::strerror(errno));
      return;
    }
    epoll_event ev{};
    ev.events = EPOLLOUT;
    ev.data.u64 = (static_cast<std::uint64_t>(c.generation) << 32) | index;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
    c.interest = EPOLLOUT;
    c.state = State::kConnecting;
    if (rc == 0) {
      c.state = State::kHandshake;
      advance(index);
    }
  }

  void on_event(std::size_t index, std::uint32_t events) {
    Conn& c = conns_[index];
    switch (c.state) {
      case State::kIdle:
        drop(c);  // a kept connection the server closed (or reset) between requests
        return;
      case State::kConnecting: {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(c.stream.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0 || (events & (EPOLLERR | EPOLLHUP)) != 0) {
          fail(index, "connect(" + target_.ip + ":" + std::to_string(target_.port) +
                          "): " + std::strerror(error != 0 ? error : ECONNREFUSED));
          return;
        }
        c.state = State::kHandshake;
        break;
      }
      case State::kHandshake:
      case State::kSending:
      case State::kReading:
        break;
    }
    advance(index);
  }

  void want(Conn& c, std::uint32_t interest, std::size_t index) {
    if (c.interest == interest) return;
    epoll_event ev{};
    ev.events = interest;
    ev.data.u64 = (static_cast<std::uint64_t>(c.generation) << 32) | index;
    epoll_ctl(epfd_, EPOLL_CTL_MOD, c.stream.fd(), &ev);
    c.interest = interest;
  }

  // Moves one request as far as the socket allows.
  void advance(std::size_t index) {
    Conn& c = conns_[index];
    while (true) {
      IoResult r;
      switch (c.state) {
        case State::kIdle:
        case State::kConnecting:
          return;
        case State::kHandshake:
          r = c.stream.handshake();
          if (r.status == Io::kMoved) {
            c.state = State::kSending;
            c.sent = 0;
            c.in.clear();
            continue;
          }
          break;
        case State::kSending:
          r = c.stream.write(target_.request.data() + c.sent, target_.request.size() - c.sent);
          if (r.status == Io::kMoved) {
            c.sent += r.bytes;
            if (c.sent == target_.request.size()) c.state = State::kReading;
            continue;
          }
          break;
        case State::kReading:
          r = c.stream.read(rx_.data(), rx_.size());
          if (r.status == Io::kMoved) {
            c.in.append(rx_.data(), r.bytes);
            const Answer a = parse_answer(c.in, false);
            if (!a.failure.empty()) {
              fail(index, a.failure);
              return;
            }
            if (a.complete) {
              answered(index, a.close);
              return;
            }
            continue;
          }
          if (r.status == Io::kEof) {
            if (c.in.empty() && c.reused && !c.retried) {
              retry(index);
              return;
            }
            const Answer a = parse_answer(c.in, true);
            if (a.complete) {
              answered(index, true);
            } else {
              fail(index, a.failure);
            }
            return;
          }
          break;
      }
      switch (r.status) {
        case Io::kWantRead:
          want(c, EPOLLIN, index);
          return;
        case Io::kWantWrite:
          want(c, EPOLLOUT, index);
          return;
        case Io::kEof:
          fail(index, "EOF during the TLS handshake or the request");
          return;
        case Io::kError:
          if (c.in.empty() && c.reused && !c.retried) {
            retry(index);  // a reset on a kept connection: as an EOF there
            return;
          }
          fail(index, c.stream.error());
          return;
        case Io::kMoved:
          return;  // handled above
      }
    }
  }

  // The server closed a kept connection before answering: the request goes again on a new one.
  void retry(std::size_t index) {
    if (timed_) ++result_.retried;
    conns_[index].retried =
        true;  // before connect_new: a connect failing at once starts the next request
    connect_new(index);
  }

  void answered(std::size_t index, bool server_closes) {
    Conn& c = conns_[index];
    const auto now = Clock::now();
    if (timed_) {
      ++result_.completed;
      samples_.push_back(ms_between(c.start, now));
      last_answer_ = now;
    }
    last_progress_ = now;
    --in_flight_;
    c.state = State::kIdle;
    c.reused = true;
    if (server_closes || target_.close_each) {
      drop(c);
    } else {
      want(c, EPOLLIN, index);  // an idle kept connection: only its close is news
    }
    if (to_start_ > 0) begin(index);
  }

  void fail(std::size_t index, const std::string& why) {
    Conn& c = conns_[index];
    if (result_.first_failure.empty()) result_.first_failure = why;
    ++failures_;
    --in_flight_;
    last_progress_ = Clock::now();
    drop(c);
    if (failures_ > std::max(10, load_.requests / 10)) {
      result_.error = "too many failures; the first: " + result_.first_failure;
      return;
    }
    if (to_start_ > 0) begin(index);
  }

  void drop(Conn& c) {
    c.stream.reset();
    c.state = State::kIdle;
    c.interest = 0;
    ++c.generation;
  }

  const Target& target_;
  const Load& load_;
  int epfd_ = -1;
  std::vector<Conn> conns_;
  std::vector<char> rx_;
  std::vector<double> samples_;
  LoadResult result_;
  bool timed_ = false;
  int to_start_ = 0;
  int in_flight_ = 0;
  int failures_ = 0;
  Clock::time_point last_progress_;  // the last answer or failure: what a stall is measured from
  Clock::time_point last_answer_;    // the last timed answer: where the timed requests ended
};

}  // namespace

LoadResult run_load(const Target& target, const Load& load) {
  Runner runner(target, load);
  if (load.warmup > 0) {
    runner.phase(load.warmup, false);
    if (!runner.result().error.empty()) {
      LoadResult failed = runner.result();
      failed.error = "warm-up: " + failed.error;
      return failed;
    }
  }
  runner.phase(load.requests, true);
  return runner.result();
}

Held hold_connections(const Target& target, int count) {
  Held held;
  for (int i = 0; i < count; ++i) {
    std::string error;
    int fd = connect_ipv4(target.ip, target.port, &error);
    std::string in;
    if (fd >= 0 && send_all(fd, target.request)) {
      in = read_head(fd);
      char buf[4096];
      while (!parse_answer(in, false).complete) {
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
      }
    }
    const Answer a = parse_answer(in, false);
    if (fd < 0 || !a.complete) {
      const std::string what = a.failure.empty() ? "no whole answer" : a.failure;
      held.error = fd < 0 ? error : "connection " + std::to_string(i) + ": " + what;
      if (fd >= 0) close(fd);
      break;
    }
    // A server that keeps the connection neither announces a close nor sends a FIN right after.
    pollfd p{fd, POLLIN, 0};
    const bool closed = a.close || poll(&p, 1, 20) == 1;
    if (closed) {
      close(fd);
      fd = connect_ipv4(target.ip, target.port, &error);
      if (fd < 0) {
        held.error = error;
        break;
      }
    } else {
      ++held.kept_alive;
    }
    held.fds.push_back(fd);
  }
  if (!held.error.empty()) {
    for (int fd : held.fds) close(fd);
    held.fds.clear();
  }
  return held;
}

LoadResult combine_loads(const std::vector<LoadResult>& rounds) {
  LoadResult out;
  bool counted_upstream = false;
  for (const LoadResult& r : rounds) {
    out.completed += r.completed;
    out.failures += r.failures;
    out.opened += r.opened;
    out.retried += r.retried;
    if (r.upstream_opened >= 0) {
      out.upstream_opened = (counted_upstream ? out.upstream_opened : 0) + r.upstream_opened;
      counted_upstream = true;
    }
    out.seconds += r.seconds;
    out.capped = out.capped || r.capped;
    out.rss_peak_kib = std::max(out.rss_peak_kib, r.rss_peak_kib);
    out.cpu.ok = (&r == &rounds.front() || out.cpu.ok) && r.cpu.ok;
    out.cpu.on_cpu_ns += r.cpu.on_cpu_ns;
    out.cpu.user_ticks += r.cpu.user_ticks;
    out.cpu.system_ticks += r.cpu.system_ticks;
    out.cpu.syscalls += r.cpu.syscalls;
    if (out.error.empty()) out.error = r.error;
    if (out.first_failure.empty()) out.first_failure = r.first_failure;
    out.samples.insert(out.samples.end(), r.samples.begin(), r.samples.end());
  }
  std::sort(out.samples.begin(), out.samples.end());
  if (out.completed > 0 && out.seconds > 0) out.per_second = out.completed / out.seconds;
  out.p50_ms = percentile(out.samples, 0.50);
  out.p99_ms = percentile(out.samples, 0.99);
  return out;
}

}  // namespace bench
