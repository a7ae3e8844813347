// The filesystem: a read-only root (a write must fail with EROFS: EACCES would only prove the files
// are root's, not that the mount is read-only), writable work directories as the positive control,
// no host path among the mounts, and no runtime socket by path or abstract name (CVE-2020-15257:
// containerd-shim's abstract socket reachable from a container sharing the host network namespace).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "escape-suite/case.h"
#include "escape-suite/probe.h"

namespace escape {
namespace {

inline constexpr char kProbeName[] = "openchamber-escape-probe";

struct Mount {
  std::string root;        // path inside the source filesystem
  std::string point;       // where it is mounted
  std::string options;     // per-mount options (ro, nosuid, ...)
  std::string fstype;
  std::string source;
};

std::vector<Mount> mounts() {
  std::vector<Mount> out;
  const FileRead f = read_bounded("/proc/self/mountinfo", 256 * 1024);
  for (const std::string& line : split_lines(f.data, 2048)) {
    std::vector<std::string> fields;
    std::size_t i = 0;
    while (i < line.size() && fields.size() < 32) {
      std::size_t j = line.find(' ', i);
      if (j == std::string::npos) j = line.size();
      fields.push_back(line.substr(i, j - i));
      i = j + 1;
    }
    std::size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 6 || dash + 2 >= fields.size()) continue;
    out.push_back({fields[3], fields[4], fields[5], fields[dash + 1], fields[dash + 2]});
  }
  return out;
}

bool has_option(const std::string& options, std::string_view opt) {
  std::size_t i = 0;
  while (i <= options.size()) {
    std::size_t j = options.find(',', i);
    if (j == std::string::npos) j = options.size();
    if (std::string_view(options).substr(i, j - i) == opt) return true;
    i = j + 1;
  }
  return false;
}

Outcome mount_has(const std::string& point, std::string_view opt, bool absent_ok) {
  for (const Mount& m : mounts()) {
    if (m.point != point) continue;
    const std::string ev = point + " (" + m.fstype + ") " + m.options;
    return has_option(m.options, opt) ? pass(ev) : fail(ev + ": no " + std::string(opt));
  }
  if (absent_ok) return not_applicable(point + " is not a mount point here");
  return fail(point + " not found in /proc/self/mountinfo");
}

std::string home() {
  const char* h = ::getenv("HOME");
  return h != nullptr && h[0] == '/' ? std::string(h) : std::string();
}

Outcome write_control(const std::string& dir) {
  const std::string path = dir + "/" + kProbeName + "-" + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return fail("create " + path + ": " + errno_name(errno));
  const bool wrote = ::write(fd, "probe\n", 6) == 6;
  ::close(fd);
  const std::string back = read_bounded(path, 64).data;
  ::unlink(path.c_str());
  if (!wrote || back != "probe\n") return fail("write/read-back of " + path + " failed");
  return pass("created, wrote and read back " + path);
}

// A write attempt in a directory of the read-only root.
Outcome expect_erofs(std::string_view what, int rc, int err, const std::string& cleanup) {
  if (rc >= 0) {
    if (!cleanup.empty()) ::unlink(cleanup.c_str());
    return fail(std::string(what) + " succeeded: the root is writable");
  }
  if (err == EROFS) return pass(std::string(what) + ": EROFS");
  if (err == ENOENT) return not_applicable(std::string(what) + ": ENOENT (path absent in this image)");
  return fail(std::string(what) + ": " + errno_name(err) +
              " (refused by ownership or policy, not by a read-only mount)");
}

// Runtime API sockets by path (Docker, containerd, CRI-O, Podman, BuildKit, k3s).
constexpr const char* kRuntimeSockets[] = {
    "/var/run/docker.sock",          "/run/docker.sock",
    "/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock",
    "/run/crio/crio.sock",           "/var/run/crio/crio.sock",
    "/run/podman/podman.sock",       "/run/user/1000/podman/podman.sock",
    "/run/user/1000/docker.sock",    "/run/buildkit/buildkitd.sock",
    "/run/k3s/containerd/containerd.sock", "/var/run/cri-dockerd.sock",
    "/run/docker/containerd/containerd.sock", "/var/run/docker/metrics.sock",
};

void find_sockets(const std::string& dir, int depth, std::size_t& seen, std::string& found) {
  if (depth > 8 || seen > 50000) return;
  for (const std::string& name : list_dir(dir, 8192)) {
    const std::string path = dir == "/" ? "/" + name : dir + "/" + name;
    if (path == "/proc" || path == "/sys" || path == "/dev" || path == "/tmp" || path == home() ||
        path == "/spaces") {
      continue;  // kernel views and the space's own writable places
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    ++seen;
    if (S_ISSOCK(st.st_mode)) found += path + " ";
    if (S_ISDIR(st.st_mode)) find_sockets(path, depth + 1, seen, found);
  }
}

}  // namespace

void add_filesystem_cases(std::vector<Case>& out) {
  add_case(out, "fs.writable-tmp", "(positive control for the read-only cases)",
           "create, write, read back and delete a file in /tmp", "succeeds: the probe can write",
           [](Context&) { return write_control("/tmp"); });
  add_case(out, "fs.writable-home", "(positive control)", "write a file in $HOME",
           "succeeds", [](Context&) {
             const std::string h = home();
             return h.empty() ? fail("HOME is not set") : write_control(h);
           });
  add_case(out, "fs.writable-workspace", "(positive control)", "write a file in /spaces/<id>",
           "succeeds", [](Context& ctx) {
             if (ctx.opts.space_id.empty()) return inconclusive("the runner passed no --space-id");
             return write_control("/spaces/" + ctx.opts.space_id);
           });
  for (const char* dir : {"/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/var", "/opt", "/root",
                          "/usr/local/bin", "/home"}) {
    const std::string d = dir;
    // "/" is the root itself; /root (root's home) gets its own id.
    const std::string id = d == "/" ? "fs.readonly-root" : d == "/root" ? "fs.readonly-root-home" : "fs.readonly" + [&] {
      std::string s = d;
      for (char& c : s) c = c == '/' ? '-' : c;
      return s;
    }();
    add_case(out, id, "plant a file the next process or the host runs",
             "open(" + d + "/" + kProbeName + ", O_CREAT|O_EXCL)", "EROFS (the mount is read-only)",
             [d](Context&) {
               const std::string path = (d == "/" ? "" : d) + "/" + kProbeName;
               const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
               const int err = errno;
               if (fd >= 0) ::close(fd);
               return expect_erofs("create " + path, fd, err, fd >= 0 ? path : "");
             });
  }
  add_case(out, "fs.readonly-chmod", "make a system file writable", "chmod(/etc/passwd, 0666)",
           "EROFS", [](Context&) {
             const int rc = ::chmod("/etc/passwd", 0666);
             return expect_erofs("chmod /etc/passwd", rc, errno, "");
           });
  add_case(out, "fs.readonly-truncate", "overwrite a system file", "open(/etc/passwd, O_WRONLY|O_TRUNC)",
           "EROFS", [](Context&) {
             const int fd = ::open("/etc/passwd", O_WRONLY | O_TRUNC | O_CLOEXEC);
             const int err = errno;
             if (fd >= 0) ::close(fd);
             return expect_erofs("truncate /etc/passwd", fd, err, "");
           });
  add_case(out, "fs.readonly-symlink", "redirect a system path", "symlink(/tmp, /etc/" + std::string(kProbeName) + ")",
           "EROFS", [](Context&) {
             const std::string path = std::string("/etc/") + kProbeName;
             const int rc = ::symlink("/tmp", path.c_str());
             return expect_erofs("symlink " + path, rc, errno, rc == 0 ? path : "");
           });
  add_case(out, "fs.readonly-rename-binary", "replace a binary (busybox)",
           "rename(/bin/busybox, /bin/busybox.escape)", "EROFS", [](Context&) {
             const int rc = ::rename("/bin/busybox", "/bin/busybox.escape");
             const int err = errno;
             if (rc == 0) ::rename("/bin/busybox.escape", "/bin/busybox");
             return expect_erofs("rename /bin/busybox", rc, err, "");
           });
  add_case(out, "fs.root-mount-ro", "write anywhere in the image", "read / in /proc/self/mountinfo",
           "the root mount has the ro option (--read-only)",
           [](Context&) { return mount_has("/", "ro", false); });
  add_case(out, "fs.tmp-nosuid", "run a setuid file dropped in /tmp", "read /tmp in mountinfo",
           "nosuid", [](Context&) { return mount_has("/tmp", "nosuid", false); });
  add_case(out, "fs.tmp-nodev", "create a usable device node in /tmp", "read /tmp in mountinfo",
           "nodev", [](Context&) { return mount_has("/tmp", "nodev", false); });
  // The writable volumes: a setuid file or a device node left there by one process of the space
  // must not work for another, nor survive into the next start as an escalation.
  for (const char* opt : {"nosuid", "nodev"}) {
    add_case(out, std::string("fs.home-") + opt, std::string("use a ") + (opt[2] == 's' ? "setuid file" : "device node") + " kept in $HOME",
             "read $HOME in mountinfo", opt, [opt](Context&) {
               if (home().empty()) return inconclusive("HOME is not an absolute path");
               return mount_has(home(), opt, false);
             });
    add_case(out, std::string("fs.workspace-") + opt,
             std::string("use a ") + (opt[2] == 's' ? "setuid file" : "device node") + " kept in /spaces/<id>",
             "read /spaces/<id> in mountinfo", opt, [opt](Context& ctx) {
               if (ctx.opts.space_id.empty()) return inconclusive("the runner passed no --space-id");
               return mount_has("/spaces/" + ctx.opts.space_id, opt, false);
             });
  }
  add_case(out, "fs.proc-sys-ro", "write kernel settings through /proc/sys",
           "read /proc/sys in mountinfo", "ro (the runtime's read-only path)",
           [](Context&) { return mount_has("/proc/sys", "ro", false); });
  add_case(out, "fs.sysfs-ro", "write /sys", "read /sys in mountinfo", "ro",
           [](Context&) { return mount_has("/sys", "ro", false); });
  add_case(out, "fs.cgroupfs-ro", "write cgroup files (release_agent, limits)",
           "read every cgroup/cgroup2 mount in mountinfo (v1: one per controller under a tmpfs)",
           "every cgroup mount is ro", [](Context&) {
             std::string bad;
             int seen = 0;
             for (const Mount& m : mounts()) {
               if (m.fstype != "cgroup" && m.fstype != "cgroup2") continue;
               ++seen;
               if (!has_option(m.options, "ro")) bad += m.point + " ";
             }
             if (!bad.empty()) return fail("writable cgroup mounts: " + bad);
             return seen > 0 ? pass(std::to_string(seen) + " cgroup mounts, all ro")
                             : fail("no cgroup mount found in /proc/self/mountinfo");
           });
  add_case(
      out, "fs.mountpoints-allowlisted", "reach a host directory mounted into the space",
      "compare every mount point with the expected set",
      "only /, /proc*, /dev*, /sys*, /tmp, $HOME, /spaces/<id>, /etc/{hosts,hostname,resolv.conf} "
      "and "
      "the runtime's init when mounted ro (bind-mounted by --init, which the space needs to reap "
      "zombies; read-only it cannot be replaced to run as pid 1 again): /sbin/docker-init on "
      "Docker, "
      "/run/podman-init on Podman (--engine podman), which also mounts /run/.containerenv ro (the "
      "file that tells a program it runs in a container, empty for a rootful unprivileged one)",
      [](Context& ctx) {
        std::string bad;
        const std::string h = home();
        const bool podman = ctx.opts.engine == Engine::kPodman;
        const char* init = podman ? "/run/podman-init" : "/sbin/docker-init";
        for (const Mount& m : mounts()) {
          const std::string& p = m.point;
          const bool ok = p == "/" || p == "/tmp" || (!h.empty() && p == h) ||
                          (p == init && has_option(m.options, "ro")) ||
                          (podman && p == "/run/.containerenv" && has_option(m.options, "ro")) ||
                          (!ctx.opts.space_id.empty() && p == "/spaces/" + ctx.opts.space_id) ||
                          p == "/etc/hosts" || p == "/etc/hostname" || p == "/etc/resolv.conf" ||
                          p.rfind("/proc", 0) == 0 || p.rfind("/dev", 0) == 0 ||
                          p.rfind("/sys", 0) == 0;
          if (!ok) bad += p + "(" + m.fstype + ") ";
        }
        bool init_ro = false;
        for (const Mount& m : mounts()) {
          init_ro = init_ro || (m.point == init && has_option(m.options, "ro"));
        }
        return bad.empty()
                   ? pass(std::string("every mount point is expected") +
                          (init_ro
                               ? " (" + std::string(init) + " is the runtime's init, mounted ro)"
                               : ""))
                   : fail("unexpected mounts: " + bad);
      });
  add_case(out, "fs.no-host-paths-in-mounts", "read the user's files through a bind mount",
           "inspect root and source of every mountinfo entry",
           "no /Users, /home/<user>, /host, /mnt, /root or runtime socket behind any mount",
           [](Context&) {
             std::string bad;
             for (const Mount& m : mounts()) {
               for (const std::string* field : {&m.root, &m.source}) {
                 // Docker's own per-container files (/var/lib/docker/containers/<id>/hosts,
                 // volumes under /var/lib/docker/volumes) are expected roots.
                 for (const char* w : {"/Users/", "/home/", "/host/", "/mnt/", "/root/", "docker.sock",
                                       "containerd.sock", "/run/user/"}) {
                   if (field->find(w) != std::string::npos) {
                     bad += m.point + "<-" + *field + " ";
                     break;
                   }
                 }
               }
             }
             return bad.empty() ? pass("no host path behind any mount") : fail(bad);
           });
  for (const char* path : kRuntimeSockets) {
    std::string id = "fs.no-runtime-socket";
    for (const char* p = path; *p != '\0'; ++p) id += (*p == '/' || *p == '.') ? '-' : *p;
    add_case(out, id, "drive the container runtime (create a privileged container)",
             std::string("stat ") + path + " (control: stat /proc/self/status works)",
             "absent", [path = std::string(path)](Context&) {
               struct stat st {};
               if (::stat("/proc/self/status", &st) != 0) return inconclusive("stat control failed");
               if (::lstat(path.c_str(), &st) == 0) return fail(path + " exists");
               // Only ENOENT/ENOTDIR say absent; EACCES on a directory on the way hides whether it is.
               if (errno != ENOENT && errno != ENOTDIR) return inconclusive(path + ": " + errno_name(errno) + " (cannot tell)");
               return pass(path + ": " + errno_name(errno));
             });
  }
  add_case(out, "fs.no-socket-files", "find a runtime socket at an unusual path",
           "walk the read-only root (not /proc, /sys, /dev, /tmp, $HOME, /spaces; bounded)",
           "no UNIX socket file anywhere in it", [](Context&) {
             std::size_t seen = 0;
             std::string found;
             find_sockets("/", 0, seen, found);
             return found.empty() ? pass("no socket among " + std::to_string(seen) + " entries")
                                  : fail("sockets: " + found);
           });
  add_case(out, "fs.no-runtime-abstract-socket", "reach containerd-shim by abstract name (CVE-2020-15257)",
           "read /proc/net/unix; connect to every abstract name that looks like a runtime",
           "no @/containerd-shim, docker or runc abstract socket listed or connectable", [](Context&) {
             const FileRead f = read_bounded("/proc/net/unix", 4 << 20);
             if (!f.ok) return inconclusive("read /proc/net/unix: " + errno_name(f.err));
             std::string bad;
             int abstract = 0;
             for (const std::string& line : split_lines(f.data)) {
               const std::size_t at = line.find(" @");
               if (at == std::string::npos) continue;
               ++abstract;
               const std::string name = line.substr(at + 2);
               if (name.find("containerd") == std::string::npos && name.find("docker") == std::string::npos &&
                   name.find("runc") == std::string::npos && name.find("shim") == std::string::npos) {
                 continue;
               }
               sockaddr_un sa{};
               sa.sun_family = AF_UNIX;
               const std::size_t n = std::min(name.size(), sizeof sa.sun_path - 1);
               std::memcpy(sa.sun_path + 1, name.data(), n);
               const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
               const int rc = fd < 0 ? -1 : ::connect(fd, reinterpret_cast<sockaddr*>(&sa),
                                                      static_cast<socklen_t>(sizeof(sa_family_t) + 1 + n));
               if (fd >= 0) ::close(fd);
               bad += "@" + name + (rc == 0 ? " (connected) " : " (listed) ");
             }
             return bad.empty() ? pass(std::to_string(abstract) + " abstract sockets, none of a runtime")
                                : fail(bad);
           });
}

}  // namespace escape
