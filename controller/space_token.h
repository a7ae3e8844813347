// The per-space token: the password of the space's inner server, which the dispatcher logs in
// with. Made at create (32 random bytes, base64url), written into the space over exec stdin only
// (never an argv, the environment, a label or a log line, so `docker inspect` and the engine's
// logs never show it) and read back the same way. The host keeps no copy on disk.
//
// Not a secret from the agent: the space user can read the file. It keeps the inner server
// closed to everything else inside the space's loopback that is not the space user.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "controller/place.h"

namespace controller {

// Inside every space (the layout): a directory of mode 0700 and a file of mode 0600.
inline constexpr std::string_view kTokenDir = "/home/space/.spacectl";
inline constexpr std::string_view kTokenPath = "/home/space/.spacectl/token";
inline constexpr std::chrono::seconds kTokenTimeout{10};

// 32 bytes from getrandom, base64url without padding: 43 characters.
std::string make_space_token();
// What read-back accepts: ^[A-Za-z0-9_-]{32,128}$ (nothing else ever leaves the file).
[[nodiscard]] bool token_well_formed(std::string_view token);

// Writes `token` through the stdin of `dd of=token.new` as the space user, after mkdir and chmod
// 700 of the directory, then chmod 600 and mv into place; each step an argv, no shell (needs
// mkdir, chmod, dd and mv in the image, or busybox).
Result<void> write_space_token(Place& place, const std::string& id, const std::string& token);
// Reads it back with `cat` (or `busybox cat`); anything malformed, missing, too large or too slow is one failure
// whose message never holds the file's bytes.
Result<std::string> read_space_token(Place& place, const std::string& id);

}  // namespace controller
