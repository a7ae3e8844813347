// `spacectl serve`: the controller as a long-running service (controller/API.md). One libuv loop
// answers on a unix socket in the state directory (0600; only this user's peers), and optionally
// on 127.0.0.1:PORT with a bearer token read from a 0600 file. Blocking work runs on libuv's
// thread pool, long work as operations on threads of their own; the loop never waits for docker.
// At start it sweeps (controller/sweep.h) as an operation; SIGINT, SIGTERM or SIGHUP stop it:
// running operations are interrupted (their rollback runs), listeners close, then it exits.
#pragma once

#include <cstdint>
#include <string>

#include "controller/place.h"

namespace controller::serve {

struct ServeOptions {
  std::string place_name = "docker";
  PlaceOptions place_options;
  std::string state;
  std::string socket_path;   // empty: <state>/serve.sock
  std::string listen;        // "127.0.0.1:PORT" or empty
  std::string token_file;    // required with listen
  bool sweep_at_start = true;
  std::int64_t sweep_grace_seconds = 600;
  std::string escape_binary, escape_test_image_file;
  std::int64_t renew_window_seconds = 600;  // the keeper's window (keeper.h)
};

// Reads a bearer token file: a regular file of this user, mode exactly 0600, 32 to 512 printable
// ASCII characters (one trailing newline allowed).
Result<std::string> read_token_file(const std::string& path);

// Runs until a stop signal; answers the process exit status.
int run_serve(const ServeOptions& options);

}  // namespace controller::serve
