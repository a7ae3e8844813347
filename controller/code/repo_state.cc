#include "controller/code/repo_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include <algorithm>

#include "controller/code/git2.h"

namespace controller::code {
namespace {

std::string hash_bytes(const std::string& bytes) {
  git2_init();
  git_oid oid;
  if (git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) < 0) return "unhashable";
  return oid_hex(oid);
}

bool read_all(const std::string& path, std::string& out) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  return n == 0;
}

void walk(const std::string& path, RepoState& state) {
  struct stat st {};
  PathState s;
  if (lstat(path.c_str(), &st) != 0) {
    s.kind = '!';
    state[path] = s;
    return;
  }
  s.mode = st.st_mode & 07777;
  if (S_ISREG(st.st_mode)) {
    s.kind = 'f';
    std::string bytes;
    s.content = read_all(path, bytes) ? hash_bytes(bytes) : "unreadable";
  } else if (S_ISLNK(st.st_mode)) {
    s.kind = 'l';
    std::string target(4096, '\0');
    const ssize_t n = readlink(path.c_str(), target.data(), target.size());
    target.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    s.content = hash_bytes(target);
    s.mode = 0;  // link permission bits mean nothing on Linux
  } else if (S_ISDIR(st.st_mode)) {
    s.kind = 'd';
  } else if (S_ISFIFO(st.st_mode)) {
    s.kind = 'p';
  } else if (S_ISSOCK(st.st_mode)) {
    s.kind = 's';
  } else if (S_ISCHR(st.st_mode)) {
    s.kind = 'c';
  } else if (S_ISBLK(st.st_mode)) {
    s.kind = 'b';
  }
  state[path] = s;
  if (s.kind != 'd') return;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    state[path].content = "unlistable";
    return;
  }
  std::vector<std::string> names;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  for (const std::string& name : names) walk(path + "/" + name, state);
}

bool is_hex(const std::string& s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A new loose object (or its fan-out folder) in the repository's own object store.
bool allowed_object(const std::string& path, const PathState& s, const Allowed& a) {
  if (a.objects_dir.empty() || path.rfind(a.objects_dir + "/", 0) != 0) return false;
  const std::string rest = path.substr(a.objects_dir.size() + 1);
  if (a.new_packs && rest.rfind("pack/pack-", 0) == 0 && s.kind == 'f') {
    const std::string name = rest.substr(10);
    const std::size_t dot = name.find('.');
    if (dot != std::string::npos && (is_hex(name.substr(0, dot), 40) || is_hex(name.substr(0, dot), 64)) &&
        (name.substr(dot) == ".pack" || name.substr(dot) == ".idx"))
      return true;
  }
  if (!a.loose_objects) return false;
  const std::size_t slash = rest.find('/');
  if (slash == std::string::npos) return s.kind == 'd' && is_hex(rest, 2);
  return s.kind == 'f' && is_hex(rest.substr(0, slash), 2) &&
         (is_hex(rest.substr(slash + 1), 38) || is_hex(rest.substr(slash + 1), 62));
}

bool allowed_ref_path(const std::string& path, const PathState& s, const Allowed& a) {
  if (a.refs_dir.empty() || a.space_id.empty()) return false;
  const std::string base = a.refs_dir + "/openchamber";
  if (path == base || path == base + "/spaces" || path == base + "/spaces/" + a.space_id) return s.kind == 'd';
  for (const std::string& name : a.space_refs)
    if (path == base + "/spaces/" + a.space_id + "/" + name && s.kind == 'f') return true;
  return false;
}

std::string describe(const PathState& s) {
  switch (s.kind) {
    case 'f': return "file";
    case 'd': return "folder";
    case 'l': return "symlink";
    case 'p': return "FIFO";
    case 's': return "socket";
    case 'c': return "character device";
    case 'b': return "block device";
    case '!': return "unreadable path";
    default: return "other";
  }
}

}  // namespace

RepoState capture_state(const std::vector<std::string>& roots) {
  RepoState state;
  for (const std::string& root : roots) walk(root, state);
  return state;
}

std::vector<std::string> forbidden_changes(const RepoState& before, const RepoState& after, const Allowed& allowed) {
  std::vector<std::string> out;
  for (const auto& [path, s] : before) {
    auto it = after.find(path);
    if (it == after.end()) {
      if (!allowed_ref_path(path, s, allowed)) out.push_back("removed " + describe(s) + " " + path);
      continue;
    }
    const PathState& t = it->second;
    if (allowed.ref_may_move && s.kind == 'f' && t.kind == 'f' && allowed_ref_path(path, t, allowed)) continue;
    if (s.kind != t.kind) out.push_back("changed kind of " + path + " from " + describe(s) + " to " + describe(t));
    else if (s.mode != t.mode) out.push_back("changed mode of " + path);
    else if (s.content != t.content) out.push_back("changed " + std::string(s.kind == 'l' ? "target" : "bytes") + " of " + path);
  }
  for (const auto& [path, t] : after) {
    if (before.count(path) != 0) continue;
    if (!allowed_object(path, t, allowed) && !allowed_ref_path(path, t, allowed)) out.push_back("added " + describe(t) + " " + path);
  }
  return out;
}

}  // namespace controller::code
