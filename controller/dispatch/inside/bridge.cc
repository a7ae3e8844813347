// spacectl-bridge: the one program of ours `Place::connect` runs inside a space. It joins its
// stdin/stdout (the place's exec stream, whose other end is the host's dispatcher) to a TCP
// connection to 127.0.0.1:<port> inside the space.
//
//   spacectl-bridge <port>
//
// Contract (what the dispatcher relies on):
// - Nothing is written to stdout before the connection stands; a refused connect exits 2 with
//   one line on stderr and no output (the host reads "failed before any byte").
// - Backpressure both ways: at most kBuffer bytes are held per direction; a side is read only
//   while its buffer has room, so a slow reader slows the writer instead of growing memory.
// - Half-close: stdin's end is passed on as shutdown(SHUT_WR) once everything read from stdin
//   has been written to the socket; the other direction keeps flowing.
// - Flush before exit: when the socket ends (or fails), every byte already read from it is
//   written to stdout before the program exits. An exit on socket close that dropped buffered
//   bytes is the failure this rule exists for.
// Static, no libc name lookups, no environment read: it must run in any image.
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr std::size_t kBuffer = 256 * 1024;

struct Pipe {
  char* data = nullptr;
  std::size_t begin = 0, end = 0;
  bool eof = false;     // the source ended (or failed); nothing more will be read
  bool failed = false;  // it failed (a reset), rather than ending
  [[nodiscard]] std::size_t held() const { return end - begin; }
  [[nodiscard]] bool room() const { return !eof && held() < kBuffer; }
};

void complain(const char* what) {
  char line[160];
  const int n = std::snprintf(line, sizeof line, "spacectl-bridge: %s: %s\n", what, std::strerror(errno));
  if (n > 0) (void)!::write(2, line, static_cast<std::size_t>(n));
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Reads from `fd` into `p`; sets p.eof when the source ended or failed.
void fill(int fd, Pipe& p) {
  if (p.begin == p.end) p.begin = p.end = 0;
  if (p.end == kBuffer && p.begin > 0) {
    std::memmove(p.data, p.data + p.begin, p.held());
    p.end -= p.begin;
    p.begin = 0;
  }
  const ssize_t n = ::read(fd, p.data + p.end, kBuffer - p.end);
  if (n > 0) p.end += static_cast<std::size_t>(n);
  else if (n == 0) p.eof = true;
  else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) p.eof = p.failed = true;
}

// Writes what `p` holds to `fd`; false when the sink is gone.
bool drain(int fd, Pipe& p) {
  while (p.held() > 0) {
    const ssize_t n = ::write(fd, p.data + p.begin, p.held());
    if (n > 0) {
      p.begin += static_cast<std::size_t>(n);
      if (p.begin == p.end) p.begin = p.end = 0;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

int parse_port(const char* text) {
  if (text == nullptr || *text == '\0' || std::strlen(text) > 5) return -1;
  int v = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return -1;
    v = v * 10 + (*c - '0');
  }
  return v >= 1 && v <= 65535 ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int port = argc == 2 ? parse_port(argv[1]) : -1;
  if (port < 0) {
    static const char usage[] = "usage: spacectl-bridge <port 1-65535>\n";
    (void)!::write(2, usage, sizeof usage - 1);
    return 64;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a gone reader is an EPIPE we handle, not a death

  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) {
    complain("socket");
    return 2;
  }
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(sock, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0) {
    complain("connect 127.0.0.1");
    return 2;
  }
  const int one = 1;
  (void)::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!set_nonblocking(0) || !set_nonblocking(1) || !set_nonblocking(sock)) {
    complain("fcntl O_NONBLOCK");
    return 2;
  }

  static char up_bytes[kBuffer], down_bytes[kBuffer];
  Pipe up{up_bytes}, down{down_bytes};  // up: stdin -> socket; down: socket -> stdout
  bool up_shut = false, stdout_gone = false;

  for (;;) {
    // Done when the socket's bytes all reached stdout (or stdout is gone).
    if ((down.eof && down.held() == 0) || stdout_gone) break;
    if (up.eof && up.held() == 0 && !up_shut) {
      (void)::shutdown(sock, SHUT_WR);  // half-close: the inner server sees the request end
      up_shut = true;
    }
    pollfd fds[3] = {{0, 0, 0}, {1, 0, 0}, {sock, 0, 0}};
    if (up.room()) fds[0].events |= POLLIN;
    if (down.held() > 0) fds[1].events |= POLLOUT;
    if (down.room()) fds[2].events |= POLLIN;
    if (up.held() > 0) fds[2].events |= POLLOUT;
    // A negative fd is skipped. stdout stays in the set with no events: POLLERR/POLLHUP there
    // means the host's end is gone (its exec was killed), and nothing is left to carry.
    if (fds[0].events == 0) fds[0].fd = -1;
    if (fds[2].events == 0) fds[2].fd = -1;
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      complain("poll");
      return 1;
    }
    if (fds[0].revents != 0) fill(0, up);
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (down.room()) fill(sock, down);
    }
    if (up.held() > 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      if (!drain(sock, up)) {
        // The server no longer reads: drop what stdin still sends, keep delivering its answer.
        up.begin = up.end = 0;
        up.eof = true;
        up_shut = true;
      }
    }
    if (down.held() > 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      if (!drain(1, down)) stdout_gone = true;
    } else if (fds[1].revents & (POLLERR | POLLHUP)) {
      stdout_gone = true;
    }
  }
  ::close(sock);
  // Non-zero after a reset: the host must not take a cut-off answer for a whole one.
  return stdout_gone || down.failed ? 1 : 0;
}
