// The work tree seen by apply: every folder opened with O_NOFOLLOW from the top down, every leaf
// looked at with AT_SYMLINK_NOFOLLOW, every write a temporary name renamed over the path.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "controller/code/apply_internal.h"

namespace controller::code::apply_detail {
namespace {

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string::npos ? path.size() : slash;
    parts.push_back(path.substr(start, end - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

constexpr std::size_t kTempLeafChars = 64, kTempSuffixChars = 16;

std::string temp_prefix(const std::string& leaf) {
  return "." + leaf.substr(0, kTempLeafChars) + ".openchamber-";
}

std::string temp_name(const std::string& leaf) {
  static std::mt19937_64 random{std::random_device{}()};
  char suffix[kTempSuffixChars + 1];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random()));
  return temp_prefix(leaf) + suffix;
}

// A temporary name of `leaf` exactly: the prefix, then 16 lowercase hex digits.
bool is_temp_of(const std::string& name, const std::string& leaf) {
  const std::string prefix = temp_prefix(leaf);
  if (name.size() != prefix.size() + kTempSuffixChars ||
      name.compare(0, prefix.size(), prefix) != 0) {
    return false;
  }
  return name.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
}

Failure write_error(const std::string& what, const std::string& path) {
  return fail(Code::kApplyFailed, "apply: " + what + " " + path + ": " + std::strerror(errno));
}

bool read_fd(int fd, std::string& out, std::uint64_t max_bytes) {
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) return false;
  }
  return n == 0;
}

// Renames `temp` over `leaf`; an empty folder there (a gitlink the change turns into a file or
// link) is removed first. A folder that is not empty stays and the rename fails.
bool replace_into(int dir, const std::string& temp, const std::string& leaf) {
  struct stat st {};
  if (fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) unlinkat(dir, leaf.c_str(), AT_REMOVEDIR);
  if (renameat(dir, temp.c_str(), dir, leaf.c_str()) == 0) return true;
  const int saved = errno;
  unlinkat(dir, temp.c_str(), 0);
  errno = saved;
  return false;
}

}  // namespace

WorkTree::~WorkTree() {
  if (fd_ >= 0) ::close(fd_);
}

WorkTree::WorkTree(WorkTree&& other) noexcept : fd_(other.fd_), top_(std::move(other.top_)) { other.fd_ = -1; }

Result<WorkTree> WorkTree::open(const std::string& top) {
  WorkTree tree;
  tree.fd_ = ::open(top.c_str(), kFolderFlags);
  if (tree.fd_ < 0) return fail(Code::kApplyFailed, "apply: open work tree " + top + ": " + std::strerror(errno));
  tree.top_ = top;
  return tree;
}

WtEntry WorkTree::read(const std::string& path, const std::set<std::string>* gone, std::uint64_t max_bytes) const {
  WtEntry e;
  const std::vector<std::string> parts = split(path);
  int dir = ::dup(fd_);
  if (dir < 0) return e;
  std::string prefix;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    prefix += (i == 0 ? "" : "/") + parts[i];
    struct stat st {};
    if (fstatat(dir, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      ::close(dir);
      e.kind = errno == ENOENT ? WtKind::kAbsent : WtKind::kUnreadable;
      return e;
    }
    if (!S_ISDIR(st.st_mode)) {
      ::close(dir);
      // The change removes this link or file first: nothing is on the way after that.
      if (gone != nullptr && gone->count(prefix) != 0) {
        e.kind = WtKind::kAbsent;
        return e;
      }
      e.kind = S_ISLNK(st.st_mode) ? WtKind::kLinkOnTheWay : WtKind::kNotFolderOnTheWay;
      e.blocker = prefix;
      return e;
    }
    const int next = openat(dir, parts[i].c_str(), kFolderFlags);
    ::close(dir);
    if (next < 0) {
      e.kind = errno == ELOOP ? WtKind::kLinkOnTheWay : WtKind::kUnreadable;
      e.blocker = prefix;
      return e;
    }
    dir = next;
  }
  Fd folder(dir);
  const std::string& leaf = parts.back();
  struct stat st {};
  if (fstatat(folder.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    e.kind = errno == ENOENT ? WtKind::kAbsent : WtKind::kUnreadable;
    return e;
  }
  if (S_ISDIR(st.st_mode)) {
    e.kind = WtKind::kFolder;
  } else if (S_ISLNK(st.st_mode)) {
    std::string target(4096, '\0');
    const ssize_t n = readlinkat(folder.fd, leaf.c_str(), target.data(), target.size());
    if (n < 0) return e;
    target.resize(static_cast<std::size_t>(n));
    e.kind = WtKind::kLink;
    e.bytes = std::move(target);
  } else if (S_ISREG(st.st_mode)) {
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return e;
    Fd file(openat(folder.fd, leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (file.fd < 0 || !read_fd(file.fd, e.bytes, max_bytes)) {
      e.bytes.clear();
      return e;
    }
    e.kind = WtKind::kFile;
    e.exec = (st.st_mode & 0100) != 0;
  } else {
    e.kind = WtKind::kOther;
  }
  return e;
}

int WorkTree::open_parent(const std::string& path, bool create, std::string& leaf) const {
  const std::vector<std::string> parts = split(path);
  int dir = ::dup(fd_);
  for (std::size_t i = 0; dir >= 0 && i + 1 < parts.size(); ++i) {
    int next = openat(dir, parts[i].c_str(), kFolderFlags);
    if (next < 0 && errno == ENOENT && create) {
      if (mkdirat(dir, parts[i].c_str(), 0777) != 0 && errno != EEXIST) {
        const int saved = errno;
        ::close(dir);
        errno = saved;
        return -1;
      }
      next = openat(dir, parts[i].c_str(), kFolderFlags);
    }
    const int saved = errno;
    ::close(dir);
    errno = saved;
    dir = next;
  }
  leaf = parts.back();
  return dir;
}

Result<void> WorkTree::write_file(const std::string& path, const std::string& bytes, bool exec) const {
  std::string leaf;
  Fd dir(open_parent(path, true, leaf));
  if (dir.fd < 0) return write_error("open the folder of", path);
  const std::string temp = temp_name(leaf);
  // The mode git gives a checked-out file; the umask applies as it does for git.
  Fd file(openat(dir.fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, exec ? 0777 : 0666));
  if (file.fd < 0) return write_error("create a temporary file for", path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      unlinkat(dir.fd, temp.c_str(), 0);
      errno = saved;
      return write_error("write", path);
    }
    done += static_cast<std::size_t>(n);
  }
  if (!replace_into(dir.fd, temp, leaf)) return write_error("rename into place", path);
  return {};
}

Result<void> WorkTree::write_link(const std::string& path, const std::string& target) const {
  std::string leaf;
  Fd dir(open_parent(path, true, leaf));
  if (dir.fd < 0) return write_error("open the folder of", path);
  const std::string temp = temp_name(leaf);
  if (symlinkat(target.c_str(), dir.fd, temp.c_str()) != 0) return write_error("create a link for", path);
  if (!replace_into(dir.fd, temp, leaf)) return write_error("rename into place", path);
  return {};
}

Result<void> WorkTree::make_folder(const std::string& path) const {
  std::string leaf;
  Fd dir(open_parent(path, true, leaf));
  if (dir.fd < 0) return write_error("open the folder of", path);
  struct stat st {};
  // A file or link the change turns into a gitlink goes first (its content was checked).
  if (fstatat(dir.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
      unlinkat(dir.fd, leaf.c_str(), 0) != 0) {
    return write_error("remove", path);
  }
  if (mkdirat(dir.fd, leaf.c_str(), 0777) != 0 && errno != EEXIST) return write_error("make the folder", path);
  return {};
}

Result<void> WorkTree::remove(const std::string& path) const {
  std::string leaf;
  {
    Fd dir(open_parent(path, false, leaf));
    if (dir.fd < 0) return write_error("open the folder of", path);
    struct stat st {};
    if (fstatat(dir.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      // A gitlink's folder goes only when empty (a nested repository is never deleted).
      const int flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0;
      if (unlinkat(dir.fd, leaf.c_str(), flags) != 0 &&
          !(flags != 0 && (errno == ENOTEMPTY || errno == EEXIST))) {
        return write_error("remove", path);
      }
    } else if (errno != ENOENT) {
      return write_error("look at", path);
    }
  }
  // Folders the removal left empty go too, as git does; the first that is not empty stops it.
  std::string folder = path;
  while (true) {
    const std::size_t slash = folder.rfind('/');
    if (slash == std::string::npos) break;
    folder.resize(slash);
    std::string name;
    Fd parent(open_parent(folder, false, name));
    if (parent.fd < 0 || unlinkat(parent.fd, name.c_str(), AT_REMOVEDIR) != 0) break;
  }
  return {};
}

std::string signature(const WtEntry& e) {
  auto hash = [](const std::string& bytes, git_object_t type) {
    git_oid oid;
    if (git_odb_hash(&oid, bytes.data(), bytes.size(), type) < 0) return std::string("?");
    return oid_hex(oid);
  };
  switch (e.kind) {
    case WtKind::kAbsent: return "-";
    case WtKind::kFile: return (e.exec ? "x" : "f") + hash(e.bytes, GIT_OBJECT_BLOB);
    case WtKind::kLink: return "l" + hash(e.bytes, GIT_OBJECT_BLOB);
    case WtKind::kFolder: return "d";
    case WtKind::kOther: return "o";
    case WtKind::kLinkOnTheWay:
    case WtKind::kNotFolderOnTheWay:
    case WtKind::kUnreadable: return "!";
  }
  return "!";
}

Result<std::string> convert_bytes(git_repository* repo, const std::string& path,
                                  const std::string& bytes, git_filter_mode_t mode) {
  const bool clean = mode == GIT_FILTER_TO_ODB;
  git_filter_list* raw = nullptr;
  if (auto r = git2_check(
          git_filter_list_load(&raw, repo, nullptr, path.c_str(), mode, GIT_FILTER_DEFAULT),
          std::string(clean ? "apply: load the clean conversions of "
                            : "apply: load the conversions of ") +
              path,
          Code::kApplyFailed);
      !r) {
    return r.error();
  }
  if (raw == nullptr) return bytes;
  std::unique_ptr<git_filter_list, decltype(&git_filter_list_free)> filters(raw, git_filter_list_free);
  git_buf out = GIT_BUF_INIT;
  if (auto r = git2_check(
          git_filter_list_apply_to_buffer(&out, filters.get(), bytes.data(), bytes.size()),
          std::string(clean ? "apply: clean " : "apply: convert ") + path, Code::kApplyFailed);
      !r) {
    return r.error();
  }
  std::string converted(out.ptr, out.size);
  git_buf_dispose(&out);
  return converted;
}

Result<std::string> blob_to_worktree(git_repository* repo, const std::string& path, const git_oid& oid) {
  git_blob* raw = nullptr;
  if (auto r = git2_check(git_blob_lookup(&raw, repo, &oid),
                          "apply: read blob " + oid_hex(oid) + " of " + path, Code::kApplyFailed);
      !r) {
    return r.error();
  }
  std::unique_ptr<git_blob, decltype(&git_blob_free)> blob(raw, git_blob_free);
  git_blob_filter_options options = GIT_BLOB_FILTER_OPTIONS_INIT;
  git_buf out = GIT_BUF_INIT;
  if (auto r = git2_check(git_blob_filter(&out, blob.get(), path.c_str(), &options),
                          "apply: convert " + path, Code::kApplyFailed);
      !r) {
    return r.error();
  }
  std::string bytes(out.ptr, out.size);
  git_buf_dispose(&out);
  return bytes;
}

bool holds(git_repository* repo, const std::string& path, const WtEntry& e, const Side& side) {
  if (!side.present()) return e.kind == WtKind::kAbsent;
  switch (side.mode) {
    case kModeGitlink: return e.kind == WtKind::kFolder;
    case kModeLink: {
      if (e.kind != WtKind::kLink) return false;
      git_oid oid;
      return git_odb_hash(&oid, e.bytes.data(), e.bytes.size(), GIT_OBJECT_BLOB) == 0 && git_oid_equal(&oid, &side.oid) != 0;
    }
    default: {
      if (e.kind != WtKind::kFile) return false;
      Result<std::string> cleaned = convert_bytes(repo, path, e.bytes, GIT_FILTER_TO_ODB);
      if (!cleaned) return false;
      git_oid oid;
      return git_odb_hash(&oid, cleaned->data(), cleaned->size(), GIT_OBJECT_BLOB) == 0 && git_oid_equal(&oid, &side.oid) != 0;
    }
  }
}

std::size_t WorkTree::remove_leftover_temporaries(const std::string& path) const {
  for (const std::string& part : split(path)) {
    if (part.empty() || part == "." || part == "..") return 0;  // never in a manifest's path
  }
  std::string leaf;
  Fd dir(open_parent(path, false, leaf));
  if (dir.fd < 0) return 0;
  const int listing_fd = ::dup(dir.fd);
  if (listing_fd < 0) return 0;
  DIR* listing = fdopendir(listing_fd);
  if (listing == nullptr) {
    ::close(listing_fd);
    return 0;
  }
  std::vector<std::string> found;
  while (const dirent* d = readdir(listing)) {
    if (is_temp_of(d->d_name, leaf)) found.emplace_back(d->d_name);
  }
  closedir(listing);
  std::size_t removed = 0;
  for (const std::string& name : found) {
    struct stat st {};
    if (fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    removed += unlinkat(dir.fd, name.c_str(), 0) == 0;
  }
  return removed;
}

}  // namespace controller::code::apply_detail
