// Private temporary folders of spacectl (an index copy of code in, an env file of create, a
// quarantine of code out): `$TMPDIR/spacectl-<what>-XXXXXX` (else /tmp), 0700, holding a lock file
// `.spacectl-owner` that the making process keeps an exclusive flock on for the folder's life.
// A process that dies (even by SIGKILL) releases the flock, so `spacectl sweep` can tell a folder
// whose owner is gone from one in use without trusting a pid that may have been reused.
#pragma once

#include <string>
#include <vector>

#include "controller/errors.h"

namespace controller {

class OwnedTempDir {
 public:
  // what: [a-z-]{1,32}, e.g. "code-in".
  static Result<OwnedTempDir> make(const std::string& what);
  OwnedTempDir(OwnedTempDir&& other) noexcept : path_(std::move(other.path_)), lock_fd_(other.lock_fd_) {
    other.path_.clear();
    other.lock_fd_ = -1;
  }
  OwnedTempDir& operator=(OwnedTempDir&&) = delete;
  OwnedTempDir(const OwnedTempDir&) = delete;
  OwnedTempDir& operator=(const OwnedTempDir&) = delete;
  ~OwnedTempDir();  // removes the folder with everything in it, then drops the flock

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  OwnedTempDir(std::string path, int fd) : path_(std::move(path)), lock_fd_(fd) {}
  std::string path_;
  int lock_fd_ = -1;
};

// The folder temporary folders go in: $TMPDIR when absolute, else /tmp.
std::string temp_base();

// Removes every `spacectl-*` folder in `base` that belongs to this user and carries a
// `.spacectl-owner` no process holds any more. Folders without the lock file (older spacectl, or
// not ours) and every other owner's are left alone. Answers the paths removed.
std::vector<std::string> sweep_temp_dirs(const std::string& base);

// Removes a folder tree without following any symlink in it (nftw with FTW_PHYS).
void remove_tree(const std::string& path);

}  // namespace controller
