#include "controller/serve/activation.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace controller::serve {

namespace {

// A decimal of 1 to 10 digits without sign or leading zero ("0" itself allowed).
bool decimal(std::string_view s, long long& out) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return false;
  out = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

}  // namespace

Result<int> listen_fds_count(const char* listen_pid, const char* listen_fds, pid_t self) {
  if (listen_pid == nullptr || listen_fds == nullptr) return 0;
  long long pid = 0, n = 0;
  if (!decimal(listen_pid, pid))
    return fail(Code::kUsage, "serve: socket activation: LISTEN_PID is not a process id");
  if (pid != self) return 0;  // meant for the process that inherited it to us
  if (!decimal(listen_fds, n) || n > 64)
    return fail(Code::kUsage, "serve: socket activation: LISTEN_FDS is not a count of 0 to 64");
  return static_cast<int>(n);
}

Result<int> activated_socket(std::string& path) {
  const char* pid_text = std::getenv("LISTEN_PID");
  const char* fds_text = std::getenv("LISTEN_FDS");
  Result<int> count = listen_fds_count(pid_text, fds_text, getpid());
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  if (!count) return count.error();
  if (*count == 0) return -1;
  if (*count != 1)
    return fail(Code::kUsage,
                "serve: socket activation passed " + std::to_string(*count) +
                    " sockets; the unit must listen on exactly one unix stream socket");
  const int fd = kListenFdsStart;
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
    return fail(Code::kUsage, "serve: socket activation: fd 3 is not open");
  int type = 0, listening = 0;
  socklen_t len = sizeof type;
  sockaddr_un addr{};
  socklen_t alen = sizeof addr;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
      (len = sizeof listening, getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len)) != 0 ||
      listening == 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0 ||
      addr.sun_family != AF_UNIX || alen <= offsetof(sockaddr_un, sun_path) ||
      addr.sun_path[0] == '\0')
    return fail(Code::kUsage,
                "serve: socket activation: fd 3 is not a listening unix stream socket with a path");
  path.assign(addr.sun_path, strnlen(addr.sun_path, alen - offsetof(sockaddr_un, sun_path)));
  struct stat st {};
  // Connecting to a unix socket needs write permission on its file: no group or other write bit.
  if (lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fail(Code::kUsage,
                "serve: socket activation: " + path +
                    " must be a socket of this user that no one else may connect to (SocketMode=0600)");
  return fd;
}

}  // namespace controller::serve
