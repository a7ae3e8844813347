#include "image/testing/ustar.h"

#include <cstdio>
#include <optional>

#include "policy/number.h"

namespace image_testing {
namespace {

constexpr std::size_t kBlock = 512;

// Header field offsets and sizes (POSIX.1-1988 ustar).
struct Field {
  std::size_t offset;
  std::size_t size;
};
constexpr Field kName{0, 100}, kMode{100, 8}, kUid{108, 8}, kGid{116, 8}, kSize{124, 12},
    kChecksum{148, 8}, kTypeflag{156, 1}, kLinkname{157, 100}, kMagic{257, 6}, kPrefix{345, 155};

std::string_view field(std::string_view header, Field f) {
  std::string_view text = header.substr(f.offset, f.size);
  const std::size_t nul = text.find('\0');
  return nul == std::string_view::npos ? text : text.substr(0, nul);
}

bool parse_octal(std::string_view text, std::uint64_t& value) {
  while (!text.empty() && (text.front() == ' ')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) {
    value = 0;
    return true;
  }
  const std::optional<std::uint64_t> n = policy::parse_number<std::uint64_t>(text, 8);
  if (!n) return false;
  value = *n;
  return true;
}

bool checksum_matches(std::string_view header) {
  std::uint64_t stored = 0;
  if (!parse_octal(field(header, kChecksum), stored)) return false;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool in_checksum = i >= kChecksum.offset && i < kChecksum.offset + kChecksum.size;
    sum += in_checksum ? ' ' : static_cast<unsigned char>(header[i]);
  }
  return sum == stored;
}

// PAX records: "<length> <key>=<value>\n" repeated.
void apply_pax(std::string_view records, std::string& path, std::string& link) {
  while (!records.empty()) {
    const std::size_t space = records.find(' ');
    if (space == std::string_view::npos) return;
    const std::optional<std::size_t> parsed =
        policy::parse_number<std::size_t>(records.substr(0, space));
    if (!parsed || *parsed <= space + 1 || *parsed > records.size()) return;
    const std::size_t length = *parsed;
    const std::string_view record = records.substr(space + 1, length - space - 2);
    const std::size_t eq = record.find('=');
    if (eq != std::string_view::npos) {
      if (record.substr(0, eq) == "path") path = record.substr(eq + 1);
      if (record.substr(0, eq) == "linkpath") link = record.substr(eq + 1);
    }
    records.remove_prefix(length);
  }
}

}  // namespace

TarListing read_tar(std::string_view archive) {
  TarListing listing;
  std::string pax_path, pax_link;
  std::size_t at = 0;
  while (true) {
    if (archive.size() - at < kBlock) {
      listing.error = "tar: archive ends without an end-of-archive block at offset " +
                      std::to_string(at);
      return listing;
    }
    const std::string_view header = archive.substr(at, kBlock);
    if (header.find_first_not_of('\0') == std::string_view::npos) return listing;
    if (!checksum_matches(header)) {
      listing.error = "tar: bad header checksum at offset " + std::to_string(at);
      return listing;
    }
    if (!field(header, kMagic).starts_with("ustar")) {
      listing.error = "tar: not a ustar header at offset " + std::to_string(at);
      return listing;
    }
    std::uint64_t size = 0, mode = 0, uid = 0, gid = 0;
    if (!parse_octal(field(header, kSize), size) || !parse_octal(field(header, kMode), mode) ||
        !parse_octal(field(header, kUid), uid) || !parse_octal(field(header, kGid), gid)) {
      listing.error = "tar: bad numeric field at offset " + std::to_string(at);
      return listing;
    }
    const std::size_t data_at = at + kBlock;
    if (size > archive.size() - data_at) {
      listing.error = "tar: member at offset " + std::to_string(at) + " runs past the archive";
      return listing;
    }
    const std::string_view data = archive.substr(data_at, size);
    at = data_at + (size + kBlock - 1) / kBlock * kBlock;
    const char type = header[kTypeflag.offset] == '\0' ? '0' : header[kTypeflag.offset];
    if (type == 'x') {
      apply_pax(data, pax_path, pax_link);
      continue;
    }
    if (type == 'g') continue;  // global PAX header: no per-entry facts we use
    TarEntry entry;
    entry.type = type;
    const std::string_view prefix = field(header, kPrefix);
    entry.path = prefix.empty() ? std::string(field(header, kName))
                                : std::string(prefix) + "/" + std::string(field(header, kName));
    entry.link = field(header, kLinkname);
    if (!pax_path.empty()) entry.path = pax_path;
    if (!pax_link.empty()) entry.link = pax_link;
    pax_path.clear();
    pax_link.clear();
    entry.mode = static_cast<std::uint32_t>(mode & 07777);
    entry.uid = uid;
    entry.gid = gid;
    if (type == '0' || type == '7') entry.data = data;
    listing.entries.push_back(std::move(entry));
  }
}

std::string manifest_line(const TarEntry& entry) {
  std::string kind;
  switch (entry.type) {
    case '0': case '7': kind = "file"; break;
    case '5': kind = "dir"; break;
    case '2': kind = "symlink"; break;
    case '1': kind = "hardlink"; break;
    default: kind = std::string("type-") + entry.type; break;
  }
  std::string path = entry.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.starts_with("./")) path.erase(0, 1);
  if (!path.starts_with("/")) path = std::string("/") + path;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(entry.mode));
  std::string line = kind + " " + mode + " " + std::to_string(entry.uid) + ":" +
                     std::to_string(entry.gid) + " " + path;
  if (entry.type == '2' || entry.type == '1') line += " -> " + entry.link;
  return line;
}

}  // namespace image_testing
