#include "controller/loop_disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "controller/process.h"
#include "policy/number.h"

namespace controller {
namespace {

inline constexpr unsigned kLoopMajor = 7;  // Documentation/admin-guide/devices.txt
inline constexpr std::chrono::milliseconds kMkfsTimeout{120000};

std::string errno_text(int e) { return std::strerror(e); }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<std::string> read_sys(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return trim(text);
}

// e2fsprogs lives in /sbin, which a user's PATH may lack.
std::string sbin_tool(const char* name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/"}) {
    const std::string path = std::string(dir) + name;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return name;
}

// Opens /dev/loop<index>, making the node when the kernel has the device but /dev lacks it
// (a /dev without devtmpfs).
int open_loop(int index) {
  const std::string dev = loop_device(index);
  int fd = ::open(dev.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    if (::mknod(dev.c_str(), S_IFBLK | 0600, makedev(kLoopMajor, static_cast<unsigned>(index))) ==
            0 ||
        errno == EEXIST) {
      fd = ::open(dev.c_str(), O_RDWR | O_CLOEXEC);
    }
  }
  return fd;
}

// Binds the open image to the open loop device; LOOP_CONFIGURE (Linux 5.8) is atomic, the
// two-step fallback serves older kernels.
int configure_loop(int loop_fd, int image_fd, const std::string& path) {
  loop_config config{};
  config.fd = static_cast<__u32>(image_fd);
  std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), path.c_str(), LO_NAME_SIZE - 1);
  if (::ioctl(loop_fd, LOOP_CONFIGURE, &config) == 0) return 0;
  if (errno != EINVAL && errno != ENOTTY) return -1;
  if (::ioctl(loop_fd, LOOP_SET_FD, image_fd) != 0) return -1;
  if (::ioctl(loop_fd, LOOP_SET_STATUS64, &config.info) != 0) {
    const int saved = errno;
    (void)::ioctl(loop_fd, LOOP_CLR_FD, 0);
    errno = saved;
    return -1;
  }
  return 0;
}

// Every loop device whose backing file is `path`.
std::vector<int> loops_holding(const std::string& path) {
  std::vector<int> out;
  DIR* dir = ::opendir("/sys/block");
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    const std::optional<int> index = loop_index_of_device(std::string("/dev/") + e->d_name);
    if (!index) continue;
    const std::optional<LoopState> s = read_loop_state(*index);
    if (s && s->attached && (s->backing_file == path || s->backing_file == path + " (deleted)")) out.push_back(*index);
  }
  ::closedir(dir);
  return out;
}

}  // namespace

std::string loop_device(int index) { return "/dev/loop" + std::to_string(index); }

std::optional<int> loop_index_of_device(std::string_view device) {
  constexpr std::string_view prefix = "/dev/loop";
  if (device.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = device.substr(prefix.size());
  if (digits.empty() || digits.size() > 7 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<LoopState> read_loop_state(int index) {
  const std::string base = "/sys/block/loop" + std::to_string(index);
  LoopState s;
  struct stat st {};
  if (::stat("/sys/block", &st) != 0) return std::nullopt;  // no sysfs here: nothing can be seen
  if (::stat(base.c_str(), &st) != 0) return s;
  s.exists = true;
  if (const std::optional<std::string> sectors = read_sys(base + "/size")) {
    // 512-byte sectors; an unreadable count is an unknown size (0), never a guess.
    const std::optional<std::int64_t> n = policy::parse_number<std::int64_t>(*sectors);
    s.bytes = n && *n >= 0 && *n <= (INT64_MAX / 512) ? *n * 512 : 0;
  }
  if (const std::optional<std::string> file = read_sys(base + "/loop/backing_file")) {
    s.attached = !file->empty();
    s.backing_file = *file;
  }
  return s;
}

std::string disk_image_path(std::string_view dir, std::string_view volume_name) {
  return std::string(dir) + "/" + std::string(volume_name) + ".img";
}

int preferred_loop_index(std::string_view volume_name) {
  std::uint32_t h = 2166136261u;  // FNV-1a: spreads names, nothing more is asked of it
  for (unsigned char c : volume_name) h = (h ^ c) * 16777619u;
  return kLoopIndexFirst + static_cast<int>(h % kLoopIndexCount);
}

Result<void> make_disk_image(const std::string& path, std::int64_t bytes, std::string_view owner) {
  if (bytes < kMinDiskBytes || bytes > kMaxDiskBytes) {
    return fail(Code::kInvalidArgument, "disk image " + path + ": size " + std::to_string(bytes) + " is outside 64 MiB to 16 TiB");
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(Code::kCommandFailed, "create disk image " + path + ": " + errno_text(errno));
  const bool sized = ::ftruncate(fd, bytes) == 0;
  const int saved = errno;
  ::close(fd);
  if (!sized) {
    ::unlink(path.c_str());
    return fail(Code::kCommandFailed, "size disk image " + path + ": " + errno_text(saved));
  }
  ProcessRequest mkfs;
  // -m 0: no blocks reserved for root (the space never is root); lazy init keeps a 10 GiB image
  // sparse; nodiscard: nothing to discard in a fresh sparse file.
  mkfs.argv = {sbin_tool("mkfs.ext4"), "-q", "-F", "-m", "0", "-E",
               "root_owner=" + std::string(owner) + ",lazy_itable_init=1,lazy_journal_init=1,nodiscard", "--", path};
  mkfs.timeout = kMkfsTimeout;
  if (const ProcessOutcome o = run_process(mkfs); !o.succeeded()) {
    ::unlink(path.c_str());
    return fail(Code::kCommandFailed, "mkfs.ext4 " + path + ": " + o.describe());
  }
  // An empty root: Docker copies the image's directory (owner, mode, files) into an empty volume
  // only, and lost+found (root's, 0700) would stay in the space's workspace for nothing.
  ProcessRequest rmdir;
  rmdir.argv = {sbin_tool("debugfs"), "-w", "-R", "rmdir lost+found", "--", path};
  rmdir.timeout = kMkfsTimeout;
  if (const ProcessOutcome o = run_process(rmdir); !o.succeeded()) {
    ::unlink(path.c_str());
    return fail(Code::kCommandFailed, "debugfs rmdir lost+found " + path + ": " + o.describe());
  }
  return {};
}

Result<int> attach_disk_image(const std::string& path, int preferred) {
  const int image = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (image < 0) return fail(Code::kCommandFailed, "open disk image " + path + ": " + errno_text(errno));
  const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) {
    const int saved = errno;
    ::close(image);
    return fail(Code::kPlaceUnusable, "open /dev/loop-control (bounded disk for " + path + "): " + errno_text(saved) +
                                          "; loop devices need root on the engine's host");
  }
  std::string last = "no free number";
  int found = -1;
  // A bounded walk through the reserved range from the preferred number.
  for (int step = 0; step < 256 && found < 0; ++step) {
    const int index = kLoopIndexFirst + (preferred - kLoopIndexFirst + step) % kLoopIndexCount;
    if (::ioctl(control, LOOP_CTL_ADD, index) < 0 && errno != EEXIST) {
      last = "LOOP_CTL_ADD " + std::to_string(index) + ": " + errno_text(errno);
      continue;
    }
    const std::optional<LoopState> s = read_loop_state(index);
    if (s && s->attached) continue;  // someone else's
    const int loop = open_loop(index);
    if (loop < 0) {
      last = "open " + loop_device(index) + ": " + errno_text(errno);
      continue;
    }
    if (configure_loop(loop, image, path) == 0) {
      found = index;
    } else {
      last = "LOOP_CONFIGURE " + loop_device(index) + ": " + errno_text(errno);
    }
    ::close(loop);
  }
  ::close(control);
  ::close(image);
  if (found < 0) return fail(Code::kCommandFailed, "attach disk image " + path + " to a loop device: " + last);
  return found;
}

Result<void> reattach_disk_image(const std::string& path, int index) {
  if (index < kLoopIndexFirst || index >= kLoopIndexFirst + kLoopIndexCount) {
    return fail(Code::kVerifyFailed, "reattach " + path + ": " + loop_device(index) + " is outside the reserved range");
  }
  const std::optional<LoopState> s = read_loop_state(index);
  if (!s) return fail(Code::kPlaceUnusable, "reattach " + path + ": /sys/block is not visible here");
  if (s->attached) {
    if (s->backing_file == path) return {};
    return fail(Code::kVerifyFailed, "reattach " + path + ": " + loop_device(index) + " holds " + s->backing_file);
  }
  const int image = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (image < 0) return fail(Code::kCommandFailed, "open disk image " + path + ": " + errno_text(errno));
  if (!s->exists) {
    const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    const bool added = control >= 0 && (::ioctl(control, LOOP_CTL_ADD, index) >= 0 || errno == EEXIST);
    const int saved = errno;
    if (control >= 0) ::close(control);
    if (!added) {
      ::close(image);
      return fail(Code::kPlaceUnusable, "add " + loop_device(index) + " for " + path + ": " + errno_text(saved));
    }
  }
  const int loop = open_loop(index);
  const bool ok = loop >= 0 && configure_loop(loop, image, path) == 0;
  const int saved = errno;
  if (loop >= 0) ::close(loop);
  ::close(image);
  if (!ok) return fail(Code::kCommandFailed, "attach " + path + " to " + loop_device(index) + ": " + errno_text(saved));
  return {};
}

Result<void> release_disk_image(const std::string& path) {
  std::string failures;
  for (int index : loops_holding(path)) {
    const int loop = open_loop(index);
    // A device still mounted (its volume not yet removed) only gets autoclear here: it detaches
    // when the last mount goes, and the remove below then fails with EBUSY.
    if (loop < 0 || ::ioctl(loop, LOOP_CLR_FD, 0) != 0) failures += " detach " + loop_device(index) + ": " + errno_text(errno) + ";";
    if (loop >= 0) ::close(loop);
    const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (control >= 0) {
      if (::ioctl(control, LOOP_CTL_REMOVE, index) != 0 && errno != ENODEV) {
        failures += " remove " + loop_device(index) + ": " + errno_text(errno) + ";";
      }
      ::close(control);
    }
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) failures += " unlink " + path + ": " + errno_text(errno) + ";";
  if (!failures.empty()) return fail(Code::kCommandFailed, "release disk image " + path + ":" + failures);
  return {};
}

}  // namespace controller
