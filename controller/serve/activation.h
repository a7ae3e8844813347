// systemd socket activation for `spacectl serve` (the spacectl.socket units in
// packaging/systemd/): the sd_listen_fds(3) protocol implemented here, so nothing links
// libsystemd. The manager passes listening sockets from fd 3 on and says so in LISTEN_PID (the
// pid it started, so a child that inherited the variables ignores them) and LISTEN_FDS (how many).
#pragma once

#include <sys/types.h>

#include <string>

#include "controller/errors.h"

namespace controller::serve {

inline constexpr int kListenFdsStart = 3;  // SD_LISTEN_FDS_START

// How many sockets LISTEN_PID/LISTEN_FDS hand to `self`: 0 when not activated (either variable
// missing, or LISTEN_PID names another process); a failure when they are malformed.
Result<int> listen_fds_count(const char* listen_pid, const char* listen_fds, pid_t self);

// The activated socket, if any: exactly one, a listening AF_UNIX stream socket whose file is
// this user's and that nobody else may connect to (no group or other write bit: connecting needs
// write permission), like the socket serve binds itself. Answers -1 when not activated. LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES
// are removed from the environment either way (the processes serve starts never see them), and
// the fd is made close-on-exec. `path` gets the socket's path.
Result<int> activated_socket(std::string& path);

}  // namespace controller::serve
