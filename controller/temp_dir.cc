#include "controller/temp_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace controller {
namespace {

constexpr const char* kPrefix = "spacectl-";
constexpr const char* kOwnerFile = ".spacectl-owner";

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

bool is_what(const std::string& what) {
  if (what.empty() || what.size() > 32) return false;
  for (const char c : what)
    if (!((c >= 'a' && c <= 'z') || c == '-')) return false;
  return true;
}

}  // namespace

std::string temp_base() {
  const char* base = std::getenv("TMPDIR");
  return base != nullptr && base[0] == '/' ? std::string(base) : std::string("/tmp");
}

void remove_tree(const std::string& path) {
  if (!path.empty()) nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

Result<OwnedTempDir> OwnedTempDir::make(const std::string& what) {
  if (!is_what(what)) return fail(Code::kInternal, "temporary folder: '" + what + "' is not a folder kind");
  std::string pattern = temp_base() + "/" + kPrefix + what + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    return fail(Code::kInternal, "mkdtemp " + pattern + ": " + std::strerror(errno));
  // Locked under another name, then renamed: a sweep never sees the owner file unlocked.
  const std::string fresh = pattern + "/.spacectl-owner.new";
  const int fd = open(fresh.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(fresh.c_str(), (pattern + "/" + kOwnerFile).c_str()) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    remove_tree(pattern);
    return fail(Code::kInternal, "temporary folder " + pattern + ": its owner lock: " + why);
  }
  return OwnedTempDir(pattern, fd);
}

OwnedTempDir::~OwnedTempDir() {
  remove_tree(path_);
  if (lock_fd_ >= 0) close(lock_fd_);
}

std::vector<std::string> sweep_temp_dirs(const std::string& base) {
  std::vector<std::string> removed;
  DIR* d = opendir(base.c_str());
  if (d == nullptr) return removed;
  const int dfd = dirfd(d);
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    struct stat st{};
    // The folder itself: ours, a real directory (never a symlink someone put there).
    if (fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    const std::string path = base + "/" + name;
    const int fd = open((path + "/" + kOwnerFile).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;  // no owner lock: not a folder this sweep may judge
    struct stat lst{};
    const bool ours = fstat(fd, &lst) == 0 && S_ISREG(lst.st_mode) && lst.st_uid == geteuid();
    // Taken: nobody holds it, so the process that made the folder is gone. Kept until the folder
    // is removed, so a live process cannot start using it meanwhile (none would: names are fresh).
    if (ours && flock(fd, LOCK_EX | LOCK_NB) == 0) {
      remove_tree(path);
      removed.push_back(path);
    }
    close(fd);
  }
  closedir(d);
  return removed;
}

}  // namespace controller
