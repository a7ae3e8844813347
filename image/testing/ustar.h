// Reads the tar archives the image tests inspect: our layer tars (ustar, written by
// build-image.sh) and `docker save` output (Go's archive/tar, which may add PAX records). Enough of
// the format to list entries and reach a member's bytes; nothing is extracted to disk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace image_testing {

struct TarEntry {
  char type = '0';          // ustar typeflag: '0' file, '5' directory, '2' symlink, '1' hard link
  std::string path;         // as stored: no leading '/', directories may end in '/'
  std::uint32_t mode = 0;   // permission bits including setuid/setgid/sticky
  std::uint64_t uid = 0;
  std::uint64_t gid = 0;
  std::string link;         // symlink or hard link target
  std::string_view data;    // a regular file's bytes, inside the archive buffer
};

struct TarListing {
  std::vector<TarEntry> entries;
  std::string error;        // empty when the whole archive was read
};

// The archive must stay alive as long as the entries' data views are used.
TarListing read_tar(std::string_view archive);

// One manifest line per entry, the format of image/*.manifest:
//   "<dir|file|symlink|hardlink> <mode, 4 octal digits> <uid>:<gid> /<path>[ -> <target>]"
std::string manifest_line(const TarEntry& entry);

}  // namespace image_testing
