#include "controller/remote_disk.h"

#include <algorithm>
#include <optional>
#include <set>

namespace controller {
namespace {

// Each script runs under the host's own /bin/sh (chroot /host), with the host's tools; its
// arguments follow `sh` as $1….
constexpr std::string_view kPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin; export PATH\n";

constexpr std::string_view kMakeScript = R"sh(set -eu
umask 077
dir=$1 owner=$2 bytes=$3 first=$4 count=$5
shift 5
mkdir -p -- "$dir"
while [ "$#" -ge 2 ]; do
  img=$1 pref=$2
  shift 2
  (set -C; : > "$img")
  truncate -s "$bytes" -- "$img"
  mkfs.ext4 -q -F -m 0 -E "root_owner=$owner,lazy_itable_init=1,lazy_journal_init=1,nodiscard" -- "$img"
  if ! debugfs -w -R 'rmdir lost+found' -- "$img" >/dev/null 2>&1; then echo "debugfs rmdir lost+found $img failed" >&2; exit 1; fi
  step=0 found= last=
  while [ "$step" -lt 256 ]; do
    i=$((first + (pref - first + step) % count))
    if last=$(losetup -- "/dev/loop$i" "$img" 2>&1); then found=$i; break; fi
    step=$((step + 1))
  done
  if [ -z "$found" ]; then echo "attach $img to a loop device of the reserved range: $last" >&2; exit 1; fi
  echo "$found"
done
)sh";

constexpr std::string_view kReattachScript = R"sh(set -eu
while [ "$#" -ge 2 ]; do
  img=$1 i=$2
  shift 2
  b=$(cat "/sys/block/loop$i/loop/backing_file" 2>/dev/null || true)
  if [ "$b" = "$img" ]; then continue; fi
  if [ -n "$b" ]; then echo "/dev/loop$i holds $b, not $img" >&2; exit 3; fi
  if [ ! -e "$img" ]; then continue; fi
  losetup -- "/dev/loop$i" "$img"
done
)sh";

constexpr std::string_view kReleaseScript = R"sh(set -u
rc=0
for img in "$@"; do
  for dev in $(losetup -n -O NAME -j "$img" 2>/dev/null); do
    losetup -d "$dev" || rc=1
  done
  rm -f -- "$img" || rc=1
done
exit "$rc"
)sh";

// busybox sh in the helper itself (no chroot): /sys/block is the host's in every container.
constexpr std::string_view kProbeScript = R"sh(for i in "$@"; do
  d=/sys/block/loop$i
  if [ -d "$d" ]; then
    printf '%s|1|%s|%s\n' "$i" "$(cat "$d/size" 2>/dev/null)" "$(cat "$d/loop/backing_file" 2>/dev/null)"
  else
    printf '%s|0||\n' "$i"
  fi
done
if [ -d /sys/fs/cgroup/blkio ]; then
  if [ -e /sys/fs/cgroup/blkio/blkio.weight ]; then echo 'io|1'; else echo 'io|0'; fi
elif [ -r /sys/fs/cgroup/cgroup.controllers ]; then
  if grep -qw io /sys/fs/cgroup/cgroup.controllers; then echo 'io|1'; else echo 'io|0'; fi
fi
)sh";

std::vector<std::string> host_script(std::string_view script) {
  return {"chroot", "/host", "/bin/sh", "-c", std::string(kPath) + std::string(script), "sh"};
}

std::optional<std::int64_t> digits(std::string_view text, std::size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  std::int64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool in_range(std::int64_t index) {
  return index >= kLoopIndexFirst && index < kLoopIndexFirst + kLoopIndexCount;
}

std::vector<std::string_view> lines_of(std::string_view out) {
  std::vector<std::string_view> lines;
  while (!out.empty()) {
    const std::size_t end = out.find('\n');
    lines.push_back(out.substr(0, end));
    if (end == std::string_view::npos) break;
    out.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

std::vector<std::string> remote_disk_helper_argv(const std::string& image,
                                                 const std::vector<std::string>& labels,
                                                 bool privileged) {
  std::vector<std::string> a = {"run",          "--rm", "--network",      "none",
                                "--cap-drop",   "ALL",  "--security-opt", "no-new-privileges",
                                "--pids-limit", "64",   "--memory",       "256m"};
  if (privileged) {
    // The loop ioctls (LOOP_CTL_ADD, LOOP_CONFIGURE) need CAP_SYS_ADMIN; chroot /host needs
    // CAP_SYS_CHROOT; the device cgroup opens the loop devices and loop-control and nothing else.
    a.insert(a.end(), {"--user", "0:0", "--cap-add", "SYS_ADMIN", "--cap-add", "SYS_CHROOT",
                       "--device-cgroup-rule", "b 7:* rwm", "--device-cgroup-rule", "c 10:237 rwm",
                       "--mount", "type=bind,src=/,dst=/host"});
  } else {
    a.insert(a.end(), {"--user", "65534:65534", "--read-only"});
  }
  a.insert(a.end(), labels.begin(), labels.end());
  a.insert(a.end(), {"--entrypoint", "/bin/busybox", "--", image});
  return a;
}

std::vector<std::string> remote_make_args(const std::string& dir, std::string_view owner,
                                          std::int64_t bytes,
                                          const std::vector<RemoteImage>& images) {
  std::vector<std::string> a = host_script(kMakeScript);
  a.insert(a.end(), {dir, std::string(owner), std::to_string(bytes),
                     std::to_string(kLoopIndexFirst), std::to_string(kLoopIndexCount)});
  for (const RemoteImage& i : images) a.insert(a.end(), {i.path, std::to_string(i.preferred)});
  return a;
}

std::vector<std::string> remote_reattach_args(
    const std::vector<std::pair<std::string, int>>& images) {
  std::vector<std::string> a = host_script(kReattachScript);
  for (const auto& [path, index] : images) a.insert(a.end(), {path, std::to_string(index)});
  return a;
}

std::vector<std::string> remote_release_args(const std::vector<std::string>& images) {
  std::vector<std::string> a = host_script(kReleaseScript);
  a.insert(a.end(), images.begin(), images.end());
  return a;
}

std::vector<std::string> remote_probe_args(const std::vector<int>& indices) {
  std::vector<std::string> a = {"sh", "-c", std::string(kProbeScript), "sh"};
  for (const int i : indices) a.push_back(std::to_string(i));
  return a;
}

Result<std::vector<int>> parse_remote_make(std::string_view out, std::size_t images) {
  std::vector<int> numbers;
  for (const std::string_view line : lines_of(out)) {
    const std::optional<std::int64_t> n = digits(line, 7);
    if (!n || !in_range(*n) || numbers.size() == images)
      return fail(Code::kCommandFailed,
                  "bounded disk on the engine's host: the helper answered an unexpected line");
    numbers.push_back(static_cast<int>(*n));
  }
  if (numbers.size() != images)
    return fail(Code::kCommandFailed, "bounded disk on the engine's host: the helper named " +
                                          std::to_string(numbers.size()) + " loop device(s) for " +
                                          std::to_string(images) + " image(s)");
  return numbers;
}

RemoteDiskView parse_remote_probe(std::string_view out, const std::vector<int>& indices) {
  RemoteDiskView view;
  std::map<int, LoopState>& states = view.loops;
  std::set<int> twice;
  for (const std::string_view line : lines_of(out)) {
    if (line == "io|1" || line == "io|0") {
      view.io_weight = line == "io|1";
      continue;
    }
    const std::size_t a = line.find('|');
    const std::size_t b = a == std::string_view::npos ? a : line.find('|', a + 1);
    const std::size_t c = b == std::string_view::npos ? b : line.find('|', b + 1);
    if (c == std::string_view::npos) continue;
    const std::optional<std::int64_t> index = digits(line.substr(0, a), 7);
    if (!index ||
        std::find(indices.begin(), indices.end(), static_cast<int>(*index)) == indices.end())
      continue;
    const std::string_view exists = line.substr(a + 1, b - a - 1);
    const std::string_view sectors = line.substr(b + 1, c - b - 1);
    LoopState s;
    if (exists == "1") {
      const std::optional<std::int64_t> n = digits(sectors, 15);
      if (!n) continue;
      s.exists = true;
      s.bytes = *n * 512;
      s.backing_file = std::string(line.substr(c + 1));
      s.attached = !s.backing_file.empty();
    } else if (exists != "0" || !sectors.empty() || c + 1 != line.size()) {
      continue;
    }
    const int i = static_cast<int>(*index);
    if (twice.count(i) != 0 || states.count(i) != 0) {  // said twice: believe neither
      states.erase(i);
      twice.insert(i);
      continue;
    }
    states[i] = s;
  }
  return view;
}

}  // namespace controller
