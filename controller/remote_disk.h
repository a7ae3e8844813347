// Bounded disk on a remote engine's host (the docker-ssh place): the same mechanism as loop_disk.h
// (a sparse ext4 image per volume on a loop device of the reserved range, mounted nosuid,nodev),
// made on the engine's host through the place's own channel, because the images and the loop
// devices must live where the engine mounts them.
//
// The channel is the engine: a one-shot helper container from the pinned space image (its static
// busybox, nothing else of ours) that chroots into the host's root, bind-mounted at /host, and runs
// the host's own mkfs.ext4, debugfs and losetup (e2fsprogs and util-linux, present on any Debian or
// Ubuntu host). It has exactly the rights that takes: uid 0, CAP_SYS_ADMIN (the loop ioctls) and
// CAP_SYS_CHROOT, the loop devices (block 7:*) and /dev/loop-control (char 10:237), no network; not
// --privileged. Access to a Docker engine is root on its host already; the helper uses it for one
// fixed script whose arguments are spacectl's own names and numbers, never a space's.
//
// Reading the devices back (verify) needs no rights at all: /sys/block is visible read-only in any
// container, so an unprivileged helper prints each device's size and backing file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"
#include "controller/loop_disk.h"

namespace controller {

// One volume's image on the remote host and the loop number tried first.
struct RemoteImage {
  std::string path;
  int preferred = 0;
};

// The helper run's argv after `docker --host …`: `run --rm … <image> <busybox> …`. `privileged`:
// the rights above and the host's root at /host; otherwise none (reading /sys/block).
std::vector<std::string> remote_disk_helper_argv(const std::string& image,
                                                 const std::vector<std::string>& labels,
                                                 bool privileged);

// The scripts (run by the host's /bin/sh inside chroot /host) and their arguments.
// make: each image created exclusively (0600, in a 0700 folder), sized, ext4 owned by `owner` with
// lost+found removed, attached at the first free number of the reserved range from its preferred
// one; prints one loop number per image, in order.
std::vector<std::string> remote_make_args(const std::string& dir, std::string_view owner,
                                          std::int64_t bytes,
                                          const std::vector<RemoteImage>& images);
// reattach: after the host rebooted, each image at its recorded number again (a device holding
// this image is left alone, one holding another file is an error, a missing image is skipped:
// verify names it).
std::vector<std::string> remote_reattach_args(
    const std::vector<std::pair<std::string, int>>& images);
// release: every loop device holding each image detached, then the image removed.
std::vector<std::string> remote_release_args(const std::vector<std::string>& images);
// probe (unprivileged): one line per number, "<n>|<1 exists, 0 not>|<512-byte sectors>|<backing
// file>", then "io|1" or "io|0": whether the host weights block IO (what host_io_weight_supported
// reads on this machine, read through a container's view of the host's cgroup controllers).
std::vector<std::string> remote_probe_args(const std::vector<int>& indices);

// The make script's answer: one number of the reserved range per image, nothing else.
Result<std::vector<int>> parse_remote_make(std::string_view out, std::size_t images);
// The probe's answer for the numbers asked; a number missing from it, said twice or on a malformed
// line is absent from the map, so verify says the device cannot be seen.
struct RemoteDiskView {
  std::map<int, LoopState> loops;
  std::optional<bool> io_weight;  // nullopt: not said
};
RemoteDiskView parse_remote_probe(std::string_view out, const std::vector<int>& indices);

}  // namespace controller
