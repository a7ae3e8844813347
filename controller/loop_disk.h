// Bounded disk for a space's writable volumes: each volume is an ext4 filesystem in a sparse image
// file of fixed size, attached to a loop device, and handed to Docker as a `local` volume with
// type=ext4,device=/dev/loopN,o=nosuid,nodev. The kernel enforces the size: a full volume answers
// ENOSPC inside the space and nothing else on the host disk grows (docs/decisions.md#bounded-disk
// says why this mechanism and what it costs).
//
// One file per kernel mechanism: this one holds the image files and the loop devices. Loop numbers
// are picked from a high, reserved range (kLoopIndexFirst..) so the numbers `losetup -f` hands out
// (the lowest free) never land on a space's device, and after a reboot the same number is added
// again for the same image: the volume's options name a device that must still hold that image,
// which verify proves from /sys before anything starts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller {

inline constexpr std::int64_t kDefaultDiskBytes = 10ll << 30;  // per volume
inline constexpr std::int64_t kMinDiskBytes = 64ll << 20;      // ext4 with a journal needs room
inline constexpr std::int64_t kMaxDiskBytes = 16ll << 40;      // ext4's limit with 4 KiB blocks
// Where the images live on the place's host: root's, outside any user's home.
inline constexpr std::string_view kDefaultDiskDir = "/var/lib/spacectl/disks";
inline constexpr std::string_view kDiskFsType = "ext4";
// Mount options of every space volume (CIS Docker 5.x: no device files, no setuid on writable
// mounts). exec stays: agents build and run programs in their workspace.
inline constexpr std::string_view kVolumeMountOptions = "nosuid,nodev";
inline constexpr int kLoopIndexFirst = 40000;
inline constexpr int kLoopIndexCount = 20000;

// What the kernel says about /dev/loopN (from /sys/block/loopN).
struct LoopState {
  bool exists = false;    // the device exists
  bool attached = false;  // it holds a backing file
  std::string backing_file;
  std::int64_t bytes = 0;  // the device's size
};
// nullopt: the loop devices of the engine's host cannot be seen from here (a remote engine).
using LoopProbe = std::function<std::optional<LoopState>(int index)>;
std::optional<LoopState> read_loop_state(int index);

// <dir>/<volume name>.img
std::string disk_image_path(std::string_view dir, std::string_view volume_name);
// The first loop number tried for a volume: a hash of its name into the reserved range.
int preferred_loop_index(std::string_view volume_name);
// "/dev/loop40123" -> 40123; nullopt for anything else (no other device is ever accepted).
std::optional<int> loop_index_of_device(std::string_view device);
std::string loop_device(int index);

// A fresh image: created exclusively (0600), sparse at `bytes`, ext4 whose root directory belongs
// to `owner` ("uid:gid") and holds nothing (lost+found removed, so Docker copies the image's
// directory into it like into any empty volume).
Result<void> make_disk_image(const std::string& path, std::int64_t bytes, std::string_view owner);
// Attaches the image to a new loop device in the reserved range, starting at `preferred`.
Result<int> attach_disk_image(const std::string& path, int preferred);
// After a reboot the device is gone: add /dev/loop<index> again and attach the image. A device
// that already holds this image is left alone; one that holds another file is an error.
Result<void> reattach_disk_image(const std::string& path, int index);
// Detaches every loop device holding `path`, removes those devices, then the image file.
Result<void> release_disk_image(const std::string& path);

}  // namespace controller
