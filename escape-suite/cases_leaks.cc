// What the runtime or the host may have left inside the space: descriptors (CVE-2024-21626 leaked
// a host cgroup directory fd into the container), runtime processes whose /proc/<pid>/exe can be
// rewritten (CVE-2019-5736), processes of the host or the gatekeeper (pid namespace), and secrets
// (the fake grant key, found only by its sha256, must be nowhere the space can read).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <set>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"
#include "escape-suite/sha256.h"

namespace escape {
namespace {

inline constexpr std::size_t kMinTokenBytes = 16;  // the runner's fake key is at least this long
inline constexpr std::size_t kMaxTokenBytes = 1024;
inline constexpr std::size_t kMaxScannedFiles = 20000;
inline constexpr std::size_t kMaxScannedFileBytes = 1 << 20;
inline constexpr std::uint64_t kMaxScannedTotalBytes = 64ull << 20;

bool token_char(char c, bool with_equals) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == '~' || c == '+' || c == '/' || (with_equals && c == '=');
}

// True when some token of `data` hashes to `hex`. Two tokenisations: with '=' as a separator
// (NAME=value) and as part of a token (base64 padding).
bool has_token_with_digest(std::string_view data, const std::string& hex) {
  for (const bool with_equals : {false, true}) {
    std::size_t i = 0;
    while (i < data.size()) {
      while (i < data.size() && !token_char(data[i], with_equals)) ++i;
      std::size_t j = i;
      while (j < data.size() && token_char(data[j], with_equals)) ++j;
      const std::size_t len = j - i;
      if (len >= kMinTokenBytes && len <= kMaxTokenBytes && sha256_hex(data.substr(i, len)) == hex) {
        return true;
      }
      i = j;
    }
  }
  return false;
}

std::string env_block() {
  std::string all;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    all += *e;
    all.push_back('\n');
  }
  return all;
}

// Walks `root` (no symlinks followed, bounded) and returns files whose content has the digest.
void scan_tree(const std::string& root, const std::string& hex, int depth, std::size_t& files,
               std::uint64_t& bytes, std::string& hits) {
  if (depth > 12 || files >= kMaxScannedFiles || bytes >= kMaxScannedTotalBytes) return;
  for (const std::string& name : list_dir(root, 4096)) {
    const std::string path = root == "/" ? "/" + name : root + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      scan_tree(path, hex, depth + 1, files, bytes, hits);
    } else if (S_ISREG(st.st_mode) && st.st_size > 0 &&
               static_cast<std::uint64_t>(st.st_size) <= kMaxScannedFileBytes) {
      ++files;
      const FileRead f = read_bounded(path, kMaxScannedFileBytes);
      bytes += f.data.size();
      if (f.ok && has_token_with_digest(f.data, hex)) hits += path + " ";
    }
    if (files >= kMaxScannedFiles || bytes >= kMaxScannedTotalBytes) return;
  }
}

std::vector<std::string> writable_roots(const Options& opts) {
  std::vector<std::string> roots = {"/tmp"};
  const char* home = ::getenv("HOME");
  if (home != nullptr && home[0] == '/') roots.emplace_back(home);
  if (!opts.space_id.empty()) roots.push_back("/spaces/" + opts.space_id);
  return roots;
}

// Socket inodes this network namespace knows about (/proc/net/* tables). A socket fd whose inode
// is in none of them belongs to another namespace: a descriptor the runtime or the host leaked.
std::set<std::string> known_socket_inodes() {
  std::set<std::string> inodes;
  struct Table {
    const char* path;
    int column;  // 0-based whitespace column holding the inode
  };
  static constexpr Table kTables[] = {{"/proc/net/unix", 6},  {"/proc/net/tcp", 9},
                                      {"/proc/net/tcp6", 9},  {"/proc/net/udp", 9},
                                      {"/proc/net/udp6", 9},  {"/proc/net/raw", 9},
                                      {"/proc/net/raw6", 9},  {"/proc/net/netlink", 9},
                                      {"/proc/net/packet", 8}, {"/proc/net/icmp", 9},
                                      {"/proc/net/icmp6", 9}};
  for (const Table& t : kTables) {
    const FileRead f = read_bounded(t.path, 4 << 20);
    for (const std::string& line : split_lines(f.data)) {
      int col = 0;
      std::size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        std::size_t j = i;
        while (j < line.size() && line[j] != ' ') ++j;
        if (j > i && col++ == t.column) inodes.insert(line.substr(i, j - i));
        i = j;
      }
    }
  }
  return inodes;
}

bool suspicious_target(const std::string& target) {
  for (const char* word : {"/var/lib/docker", "/run/containerd", "/run/docker", "docker.sock",
                           "containerd", "runc", "/sys/fs/cgroup", "(unreachable)"}) {
    if (target.find(word) != std::string::npos) return true;
  }
  return false;
}

Outcome secret_scan(Context& ctx, const std::string& where, const std::string& data) {
  if (ctx.opts.secret_sha256.empty()) {
    return inconclusive("the runner passed no --secret-sha256; nothing to look for in " + where);
  }
  if (has_token_with_digest(data, ctx.opts.secret_sha256)) return fail("the key is in " + where);
  return pass("key digest not found in " + where + " (" + std::to_string(data.size()) + " bytes)");
}

}  // namespace

void add_leak_cases(std::vector<Case>& out) {
  add_case(out, "leak.startup-descriptors", "use a descriptor the runtime leaked (CVE-2024-21626)",
           "list /proc/self/fd as main() started, before the suite opened anything",
           "only 0, 1 and 2 are open", [](Context& ctx) {
             std::string extra;
             for (const auto& [fd, target] : ctx.startup_fds) {
               if (fd > 2) extra += std::to_string(fd) + "->" + target + " ";
             }
             if (ctx.startup_fds.empty()) return inconclusive("no descriptor snapshot was taken");
             return extra.empty() ? pass(std::to_string(ctx.startup_fds.size()) +
                                         " descriptors at start, all stdio")
                                  : fail("extra descriptors at start: " + extra);
           });
  add_case(out, "leak.cwd-inside-root", "start in a host directory (CVE-2024-21626 WORKDIR)",
           "getcwd() and readlink /proc/self/cwd", "the cwd is a path inside the container root",
           [](Context&) {
             char buf[4096];
             if (::getcwd(buf, sizeof buf) == nullptr) return fail("getcwd: " + errno_name(errno));
             const std::string link = read_link("/proc/self/cwd");
             if (buf[0] != '/' || link.find("(unreachable)") != std::string::npos) {
               return fail("cwd outside the root: " + link);
             }
             return pass(std::string("cwd ") + buf);
           });
  add_case(out, "leak.process-descriptors",
           "use a host file, runtime socket or cgroup directory held open by any process",
           "readlink every /proc/<pid>/fd/<n>; sockets are looked up in this netns's tables",
           "no descriptor names a runtime path or a socket of another network namespace",
           [](Context&) {
             const std::set<std::string> known = known_socket_inodes();
             const int self = ::getpid();
             std::string bad;
             int seen = 0;
             for (const int pid : numeric_pids()) {
               if (pid == self) continue;  // our own fds are covered by leak.startup-descriptors
               const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
               for (const std::string& n : list_dir(dir, kMaxScannedFdsPerPid)) {
                 const std::string t = read_link(dir + "/" + n);
                 if (t.empty()) continue;
                 ++seen;
                 const bool foreign_socket = t.rfind("socket:[", 0) == 0 &&
                                             known.count(t.substr(8, t.size() - 9)) == 0;
                 if (foreign_socket || suspicious_target(t)) bad += dir + "/" + n + "->" + t + " ";
               }
             }
             return bad.empty() ? pass(std::to_string(seen) + " descriptors of other processes, none leaked")
                                : fail("leaked: " + bad);
           });
  add_case(out, "leak.no-runtime-process", "overwrite the runtime through /proc/<pid>/exe (CVE-2019-5736)",
           "read /proc/<pid>/comm and exe of every visible process",
           "no runc, containerd, containerd-shim or dockerd process is visible", [](Context&) {
             std::string bad;
             for (const int pid : numeric_pids()) {
               const std::string base = "/proc/" + std::to_string(pid);
               std::string comm = read_bounded(base + "/comm", 256).data;
               if (!comm.empty() && comm.back() == '\n') comm.pop_back();
               const std::string exe = read_link(base + "/exe");
               for (const char* w : {"runc", "containerd", "dockerd", "crun", "conmon"}) {
                 if (comm.find(w) != std::string::npos || exe.find(w) != std::string::npos) {
                   bad += base + " (" + comm + " " + exe + ") ";
                   break;
                 }
               }
             }
             return bad.empty() ? pass("no runtime process visible") : fail(bad);
           });
  add_case(out, "leak.proc-exe-not-writable", "rewrite another process's binary (CVE-2019-5736)",
           "open(/proc/<pid>/exe, O_WRONLY) for every other visible process",
           "every open fails (EROFS, ETXTBSY, EACCES)", [](Context&) {
             const int self = ::getpid();
             int tried = 0;
             for (const int pid : numeric_pids()) {
               if (pid == self) continue;
               const std::string path = "/proc/" + std::to_string(pid) + "/exe";
               const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
               if (fd >= 0) {
                 ::close(fd);
                 return fail("opened " + path + " for writing (" + read_link(path) + ")");
               }
               ++tried;
             }
             return pass("open for write refused on " + std::to_string(tried) + " /proc/<pid>/exe");
           });
  add_case(out, "signal.gatekeeper-not-visible", "signal, trace or read the gatekeeper",
           "look for a process whose comm is gatekeeper in /proc",
           "none visible: the space has its own pid namespace", [](Context&) {
             for (const int pid : numeric_pids()) {
               std::string comm = read_bounded("/proc/" + std::to_string(pid) + "/comm", 256).data;
               if (!comm.empty() && comm.back() == '\n') comm.pop_back();
               if (comm == "gatekeeper") return fail("pid " + std::to_string(pid) + " is the gatekeeper");
             }
             return pass(std::to_string(numeric_pids().size()) + " processes visible, no gatekeeper");
           });
  add_case(out, "signal.no-kernel-threads", "see and signal host processes (shared pid namespace)",
           "read /proc/2/comm (kthreadd on a host pid namespace)",
           "pid 2 is not kthreadd; pid 1 is not systemd or init", [](Context&) {
             std::string one = read_bounded("/proc/1/comm", 256).data;
             std::string two = read_bounded("/proc/2/comm", 256).data;
             if (!one.empty() && one.back() == '\n') one.pop_back();
             if (!two.empty() && two.back() == '\n') two.pop_back();
             if (two == "kthreadd" || one == "systemd" || one == "init" || one == "launchd") {
               return fail("host pid namespace: pid1=" + one + " pid2=" + two);
             }
             return pass("pid1=" + one + (two.empty() ? "" : " pid2=" + two));
           });
  // No case signals pids 1..65535: a pid outside the space's pid namespace cannot be named from
  // inside it, so such a sweep could never fail. signal.no-kernel-threads and
  // signal.gatekeeper-not-visible prove the namespace is the space's own.

  add_case(out, "secret.key-not-in-env", "read the grant's key from the environment",
           "sha256 of every token of environ", "no token hashes to --secret-sha256",
           [](Context& ctx) { return secret_scan(ctx, "this process's environment", env_block()); });
  add_case(out, "secret.key-not-in-proc-environ", "read the key from another process's environment",
           "sha256 of every token of every /proc/<pid>/environ", "no token hashes to --secret-sha256",
           [](Context& ctx) {
             std::string all;
             for (const int pid : numeric_pids()) {
               all += read_bounded("/proc/" + std::to_string(pid) + "/environ").data;
               all.push_back('\n');
             }
             return secret_scan(ctx, "/proc/*/environ", all);
           });
  add_case(out, "secret.key-not-in-proc-cmdline", "read the key from a process's arguments",
           "sha256 of every token of every /proc/<pid>/cmdline", "no token hashes to --secret-sha256",
           [](Context& ctx) {
             std::string all;
             for (const int pid : numeric_pids()) {
               all += read_bounded("/proc/" + std::to_string(pid) + "/cmdline").data;
               all.push_back('\n');
             }
             return secret_scan(ctx, "/proc/*/cmdline", all);
           });
  add_case(out, "secret.key-not-in-files", "find the key in a file the host copied in",
           "sha256 of every token of every file under /tmp, $HOME and /spaces/<id> (bounded)",
           "no file holds it; a bait the runner planted (--control-sha256) is found", [](Context& ctx) {
             if (ctx.opts.secret_sha256.empty()) return inconclusive("the runner passed no --secret-sha256");
             std::string hits, control_hits;
             std::size_t files = 0;
             std::uint64_t bytes = 0;
             for (const std::string& root : writable_roots(ctx.opts)) {
               scan_tree(root, ctx.opts.secret_sha256, 0, files, bytes, hits);
             }
             if (!hits.empty()) return fail("the key is in: " + hits);
             if (!ctx.opts.control_sha256.empty()) {
               std::size_t f2 = 0;
               std::uint64_t b2 = 0;
               for (const std::string& root : writable_roots(ctx.opts)) {
                 scan_tree(root, ctx.opts.control_sha256, 0, f2, b2, control_hits);
               }
               if (control_hits.empty()) return inconclusive("the planted bait was not found: the search is blind");
             }
             return pass("key not in " + std::to_string(files) + " files (" + std::to_string(bytes) +
                         " bytes)" + (control_hits.empty() ? "" : "; bait found in " + control_hits));
           });
  add_case(out, "secret.env-no-credential-names", "use a credential the host passed by environment",
           "match every environment variable name against credential patterns",
           "no name looks like a token, key, secret or password", [](Context&) {
             std::string bad;
             for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
               const std::string entry = *e;
               const std::string name = entry.substr(0, entry.find('='));
               const std::string upper = to_lower(name);
               for (const char* w : {"token", "secret", "password", "passwd", "api_key", "apikey",
                                     "credential", "access_key", "private_key", "aws_", "gh_",
                                     "github_", "anthropic", "openai", "ui_password"}) {
                 if (upper.find(w) != std::string::npos) {
                   bad += name + " ";
                   break;
                 }
               }
             }
             return bad.empty() ? pass("no credential-like variable names") : fail("variables: " + bad);
           });
  struct Path {
    const char* id;
    const char* path;
    const char* threat;
  };
  static constexpr Path kAbsent[] = {
      {"secret.no-kube-serviceaccount", "/var/run/secrets/kubernetes.io/serviceaccount/token",
       "use an orchestrator service-account token"},
      {"secret.no-runtime-secrets-dir", "/run/secrets", "read secrets the runtime mounted"},
      {"secret.no-docker-client-config", "$HOME/.docker/config.json", "reuse registry credentials"},
      {"secret.no-kube-config", "$HOME/.kube/config", "reuse cluster credentials"},
      {"secret.no-cloud-credentials", "$HOME/.aws/credentials", "reuse cloud credentials"},
      {"secret.no-git-credentials", "$HOME/.git-credentials", "push with the user's git login"},
      {"secret.no-ssh-keys", "$HOME/.ssh/id_ed25519", "log in elsewhere with the user's ssh key"},
  };
  for (const Path& p : kAbsent) {
    add_case(out, p.id, p.threat, std::string("stat ") + p.path,
             "absent: nothing of the user's host login reaches the space", [p](Context&) {
               std::string path = p.path;
               if (path.rfind("$HOME", 0) == 0) {
                 const char* home = ::getenv("HOME");
                 if (home == nullptr) return not_applicable("HOME is not set");
                 path = home + path.substr(5);
               }
               struct stat st {};
               if (::lstat(path.c_str(), &st) == 0) return fail(path + " exists");
               // Only ENOENT/ENOTDIR say absent; EACCES on a directory on the way hides whether it is.
               if (errno != ENOENT && errno != ENOTDIR) return inconclusive(path + ": " + errno_name(errno) + " (cannot tell)");
               return pass(path + ": " + errno_name(errno));
             });
  }
  add_case(out, "secret.no-ssh-agent", "sign with the user's ssh agent", "read SSH_AUTH_SOCK",
           "unset: no agent socket was forwarded", [](Context&) {
             const char* sock = ::getenv("SSH_AUTH_SOCK");
             return sock == nullptr ? pass("SSH_AUTH_SOCK unset") : fail(std::string("SSH_AUTH_SOCK=") + sock);
           });
}

}  // namespace escape
